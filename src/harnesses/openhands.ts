import path from 'node:path'
import { stringify as toToml } from 'smol-toml'
import type { SandboxBackend } from '../sandbox/contract.js'
import { readBack } from '../sandbox/read-back.js'
import type {
  AttemptContext,
  HarnessAdapter,
  InstallContext,
  InstalledHarness,
  ParsedRun,
  RawRun,
} from './contract.js'
import { attemptEnv } from './env.js'
import { sortedEntries, writeCellFiles, writeInside } from './files.js'
import { installPip } from './install.js'
import { dig, num, str, sumOrNull } from './jsonl.js'
import { LITELLM_QUIET_ENV, litellmRoute } from './litellm.js'
import { probeCliVersion } from './probe.js'
import { venvBin } from './python-harness.js'
import { startupFailure } from './startup.js'

/**
 * Two generations of OpenHands, told apart by the pinned version:
 * - **CLI ≥ 1** (`pip install openhands`): `openhands --headless --json --override-with-envs -t <task>`;
 *   the model comes from LLM_MODEL / LLM_BASE_URL / LLM_API_KEY (ignored without
 *   `--override-with-envs`); state in `~/.openhands` (conversations/<id>/base_state.json holds usage).
 * - **0.x** (`pip install openhands-ai`): `python -m openhands.core.main -t <task> --config-file
 *   <config.toml>` with the local `cli` runtime and a saved trajectory.
 */
export function openhandsGeneration(version: string): 'cli' | 'legacy' {
  const major = Number.parseInt(version.replace(/^v/, ''), 10)
  return Number.isFinite(major) && major >= 1 ? 'cli' : 'legacy'
}

/** Where the 0.x runtime saves its trajectory (`save_trajectory_path`). */
export function openhandsTrajectoryPath(ctx: Pick<AttemptContext, 'tmp'>): string {
  return path.join(ctx.tmp, 'openhands-trajectory.json')
}

/** The model variables both generations read (LiteLLM naming; see litellm.ts). */
export function openhandsLlmEnv(
  ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model'>,
): Record<string, string> {
  const route = litellmRoute(ctx)
  return { LLM_MODEL: route.model, LLM_BASE_URL: route.baseUrl, LLM_API_KEY: ctx.endpoint.apiKey }
}

/**
 * config.toml of the 0.x generation: the local `cli` runtime on the attempt workspace (no Docker),
 * local file store inside the home, trajectory saved for parsing, the LLM at the attempt endpoint.
 */
export function openhandsLegacyConfig(
  ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model' | 'home' | 'tmp' | 'workspace'>,
) {
  const route = litellmRoute(ctx)
  return {
    core: {
      runtime: 'cli',
      workspace_base: ctx.workspace,
      file_store: 'local',
      file_store_path: path.join(ctx.home, '.openhands', 'file_store'),
      cache_dir: path.join(ctx.tmp, 'openhands-cache'),
      save_trajectory_path: openhandsTrajectoryPath(ctx),
    },
    llm: { model: route.model, base_url: route.baseUrl, api_key: ctx.endpoint.apiKey },
  }
}

