import path from 'node:path'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { jsonFile, writeCellFiles, writeInside } from './files.js'
import { dig, inputWithCache, num, parseJsonLines, str } from './jsonl.js'
import { firstExisting, hostTarget, modulePath, type NativeTarget } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { startupFailure } from './startup.js'
import { assistantMessageIds, streamJsonAnswer } from './stream-json.js'
import { bareOrigin } from './urls.js'

const PACKAGE = '@anthropic-ai/claude-code'

/** Switches that stop Claude Code's non-essential traffic (feature flags, metrics, updates, error reports). */
export const CLAUDE_QUIET_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_BUG_COMMAND: '1',
  CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
} as const

/** `$CLAUDE_CONFIG_DIR/settings.json`: permissions bypassed, no co-author trailer in commits. */
export const CLAUDE_SETTINGS = {
  permissions: { defaultMode: 'bypassPermissions' },
  includeCoAuthoredBy: false,
}

/**
 * The endpoint and model variables (harnesses.md §4.4): the Anthropic SDK wants the bare origin; every
 * model alias (small/fast, haiku, sonnet, opus) names the declared model, so no background call asks
 * the route for a model it does not serve.
 */
export function claudeEndpointEnv(ctx: Pick<AttemptContext, 'endpoint' | 'model'>): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: bareOrigin(ctx.endpoint.origin),
    ANTHROPIC_API_KEY: ctx.endpoint.apiKey,
    ANTHROPIC_MODEL: ctx.model,
    ANTHROPIC_SMALL_FAST_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: ctx.model,
  }
}

/** The native binary from `@anthropic-ai/claude-code-<platform>-<arch>[-musl]` (postinstall only links it). */
export function claudeBinary(root: string, t: NativeTarget): string {
  const base = `@anthropic-ai/claude-code-${t.platform}-${t.arch}`
  const file = t.platform === 'win32' ? 'claude.exe' : 'claude'
  const pkgs = t.musl ? [`${base}-musl`, base] : [base]
  return firstExisting([
    ...pkgs.map((p) => modulePath(root, p, file)),
    modulePath(root, PACKAGE, 'bin', 'claude.exe'),
  ])
}

/** True when this process runs as root: `--dangerously-skip-permissions` then needs IS_SANDBOX=1. */
export function runningAsRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0
}

/** Claude Code (`@anthropic-ai/claude-code`): native binary, `-p --output-format stream-json --verbose`. */
export const claudeCodeAdapter: HarnessAdapter = {
  name: 'claude-code',
  ...npmLifecycle(
    { harness: 'claude-code', package: PACKAGE, resolveBin: (root) => claudeBinary(root, hostTarget()) },
    { ...CLAUDE_QUIET_ENV },
  ),

  async prepare(installed, ctx) {
    await writeInside(ctx.home, '.claude/settings.json', jsonFile(CLAUDE_SETTINGS))
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      CLAUDE_CONFIG_DIR: path.join(ctx.home, '.claude'),
      ...claudeEndpointEnv(ctx),
      ...(runningAsRoot() ? { IS_SANDBOX: '1' } : {}),
      ...CLAUDE_QUIET_ENV,
    })
    const args = [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
      '--model',
      ctx.model,
      ...ctx.config.args,
      ctx.prompt,
    ]
    return { ...launch(installed, args), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    return parseClaudeOutput(run)
  },
}

/**
 * Claude Code's stream-json: `system/init`, `assistant` events (one per content block; blocks of one
 * model response share `message.id`), `user` tool results, and a final `result` with `usage`
 * {input_tokens (fresh), cache_read_input_tokens, cache_creation_input_tokens, output_tokens},
 * `total_cost_usd` (from its built-in price list; null here when every model was priced on an
 * "unknown" basis), `num_turns`, `is_error`.
 */
export function parseClaudeOutput(run: RawRun): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const result = [...events].reverse().find((e) => e.type === 'result')
  const assistantIds = assistantMessageIds(events)
  const finalMessage = streamJsonAnswer(events, result)
  const usage = dig(result, 'usage')
  const modelUsage = dig(result, 'modelUsage')
  const bases =
    modelUsage && typeof modelUsage === 'object'
      ? Object.values(modelUsage as Record<string, unknown>).map((m) => str(dig(m, 'costBasis')))
      : []
  const unknownPrices = bases.length > 0 && bases.every((b) => b === 'unknown')
  const fresh = num(dig(usage, 'input_tokens'))
  const cacheRead = num(dig(usage, 'cache_read_input_tokens'))
  const cacheWrite = num(dig(usage, 'cache_creation_input_tokens'))
  const selfReport = result
    ? {
        // Anthropic reports fresh input apart from cache reads/writes; the self-report counts all input.
        input_tokens: inputWithCache(fresh, cacheRead, cacheWrite),
        output_tokens: num(dig(usage, 'output_tokens')),
        cache_read_tokens: cacheRead,
        cache_write_tokens: cacheWrite,
        cost_usd: unknownPrices ? null : num(dig(result, 'total_cost_usd')),
        requests: assistantIds.size,
        turns: num(dig(result, 'num_turns')),
      }
    : null
  const errors: string[] = []
  if (result && dig(result, 'is_error') === true)
    errors.push(str(dig(result, 'result')) ?? String(dig(result, 'subtype')))
  const usedModel = (fresh ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0) > 0
  return {
    finalMessage: result && dig(result, 'is_error') === true ? null : finalMessage,
    trajectory: events,
    selfReport,
    startupError: usedModel ? null : startupFailure(run, errors),
  }
}
