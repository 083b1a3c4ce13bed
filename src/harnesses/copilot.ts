import { existsSync } from 'node:fs'
import { mkdir, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import type { SandboxBackend } from '../sandbox/contract.js'
import { runSandboxJob } from '../sandbox/job.js'
import { readBack } from '../sandbox/read-back.js'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv, isolationEnv } from './env.js'
import { sortedEntries, writeCellFiles } from './files.js'
import { dig, num, parseJsonLines, str, sumOrNull } from './jsonl.js'
import { firstExisting, hostTarget, modulePath, type NativeTarget } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { startupFailure } from './startup.js'
import { bareOrigin, openaiBaseUrl } from './urls.js'

const PACKAGE = '@github/copilot'
/** Inside the install folder: Copilot's unpacked app, made once at install time and shared by attempts. */
export const COPILOT_SHARED_CACHE = '.copilot-cache'

/**
 * Unpack Copilot's app once, into the install folder: the native binary unpacks about 235 MB into
 * `$XDG_CACHE_HOME/copilot/pkg/<platform>/<version>` (marker `.extraction-complete`) on its first run
 * in every fresh HOME; `--version` is enough to trigger it.
 */
export async function warmCopilotCache(root: string, bin: string, sandbox?: SandboxBackend): Promise<void> {
  const cache = path.join(root, COPILOT_SHARED_CACHE)
  const scratch = path.join(root, '.warm-home')
  await mkdir(scratch, { recursive: true })
  try {
    // Copilot's own code: it runs in the run's sandbox, with the install folder its only writable one.
    await runSandboxJob(
      sandbox,
      { writable: [root], readOnly: [] },
      [
        {
          command: bin,
          args: ['--version'],
          cwd: root,
          env: {
            ...isolationEnv({ home: scratch, tmp: scratch }),
            XDG_CACHE_HOME: cache,
            ...COPILOT_QUIET_ENV,
          },
        },
      ],
      { timeoutMs: 120_000, sweepHome: scratch },
    )
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/**
 * Link `<home>/.cache/copilot/pkg` to the shared unpacked app when the install made one, so an
 * attempt starts without unpacking. Returns whether the link was made.
 */
export async function linkCopilotCache(root: string, home: string): Promise<boolean> {
  const shared = path.join(root, COPILOT_SHARED_CACHE, 'copilot', 'pkg')
  if (!existsSync(shared)) return false
  const dir = path.join(home, '.cache', 'copilot')
  await mkdir(dir, { recursive: true })
  await symlink(shared, path.join(dir, 'pkg'), 'dir')
  return true
}

/** Offline BYOK mode: no GitHub auth, telemetry, web tools or auto-update (harnesses.md §4.6). */
export const COPILOT_QUIET_ENV = { COPILOT_OFFLINE: 'true', COPILOT_AUTO_UPDATE: 'false' } as const

/**
 * BYOK provider variables per wire API: OpenAI type at `<origin>/v1` (Chat Completions, or Responses
 * with COPILOT_PROVIDER_WIRE_API), Anthropic type at the bare origin.
 */
export function copilotProviderEnv(
  ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model'>,
): Record<string, string> {
  const anthropic = ctx.api === 'anthropic'
  return {
    COPILOT_PROVIDER_BASE_URL: anthropic
      ? bareOrigin(ctx.endpoint.origin)
      : openaiBaseUrl(ctx.endpoint.origin),
    COPILOT_PROVIDER_TYPE: anthropic ? 'anthropic' : 'openai',
    COPILOT_PROVIDER_API_KEY: ctx.endpoint.apiKey,
    COPILOT_MODEL: ctx.model,
    ...(ctx.api === 'responses' ? { COPILOT_PROVIDER_WIRE_API: 'responses' } : {}),
  }
}

/** The native binary from `@github/copilot-<platform>-<arch>` (npm-loader.js only spawns it). */
export function copilotBinary(root: string, t: NativeTarget): string {
  const plats = t.platform === 'linux' && t.musl ? ['linuxmusl', 'linux'] : [t.platform]
  const file = t.platform === 'win32' ? 'copilot.exe' : 'copilot'
  return firstExisting([
    ...plats.map((p) => modulePath(root, `@github/copilot-${p}-${t.arch}`, file)),
    modulePath(root, PACKAGE, 'npm-loader.js'),
  ])
}

/** Copilot CLI (`@github/copilot`) in BYOK offline mode; tokens come from its session folder. */
export const copilotAdapter: HarnessAdapter = {
  name: 'copilot',
  ...npmLifecycle(
    {
      harness: 'copilot',
      package: PACKAGE,
      resolveBin: (root) => copilotBinary(root, hostTarget()),
      afterInstall: (root, sandbox) => warmCopilotCache(root, copilotBinary(root, hostTarget()), sandbox),
    },
    { ...COPILOT_QUIET_ENV },
  ),

  async prepare(installed, ctx) {
    await linkCopilotCache(installed.root, ctx.home)
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      COPILOT_HOME: path.join(ctx.home, '.copilot'),
      ...copilotProviderEnv(ctx),
      ...COPILOT_QUIET_ENV,
    })
    const args = [
      '--allow-all',
      '--output-format',
      'json',
      '--model',
      ctx.model,
      '-C',
      ctx.workspace,
      '--disable-client-telemetry',
      '--no-auto-update',
      ...ctx.config.args,
      '-p',
      ctx.prompt,
    ]
    return { ...launch(installed, args), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    const sessionEvents = await readCopilotSessionEvents(run.home)
    return parseCopilotOutput(run, sessionEvents)
  },
}

/** Every `$COPILOT_HOME/session-state/<id>/events.jsonl` event of the attempt (empty when none). */
export async function readCopilotSessionEvents(home: string): Promise<Record<string, unknown>[]> {
  const dir = path.join(home, '.copilot', 'session-state')
  const out: Record<string, unknown>[] = []
  for (const s of await sortedEntries(dir)) {
    const text = await readBack(path.join(dir, s, 'events.jsonl'), home).catch(() => '')
    out.push(...parseJsonLines(text).events)
  }
  return out
}

/**
 * Copilot's stdout JSON lines carry the answer (`assistant.message`) but no token counts
 * (`result.usage` has only premium requests and durations); tokens come from the session's
 * `session.usage_record` events (one per model request), or `session.shutdown.modelMetrics` when
 * no usage record was written.
 */
export function parseCopilotOutput(run: RawRun, sessionEvents: Record<string, unknown>[]): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  let finalMessage: string | null = null
  for (const e of events) {
    if (e.type !== 'assistant.message') continue
    const text = str(dig(e, 'data', 'content'))
    if (text && text.trim() !== '') finalMessage = text.trim()
  }
  const records = sessionEvents
    .filter((e) => e.type === 'session.usage_record')
    .map((e) => dig(e, 'data', 'usage') ?? dig(e, 'data'))
  let selfReport: ParsedRun['selfReport'] = null
  if (records.length > 0) {
    selfReport = {
      input_tokens: sumOrNull(records.map((r) => num(dig(r, 'inputTokens')))),
      output_tokens: sumOrNull(records.map((r) => num(dig(r, 'outputTokens')))),
      cache_read_tokens: sumOrNull(records.map((r) => num(dig(r, 'cacheReadTokens')))),
      cache_write_tokens: sumOrNull(records.map((r) => num(dig(r, 'cacheWriteTokens')))),
      cost_usd: null,
      requests: records.length,
      turns: null,
    }
  } else {
    const shutdown = [...sessionEvents].reverse().find((e) => e.type === 'session.shutdown')
    const metrics =
      dig(shutdown, 'data', 'accountingSnapshot', 'modelMetrics') ?? dig(shutdown, 'data', 'modelMetrics')
    if (metrics && typeof metrics === 'object') {
      const ms = Object.values(metrics as Record<string, unknown>)
      selfReport = {
        input_tokens: sumOrNull(ms.map((m) => num(dig(m, 'usage', 'inputTokens')))),
        output_tokens: sumOrNull(ms.map((m) => num(dig(m, 'usage', 'outputTokens')))),
        cache_read_tokens: sumOrNull(ms.map((m) => num(dig(m, 'usage', 'cacheReadTokens')))),
        cache_write_tokens: sumOrNull(ms.map((m) => num(dig(m, 'usage', 'cacheWriteTokens')))),
        cost_usd: null,
        requests: sumOrNull(ms.map((m) => num(dig(m, 'requests', 'count')))),
        turns: null,
      }
    }
  }
  if (selfReport && selfReport.input_tokens === null && selfReport.output_tokens === null) selfReport = null
  const errors = events
    .filter((e) => e.type === 'session.error' || e.type === 'error')
    .map((e) => str(dig(e, 'data', 'message')) ?? str(e.message) ?? String(e.type))
  const usedModel = (selfReport?.input_tokens ?? 0) > 0
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: usedModel ? null : startupFailure(run, errors),
  }
}