/** OpenHands: the CLI ≥ 1 headless mode, or the 0.x `openhands.core.main` entry point. */
export const openhandsAdapter: HarnessAdapter = {
  name: 'openhands',

  install(version: string, ctx: InstallContext) {
    return openhandsGeneration(version) === 'cli'
      ? installPip({ harness: 'openhands', package: 'openhands', script: 'openhands' }, version, ctx)
      : installPip({ harness: 'openhands', package: 'openhands-ai', script: 'python' }, version, ctx)
  },

  async probeVersion(installed: InstalledHarness, sandbox?: SandboxBackend) {
    const box = { sandbox, readOnly: [installed.root] }
    if (openhandsGeneration(installed.version) === 'cli') {
      return probeCliVersion(installed.bin, [], {}, undefined, box)
    }
    const code = ['-c', 'import openhands; print(openhands.__version__)']
    return probeCliVersion(installed.bin, code, {}, [], box)
  },

  async prepare(installed, ctx) {
    const legacy = openhandsGeneration(installed.version) === 'legacy'
    let configFile: string | null = null
    if (legacy) {
      configFile = await writeInside(
        ctx.home,
        '.openhands/config.toml',
        `${toToml(openhandsLegacyConfig(ctx))}\n`,
      )
    }
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(
      ctx,
      { ...openhandsLlmEnv(ctx), ...LITELLM_QUIET_ENV, ...(legacy ? { RUNTIME: 'cli' } : {}) },
      { extraPath: [venvBin(installed)] },
    )
    const args = legacy
      ? ['-m', 'openhands.core.main', '--config-file', configFile!, ...ctx.config.args, '-t', ctx.prompt]
      : ['--headless', '--json', '--override-with-envs', ...ctx.config.args, '-t', ctx.prompt]
    return { command: installed.bin, args, env, cwd: ctx.workspace }
  },

  async parse(run, ctx) {
    const trajectoryText = await readBack(openhandsTrajectoryPath(ctx), ctx.tmp).catch(() => null)
    if (trajectoryText !== null) {
      let events: unknown = null
      try {
        events = JSON.parse(trajectoryText)
      } catch {
        events = null
      }
      return parseOpenhandsLegacy(run, Array.isArray(events) ? events : [])
    }
    return parseOpenhandsCli(run, await readOpenhandsStates(run.home))
  },
}

/** Every `~/.openhands/conversations/<id>/base_state.json` of the attempt (CLI ≥ 1). */
export async function readOpenhandsStates(home: string): Promise<unknown[]> {
  const dir = path.join(home, '.openhands', 'conversations')
  const states: unknown[] = []
  for (const id of await sortedEntries(dir)) {
    const text = await readBack(path.join(dir, id, 'base_state.json'), home).catch(() => null)
    if (text === null) continue
    try {
      states.push(JSON.parse(text))
    } catch {
      // a state being written when the run was killed
    }
  }
  return states
}

/**
 * `--headless --json` output: each event is printed as a `--JSON Event--` line followed by the
 * event's pretty-printed JSON (SDK events: MessageEvent with `llm_message`, ActionEvent with
 * `action.kind`, ObservationEvent, AgentErrorEvent…). Log lines in between are skipped.
 */
export function splitOpenhandsJsonEvents(stdout: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = []
  for (const chunk of stdout.split(/^--JSON Event--\s*$/m).slice(1)) {
    const start = chunk.indexOf('{')
    if (start < 0) continue
    // The pretty JSON ends at the last closing brace before any trailing log text.
    for (let end = chunk.lastIndexOf('}'); end > start; end = chunk.lastIndexOf('}', end - 1)) {
      try {
        const v: unknown = JSON.parse(chunk.slice(start, end + 1))
        if (v && typeof v === 'object' && !Array.isArray(v)) events.push(v as Record<string, unknown>)
        break
      } catch {
        // keep shrinking
      }
    }
  }
  return events
}

/**
 * CLI ≥ 1: the answer is the last agent message (or FinishAction message); usage is
 * `stats.usage_to_metrics.<usage_id>` {accumulated_token_usage {prompt_tokens, completion_tokens,
 * cache_read_tokens, cache_write_tokens}, accumulated_cost, token_usages[] (one per request)}.
 */
