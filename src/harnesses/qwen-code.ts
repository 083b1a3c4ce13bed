import path from 'node:path'
import type { WireApi } from '../manifest/harness-names.js'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { jsonFile, writeCellFiles, writeInside } from './files.js'
import { geminiHeadlessArgs, geminiQuietSettings } from './gemini-cli.js'
import { ensureExecutable } from './install.js'
import { dig, num, parseJsonLines, str } from './jsonl.js'
import { hostTarget, modulePath, type NativeTarget } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { startupFailure } from './startup.js'
import { assistantMessageIds, streamJsonAnswer } from './stream-json.js'
import { bareOrigin, openaiBaseUrl } from './urls.js'

const PACKAGE = '@qwen-code/qwen-code'

/** Qwen's `security.auth.selectedType` per wire API (harnesses.md §3.5: all three verified). */
export function qwenAuthType(api: WireApi): string {
  if (api === 'anthropic') return 'anthropic'
  if (api === 'responses') return 'openai-responses'
  return 'openai'
}

/** `$QWEN_HOME/settings.json`: auth type, model, no updates, statistics or telemetry (Aliyun RUM), no folder trust. */
export function qwenSettings(ctx: Pick<AttemptContext, 'api' | 'model'>) {
  return {
    general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
    ...geminiQuietSettings(qwenAuthType(ctx.api)),
    model: { name: ctx.model },
  }
}

/** Endpoint variables: OPENAI_* at `<origin>/v1`, or ANTHROPIC_* at the bare origin. */
export function qwenEndpointEnv(
  ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model'>,
): Record<string, string> {
  if (ctx.api === 'anthropic') {
    return {
      ANTHROPIC_BASE_URL: bareOrigin(ctx.endpoint.origin),
      ANTHROPIC_API_KEY: ctx.endpoint.apiKey,
      ANTHROPIC_MODEL: ctx.model,
    }
  }
  return {
    OPENAI_BASE_URL: openaiBaseUrl(ctx.endpoint.origin),
    OPENAI_API_KEY: ctx.endpoint.apiKey,
    OPENAI_MODEL: ctx.model,
  }
}

/** Qwen ships its ripgrep without the execute bit; without it the CLI falls back to a slower JS grep. */
export function qwenRipgrep(root: string, t: NativeTarget): string {
  const plat = t.platform === 'win32' ? 'win32' : t.platform
  return modulePath(
    root,
    PACKAGE,
    'vendor',
    'ripgrep',
    `${t.arch}-${plat}`,
    t.platform === 'win32' ? 'rg.exe' : 'rg',
  )
}

/** Qwen Code (`@qwen-code/qwen-code`): plain Node, stream-json events shaped like Claude Code's. */
export const qwenCodeAdapter: HarnessAdapter = {
  name: 'qwen-code',
  ...npmLifecycle(
    {
      harness: 'qwen-code',
      package: PACKAGE,
      resolveBin: (root) => modulePath(root, PACKAGE, 'cli-entry.js'),
      afterInstall: (root) => ensureExecutable(qwenRipgrep(root, hostTarget())),
    },
    { QWEN_CODE_NO_RELAUNCH: 'true' },
  ),

  async prepare(installed, ctx) {
    await writeInside(ctx.home, '.qwen/settings.json', jsonFile(qwenSettings(ctx)))
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      QWEN_HOME: path.join(ctx.home, '.qwen'),
      ...qwenEndpointEnv(ctx),
      QWEN_CODE_NO_RELAUNCH: 'true',
    })
    return { ...launch(installed, geminiHeadlessArgs(ctx)), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    return parseQwenOutput(run)
  },
}

/**
 * Qwen's stream-json: `system/init`, `assistant` messages (each with `message.usage`), `user` tool
 * results, and a final `result` with `usage{input_tokens, output_tokens, cache_read_input_tokens}`,
 * `num_turns`, `is_error`.
 */
export function parseQwenOutput(run: RawRun): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const result = [...events].reverse().find((e) => e.type === 'result')
  const ids = assistantMessageIds(events)
  const finalMessage = streamJsonAnswer(events, result)
  const usage = dig(result, 'usage')
  const input = num(dig(usage, 'input_tokens'))
  const selfReport = result
    ? {
        input_tokens: input,
        output_tokens: num(dig(usage, 'output_tokens')),
        cache_read_tokens: num(dig(usage, 'cache_read_input_tokens')),
        cache_write_tokens: num(dig(usage, 'cache_creation_input_tokens')),
        cost_usd: null,
        requests: ids.size,
        turns: num(dig(result, 'num_turns')),
      }
    : null
  const isError = result !== undefined && dig(result, 'is_error') === true
  const errors = isError
    ? [str(dig(result, 'error', 'message')) ?? str(dig(result, 'result')) ?? 'error']
    : []
  return {
    finalMessage: isError ? null : finalMessage,
    trajectory: events,
    selfReport,
    startupError: (input ?? 0) > 0 ? null : startupFailure(run, errors),
  }
}
