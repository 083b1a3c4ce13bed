import path from 'node:path'
import { stringify as toToml } from 'smol-toml'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { writeCellFiles, writeInside } from './files.js'
import { dig, num, parseJsonLines, str, sumOrNull } from './jsonl.js'
import { codexTriple, hostTarget, modulePath, type NativeTarget } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { startupFailure } from './startup.js'
import { openaiBaseUrl } from './urls.js'

export const CODEX_PROVIDER = 'hw'
/** Codex reads the provider key from the variable named by `env_key`. */
export const CODEX_KEY_ENV = 'HW_API_KEY'
const PACKAGE = '@openai/codex'

/**
 * `$CODEX_HOME/config.toml` (harnesses.md §4.3): a Responses provider at `<origin>/v1`, approvals
 * never asked, no sandbox (the attempt runs in its own workspace), no update check, no analytics or
 * feedback, plugin/app sync off (it contacts github.com and chatgpt.com otherwise), no client retries.
 */
export function codexConfig(ctx: Pick<AttemptContext, 'endpoint' | 'model'>) {
  return {
    model: ctx.model,
    model_provider: CODEX_PROVIDER,
    approval_policy: 'never',
    sandbox_mode: 'danger-full-access',
    check_for_update_on_startup: false,
    model_providers: {
      [CODEX_PROVIDER]: {
        name: 'Harness Watch route',
        base_url: openaiBaseUrl(ctx.endpoint.origin),
        env_key: CODEX_KEY_ENV,
        wire_api: 'responses',
        request_max_retries: 0,
        stream_max_retries: 0,
      },
    },
    analytics: { enabled: false },
    feedback: { enabled: false },
    features: { plugins: false, remote_plugin: false, apps: false },
  }
}

/** The native Codex binary inside the npm-alias optional dependency `@openai/codex-<platform>-<arch>`. */
export function codexBinary(root: string, t: NativeTarget): string {
  const triple = codexTriple(t) ?? `${t.platform}-${t.arch}`
  const pkg = `@openai/codex-${t.platform}-${t.arch}`
  return modulePath(root, pkg, 'vendor', triple, 'bin', t.platform === 'win32' ? 'codex.exe' : 'codex')
}

/**
 * Codex CLI (`@openai/codex`): the native binary is started directly (as bin/codex.js would, with its
 * CODEX_MANAGED_BY_NPM marker), `codex exec --json` with stdin closed — an open stdin is appended to
 * the prompt.
 */
export const codexAdapter: HarnessAdapter = {
  name: 'codex',
  ...npmLifecycle({
    harness: 'codex',
    package: PACKAGE,
    resolveBin: (root) => codexBinary(root, hostTarget()),
  }),

  async prepare(installed, ctx) {
    const codexHome = path.join(ctx.home, '.codex')
    await writeInside(ctx.home, '.codex/config.toml', `${toToml(codexConfig(ctx))}\n`)
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      CODEX_HOME: codexHome,
      [CODEX_KEY_ENV]: ctx.endpoint.apiKey,
      CODEX_MANAGED_BY_NPM: '1',
      CODEX_MANAGED_PACKAGE_ROOT: modulePath(installed.root, PACKAGE),
    })
    const args = [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '-C',
      ctx.workspace,
      ...ctx.config.args,
      ctx.prompt,
    ]
    return { ...launch(installed, args), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    return parseCodexOutput(run)
  },
}

/**
 * `codex exec --json` events: `item.completed` items (`agent_message` text, `command_execution`,
 * and `error` items — the unknown-model warning is one, and is not fatal), `turn.completed.usage`
 * {input_tokens (cached included), cached_input_tokens, cache_write_input_tokens, output_tokens},
 * `turn.failed` / `error` for failures.
 */
export function parseCodexOutput(run: RawRun): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const turns = events.filter((e) => e.type === 'turn.completed')
  const usages = turns.map((e) => dig(e, 'usage'))
  let finalMessage: string | null = null
  for (const e of events) {
    if (e.type === 'item.completed' && dig(e, 'item', 'type') === 'agent_message') {
      const text = str(dig(e, 'item', 'text'))
      if (text && text.trim() !== '') finalMessage = text.trim()
    }
  }
  const errors = events
    .filter((e) => e.type === 'turn.failed' || e.type === 'error')
    .map((e) => str(dig(e, 'error', 'message')) ?? str(dig(e, 'message')) ?? String(e.type))
  const selfReport =
    turns.length === 0
      ? null
      : {
          input_tokens: sumOrNull(usages.map((u) => num(dig(u, 'input_tokens')))),
          output_tokens: sumOrNull(usages.map((u) => num(dig(u, 'output_tokens')))),
          cache_read_tokens: sumOrNull(usages.map((u) => num(dig(u, 'cached_input_tokens')))),
          cache_write_tokens: sumOrNull(usages.map((u) => num(dig(u, 'cache_write_input_tokens')))),
          cost_usd: null,
          requests: null,
          turns: turns.length,
        }
  const usedModel = usages.some((u) => (num(dig(u, 'input_tokens')) ?? 0) > 0)
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: usedModel ? null : startupFailure(run, errors),
  }
}