export function parseOpenhandsCli(run: RawRun, states: unknown[]): ParsedRun {
  const events = splitOpenhandsJsonEvents(run.stdout)
  let finalMessage: string | null = null
  for (const e of events) {
    const finish = dig(e, 'action', 'kind') === 'FinishAction' ? str(dig(e, 'action', 'message')) : null
    const fromAgent = dig(e, 'source') === 'agent' ? textParts(dig(e, 'llm_message', 'content')) : null
    const text = finish ?? fromAgent
    if (text && text.trim() !== '') finalMessage = text.trim()
  }
  const metrics = states.flatMap((s) => {
    const m = dig(s, 'stats', 'usage_to_metrics')
    return m && typeof m === 'object' ? Object.values(m as Record<string, unknown>) : []
  })
  const usage = metrics.map((m) => dig(m, 'accumulated_token_usage'))
  const requests = metrics.reduce<number | null>((acc, m) => {
    const list = dig(m, 'token_usages')
    return Array.isArray(list) ? (acc ?? 0) + list.length : acc
  }, null)
  const selfReport =
    metrics.length === 0
      ? null
      : {
          input_tokens: sumOrNull(usage.map((u) => num(dig(u, 'prompt_tokens')))),
          output_tokens: sumOrNull(usage.map((u) => num(dig(u, 'completion_tokens')))),
          cache_read_tokens: sumOrNull(usage.map((u) => num(dig(u, 'cache_read_tokens')))),
          cache_write_tokens: sumOrNull(usage.map((u) => num(dig(u, 'cache_write_tokens')))),
          cost_usd: positive(sumOrNull(metrics.map((m) => num(dig(m, 'accumulated_cost'))))),
          requests,
          turns: null,
        }
  const errors = events
    .filter((e) => /Error/.test(String(dig(e, 'kind') ?? '')) || dig(e, 'error') !== undefined)
    .map((e) => str(dig(e, 'error')) ?? String(dig(e, 'kind')))
  return openhandsParsed(run, events, finalMessage, selfReport, errors)
}

/**
 * 0.x trajectory (`save_trajectory_path`): a JSON array of events with `source`, `action` /
 * `observation`, `args`, and cumulative `llm_metrics` {accumulated_cost, accumulated_token_usage}.
 */
export function parseOpenhandsLegacy(run: RawRun, events: unknown[]): ParsedRun {
  let finalMessage: string | null = null
  let metrics: unknown = null
  for (const e of events) {
    if (dig(e, 'source') === 'agent') {
      const action = dig(e, 'action')
      const text =
        action === 'finish'
          ? (str(dig(e, 'args', 'final_thought')) ?? str(dig(e, 'message')))
          : action === 'message'
            ? str(dig(e, 'args', 'content'))
            : null
      if (text && text.trim() !== '') finalMessage = text.trim()
    }
    if (dig(e, 'llm_metrics') !== undefined) metrics = dig(e, 'llm_metrics')
  }
  const u = dig(metrics, 'accumulated_token_usage')
  const perRequest = dig(metrics, 'token_usages')
  const selfReport = metrics
    ? {
        input_tokens: num(dig(u, 'prompt_tokens')),
        output_tokens: num(dig(u, 'completion_tokens')),
        cache_read_tokens: num(dig(u, 'cache_read_tokens')),
        cache_write_tokens: num(dig(u, 'cache_write_tokens')),
        cost_usd: positive(num(dig(metrics, 'accumulated_cost'))),
        requests: Array.isArray(perRequest) ? perRequest.length : null,
        turns: null,
      }
    : null
  const errors = events
    .filter((e) => dig(e, 'observation') === 'error')
    .map((e) => str(dig(e, 'content')) ?? 'error')
  return openhandsParsed(run, events, finalMessage, selfReport, errors)
}

/** Both generations' result: a startup error only when the usage shows no input token at all. */
function openhandsParsed(
  run: RawRun,
  events: unknown[],
  finalMessage: string | null,
  selfReport: ParsedRun['selfReport'],
  errors: string[],
): ParsedRun {
  const used = (selfReport?.input_tokens ?? 0) > 0
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: used ? null : startupFailure(run, errors),
  }
}

function textParts(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return null
  const t = content
    .filter((c) => dig(c, 'type') === 'text')
    .map((c) => str(dig(c, 'text')) ?? '')
    .join('\n')
  return t.trim() === '' ? null : t
}

/** LiteLLM prices unknown ids at zero: a zero is "unpriced", not free. */
function positive(n: number | null): number | null {
  return n !== null && n > 0 ? n : null
}
