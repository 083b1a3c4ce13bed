import path from 'node:path'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { jsonFile, writeCellFiles, writeInside } from './files.js'
import { dig, num, parseJsonLines, str } from './jsonl.js'
import { modulePath } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { startupFailure } from './startup.js'
import { bareOrigin } from './urls.js'

const PACKAGE = '@google/gemini-cli'

/**
 * `~/.gemini/settings.json` (harnesses.md §4.5): `selectedType: gemini-api-key` is required — with a
 * custom base URL and no selected type the CLI picks "gateway" auth and exits 41; folder trust off so
 * `--yolo` is not silently downgraded; no usage statistics (play.googleapis.com), telemetry or updates.
 */
export const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ...geminiQuietSettings('gemini-api-key'),
}

/**
 * The settings Gemini CLI and its fork Qwen Code share (same schema): the auth type, no usage
 * statistics, no telemetry, folder trust off (so `--yolo` is not silently downgraded).
 */
export function geminiQuietSettings(selectedType: string) {
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { auth: { selectedType }, folderTrust: { enabled: false } },
  }
}

/**
 * The headless command line of Gemini CLI and its fork Qwen Code (same flags): stream-json events,
 * `--yolo`, the model, the cell's own args, then the prompt with `-p`.
 */
export function geminiHeadlessArgs(ctx: Pick<AttemptContext, 'model' | 'prompt' | 'config'>): string[] {
  return ['--output-format', 'stream-json', '--yolo', '-m', ctx.model, ...ctx.config.args, '-p', ctx.prompt]
}

/** Endpoint variables: the Gemini SDK wants the bare origin and appends `/v1beta/models/<id>:…`. */
export function geminiEndpointEnv(ctx: Pick<AttemptContext, 'endpoint'>): Record<string, string> {
  return {
    GEMINI_API_KEY: ctx.endpoint.apiKey,
    GOOGLE_GEMINI_BASE_URL: bareOrigin(ctx.endpoint.origin),
  }
}

/** Gemini CLI (`@google/gemini-cli`): one JS bundle, `--output-format stream-json --yolo -p`. */
export const geminiCliAdapter: HarnessAdapter = {
  name: 'gemini-cli',
  ...npmLifecycle(
    {
      harness: 'gemini-cli',
      package: PACKAGE,
      resolveBin: (root) => modulePath(root, PACKAGE, 'bundle', 'gemini.js'),
    },
    { GEMINI_CLI_NO_RELAUNCH: 'true' },
  ),

  async prepare(installed, ctx) {
    await writeInside(ctx.home, '.gemini/settings.json', jsonFile(GEMINI_SETTINGS))
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      GEMINI_CLI_HOME: ctx.home,
      ...geminiEndpointEnv(ctx),
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_CLI_NO_RELAUNCH: 'true',
      // Machine-wide settings (/etc/gemini-cli) would otherwise apply to every attempt.
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.join(ctx.home, '.gemini', 'system-settings.json'),
      GEMINI_CLI_SYSTEM_DEFAULTS_PATH: path.join(ctx.home, '.gemini', 'system-defaults.json'),
    })
    return { ...launch(installed, geminiHeadlessArgs(ctx)), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    return parseGeminiOutput(run)
  },
}

/** Exit codes Gemini CLI documents for failures before any work (auth, input). */
const GEMINI_STARTUP_EXITS: Record<number, string> = {
  41: 'authentication or auth-method error',
  42: 'input error (invalid prompt or arguments)',
  52: 'configuration error',
}

/**
 * Gemini CLI's stream-json: `init`, `message` (assistant text arrives as `delta` chunks), `tool_use`,
 * `tool_result`, `error`, and `result` with `stats{input_tokens (cached included), output_tokens,
 * cached, tool_calls, models}`.
 */
export function parseGeminiOutput(run: RawRun): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const result = [...events].reverse().find((e) => e.type === 'result')
  // The answer is the assistant text after the last tool call (deltas concatenated).
  let current = ''
  let finalMessage: string | null = null
  for (const e of events) {
    if (e.type === 'tool_use' || e.type === 'tool_result') current = ''
    if (e.type === 'message' && e.role === 'assistant') {
      current += str(e.content) ?? ''
      if (current.trim() !== '') finalMessage = current.trim()
    }
  }
  const stats = dig(result, 'stats')
  const selfReport = result
    ? {
        input_tokens: num(dig(stats, 'input_tokens')),
        output_tokens: num(dig(stats, 'output_tokens')),
        cache_read_tokens: num(dig(stats, 'cached')),
        cache_write_tokens: null,
        cost_usd: null,
        requests: null,
        turns: null,
      }
    : null
  const errors = events
    .filter((e) => e.type === 'error' || (e.type === 'result' && e.status === 'error'))
    .map((e) => str(dig(e, 'error', 'message')) ?? str(e.message) ?? 'error')
  const stderrFirst = /Invalid auth method selected\.?|Please set an Auth method[^\n]*/.exec(run.stderr)?.[0]
  if (stderrFirst) errors.unshift(stderrFirst)
  const known = run.exitCode !== null ? GEMINI_STARTUP_EXITS[run.exitCode] : undefined
  if (known && errors.length === 0) errors.push(known)
  const usedModel = (num(dig(stats, 'input_tokens')) ?? 0) > 0
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: usedModel ? null : startupFailure(run, errors),
  }
}
