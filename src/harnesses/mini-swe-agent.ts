import path from 'node:path'
import { stringify as toYaml } from 'yaml'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { readJsonOrNull, writeCellFiles, writeInside } from './files.js'
import { dig, num, str, sumOrNull } from './jsonl.js'
import { LITELLM_QUIET_ENV, litellmRoute } from './litellm.js'
import { pipLifecycle, venvBin } from './python-harness.js'
import { startupFailure } from './startup.js'

/** Where the attempt's trajectory is written (`-o`), inside the attempt's TMPDIR. */
export function miniTrajectoryPath(ctx: Pick<AttemptContext, 'tmp'>): string {
  return path.join(ctx.tmp, 'mini.traj.json')
}

/** mini-swe-agent's global config folder inside the isolated home (`MSWEA_GLOBAL_CONFIG_DIR`). */
export const MINI_CONFIG_DIR = '.config/mini-swe-agent'

/**
 * The override config layered on the built-in `mini.yaml` (mini-swe-agent ≥ 2 merges repeated `-c`):
 * the LiteLLM model at the attempt endpoint, cost tracking that tolerates an unpriced model id, yolo
 * mode without the exit confirmation, and no step or cost limit of its own (the proxy enforces the
 * attempt budget; an interactive limit prompt would otherwise wait on a closed stdin).
 */
export function miniOverrideConfig(ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model'>) {
  const route = litellmRoute(ctx)
  return {
    model: {
      model_name: route.model,
      ...(ctx.api === 'responses' ? { model_class: 'litellm_response' } : {}),
      model_kwargs: { api_base: route.baseUrl },
      cost_tracking: 'ignore_errors',
    },
    agent: { mode: 'yolo', confirm_exit: false, step_limit: 0, cost_limit: 0 },
  }
}

/**
 * mini-swe-agent (`pip install mini-swe-agent`): `mini -c mini.yaml -c <override> -t <task> -m <model>
 * --yolo --exit-immediately -o <trajectory>`, bash-only, LiteLLM for the model.
 */
export const miniSweAgentAdapter: HarnessAdapter = {
  name: 'mini-swe-agent',
  ...pipLifecycle(
    { harness: 'mini-swe-agent', package: 'mini-swe-agent', script: 'mini' },
    { MSWEA_CONFIGURED: 'true', MSWEA_SILENT_STARTUP: '1', ...LITELLM_QUIET_ENV },
  ),

  async prepare(installed, ctx) {
    const configDir = path.join(ctx.home, MINI_CONFIG_DIR)
    const override = await writeInside(
      ctx.home,
      `${MINI_CONFIG_DIR}/hw.yaml`,
      toYaml(miniOverrideConfig(ctx)),
    )
    await writeCellFiles(ctx.home, ctx.config.files)
    const route = litellmRoute(ctx)
    const env = attemptEnv(
      ctx,
      {
        MSWEA_GLOBAL_CONFIG_DIR: configDir,
        // Without it the first run asks for a default model and key on stdin.
        MSWEA_CONFIGURED: 'true',
        MSWEA_COST_TRACKING: 'ignore_errors',
        MSWEA_SILENT_STARTUP: '1',
        MSWEA_VISUAL_MODE_DEFAULT: 'false',
        [route.keyEnv]: ctx.endpoint.apiKey,
        ...LITELLM_QUIET_ENV,
      },
      { extraPath: [venvBin(installed)] },
    )
    const args = [
      '-c',
      'mini.yaml',
      '-c',
      override,
      '-m',
      route.model,
      '--yolo',
      '--exit-immediately',
      '-o',
      miniTrajectoryPath(ctx),
      ...ctx.config.args,
      '-t',
      ctx.prompt,
    ]
    return { command: installed.bin, args, env, cwd: ctx.workspace }
  },

  async parse(run, ctx) {
    return parseMiniTrajectory(run, await readJsonOrNull(miniTrajectoryPath(ctx), ctx.tmp))
  },
}

/**
 * A mini-swe-agent trajectory (`trajectory_format: mini-swe-agent-1…`): `messages` (assistant messages
 * carry `extra.response.usage` {prompt_tokens, completion_tokens, prompt_tokens_details.cached_tokens}),
 * `info.exit_status` / `info.submission`, and `info.model_stats` {instance_cost, api_calls} where the
 * version writes it.
 */
export function parseMiniTrajectory(run: RawRun, trajectory: unknown): ParsedRun {
  const messages = dig(trajectory, 'messages')
  const list = Array.isArray(messages) ? (messages as unknown[]) : []
  const assistant = list.filter((m) => dig(m, 'role') === 'assistant')
  const usages = assistant.map((m) => dig(m, 'extra', 'response', 'usage'))
  const submission = str(dig(trajectory, 'info', 'submission'))?.trim() || null
  let lastText: string | null = null
  for (const m of assistant) {
    const c = str(dig(m, 'content'))
    if (c && c.trim() !== '') lastText = c.trim()
  }
  const apiCalls = num(dig(trajectory, 'info', 'model_stats', 'api_calls'))
  const cost = num(dig(trajectory, 'info', 'model_stats', 'instance_cost'))
  const selfReport =
    assistant.length === 0 && apiCalls === null
      ? null
      : {
          input_tokens: sumOrNull(usages.map((u) => num(dig(u, 'prompt_tokens')))),
          output_tokens: sumOrNull(usages.map((u) => num(dig(u, 'completion_tokens')))),
          cache_read_tokens: sumOrNull(
            usages.map((u) => num(dig(u, 'prompt_tokens_details', 'cached_tokens'))),
          ),
          cache_write_tokens: null,
          // LiteLLM prices from its own map; cost_tracking=ignore_errors turns an unknown id into 0.
          cost_usd: cost !== null && cost > 0 ? cost : null,
          requests: apiCalls ?? assistant.length,
          turns: assistant.length,
        }
  const exitStatus = str(dig(trajectory, 'info', 'exit_status'))
  const errors = exitStatus && exitStatus !== 'Submitted' && assistant.length === 0 ? [exitStatus] : []
  return {
    finalMessage: submission ?? lastText,
    trajectory: list,
    selfReport,
    startupError: assistant.length > 0 ? null : startupFailure(run, errors),
  }
}
