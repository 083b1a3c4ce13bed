import path from 'node:path'
import { stringify as toYaml } from 'yaml'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { readJsonOrNull, writeCellFiles, writeInside } from './files.js'
import { dig, num, str } from './jsonl.js'
import { pipLifecycle, venvBin } from './python-harness.js'
import { startupFailure } from './startup.js'
import { openaiBaseUrl } from './urls.js'

/** The `--usage-file` report of the one-shot run, inside the attempt's TMPDIR. */
export function hermesUsagePath(ctx: Pick<AttemptContext, 'tmp'>): string {
  return path.join(ctx.tmp, 'hermes-usage.json')
}

/**
 * `$HERMES_HOME/config.yaml`: the `custom` provider (Hermes's name for any OpenAI-compatible endpoint)
 * at `<origin>/v1` with the declared model as default. The key stays in the environment
 * (OPENAI_API_KEY), as Hermes keeps secrets out of config.yaml.
 */
export function hermesConfig(ctx: Pick<AttemptContext, 'endpoint' | 'model'>) {
  return {
    model: { provider: 'custom', base_url: openaiBaseUrl(ctx.endpoint.origin), default: ctx.model },
  }
}

/**
 * Hermes Agent (Nous Research, `pip install hermes-agent`): one-shot mode `hermes -z <prompt>` prints
 * only the final answer, bypasses approvals, and writes a JSON usage report with `--usage-file`.
 */
export const hermesAdapter: HarnessAdapter = {
  name: 'hermes',
  ...pipLifecycle({ harness: 'hermes', package: 'hermes-agent', script: 'hermes' }),

  async prepare(installed, ctx) {
    const hermesHome = path.join(ctx.home, '.hermes')
    await writeInside(ctx.home, '.hermes/config.yaml', toYaml(hermesConfig(ctx)))
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(
      ctx,
      {
        HERMES_HOME: hermesHome,
        OPENAI_BASE_URL: openaiBaseUrl(ctx.endpoint.origin),
        OPENAI_API_KEY: ctx.endpoint.apiKey,
        // One-shot mode sets these itself; set here too so nothing can wait on an approval prompt.
        HERMES_YOLO_MODE: '1',
        HERMES_ACCEPT_HOOKS: '1',
      },
      { extraPath: [venvBin(installed)] },
    )
    const args = [
      '--model',
      ctx.model,
      '--provider',
      'custom',
      '--yolo',
      '--usage-file',
      hermesUsagePath(ctx),
      ...ctx.config.args,
      '-z',
      ctx.prompt,
    ]
    return { command: installed.bin, args, env, cwd: ctx.workspace }
  },

  async parse(run, ctx) {
    return parseHermesRun(run, await readJsonOrNull(hermesUsagePath(ctx), ctx.tmp))
  },
}

/** Hermes's documented one-shot exit codes: 0 completed, 1 no text, 2 failed or partial, 130 interrupted. */
const HERMES_EXITS: Record<number, string> = {
  1: 'no answer text',
  2: 'turn failed or stopped partway',
  130: 'interrupted',
}

/**
 * A one-shot run: stdout is the final answer; the usage report holds main-loop `input_tokens`,
 * `output_tokens`, `cache_read_tokens`, `cache_write_tokens`, `api_calls`, `estimated_cost_usd`
 * (+ `cost_status`), `failed`/`failure`, and `total_including_auxiliary` / `auxiliary` for side
 * tasks such as title generation.
 */
export function parseHermesRun(run: RawRun, report: unknown): ParsedRun {
  const answer = run.stdout.trim()
  const aux = dig(report, 'auxiliary')
  const plus = (a: number | null, b: number | null) => (a === null ? null : a + (b ?? 0))
  const calls = num(dig(report, 'total_including_auxiliary', 'api_calls')) ?? num(dig(report, 'api_calls'))
  const costStatus = str(dig(report, 'cost_status'))
  const selfReport = report
    ? {
        input_tokens: plus(num(dig(report, 'input_tokens')), num(dig(aux, 'input_tokens'))),
        output_tokens: plus(num(dig(report, 'output_tokens')), num(dig(aux, 'output_tokens'))),
        cache_read_tokens: plus(num(dig(report, 'cache_read_tokens')), num(dig(aux, 'cache_read_tokens'))),
        cache_write_tokens: plus(num(dig(report, 'cache_write_tokens')), num(dig(aux, 'cache_write_tokens'))),
        cost_usd:
          costStatus && /unknown|unpriced|unavailable/i.test(costStatus)
            ? null
            : (num(dig(report, 'total_including_auxiliary', 'estimated_cost_usd')) ??
              num(dig(report, 'estimated_cost_usd'))),
        requests: calls,
        turns: null,
      }
    : null
  const failure = str(dig(report, 'failure'))
  const known = run.exitCode !== null ? HERMES_EXITS[run.exitCode] : undefined
  const errors = [failure, known].filter((m): m is string => !!m)
  const trajectory: unknown[] = []
  if (report) trajectory.push({ type: 'usage', ...(report as Record<string, unknown>) })
  if (answer) trajectory.push({ type: 'final', text: answer })
  return {
    finalMessage: run.exitCode === 0 && answer ? answer : null,
    trajectory,
    selfReport,
    startupError: (calls ?? 0) > 0 ? null : startupFailure(run, errors),
  }
}
