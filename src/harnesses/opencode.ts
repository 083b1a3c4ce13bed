import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { WireApi } from '../manifest/harness-names.js'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { jsonFile, writeCellFiles, writeInside } from './files.js'
import { dig, inputWithCache, num, parseJsonLines, str, sumOrNull } from './jsonl.js'
import { firstExisting, hostTarget, modulePath, type NativeTarget } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { pricesPerMtok } from './prices.js'
import { startupFailure } from './startup.js'
import { openaiBaseUrl } from './urls.js'

/** Provider id in opencode.json; the only enabled provider, so stored vendor logins never apply (F14). */
export const OPENCODE_PROVIDER = 'hw'
/** The variable opencode.json reads the per-attempt key from (`{env:HW_API_KEY}`): the key stays out of files. */
export const OPENCODE_KEY_ENV = 'HW_API_KEY'
const PACKAGE = 'opencode-ai'

/** Network-only switches (harnesses.md §4.1); PROJECT_CONFIG and CLAUDE_CODE are deliberately not set. */
export const OPENCODE_QUIET_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_SHARE: '1',
} as const

/** The bundled AI SDK package per wire API (all bundled: nothing is fetched). */
export function opencodeSdk(api: WireApi): string {
  if (api === 'anthropic') return '@ai-sdk/anthropic'
  if (api === 'responses') return '@ai-sdk/openai'
  return '@ai-sdk/openai-compatible'
}

/**
 * opencode.json for one attempt: a single provider at the attempt endpoint (`<origin>/v1`: the AI SDK
 * clients, Anthropic's included, append only the route), the declared model as main and small model (so
 * the title call stays on the route), permissions allowed, autoupdate and sharing off.
 */
export function opencodeConfig(ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model' | 'prices'>) {
  const p = pricesPerMtok(ctx.prices)
  const ref = `${OPENCODE_PROVIDER}/${ctx.model}`
  return {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: ref,
    small_model: ref,
    enabled_providers: [OPENCODE_PROVIDER],
    permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: opencodeSdk(ctx.api),
        name: 'Harness Watch route',
        options: { baseURL: openaiBaseUrl(ctx.endpoint.origin), apiKey: `{env:${OPENCODE_KEY_ENV}}` },
        models: {
          [ctx.model]: {
            name: ctx.model,
            tool_call: true,
            limit: { context: 200000, output: 8192 },
            cost: { input: p.input, output: p.output, cache_read: p.cacheRead, cache_write: p.cacheWrite },
          },
        },
      },
    },
  }
}

/**
 * The config-dir stub: with a package.json whose dependencies the lock file lists and a node_modules
 * folder, OpenCode skips its background `npm install @opencode-ai/plugin` (registry.npmjs.org).
 */
export const OPENCODE_STUB = {
  'package.json': '{ "dependencies": { "@opencode-ai/plugin": "*" } }\n',
  'package-lock.json':
    '{ "name": "opencode-config", "lockfileVersion": 3, "packages": { "": { "dependencies": { "@opencode-ai/plugin": "*" } } } }\n',
}

/** The native OpenCode binary for a platform, as its postinstall would pick it (AVX2 / musl variants). */
export function opencodeBinary(root: string, t: NativeTarget): string {
  const plat = t.platform === 'win32' ? 'windows' : t.platform
  const base = `opencode-${plat}-${t.arch}`
  const names = t.arch === 'x64' && !t.avx2 ? [`${base}-baseline`, base] : [base, `${base}-baseline`]
  const ordered = t.musl ? names.flatMap((n) => [`${n}-musl`, n]) : names
  const file = t.platform === 'win32' ? 'opencode.exe' : 'opencode'
  return firstExisting(ordered.map((n) => modulePath(root, n, 'bin', file)))
}

/** OpenCode (`opencode-ai`): native Bun binary from an optional dependency; JSON-lines events on stdout. */
export const opencodeAdapter: HarnessAdapter = {
  name: 'opencode',
  ...npmLifecycle(
    { harness: 'opencode', package: PACKAGE, resolveBin: (root) => opencodeBinary(root, hostTarget()) },
    { ...OPENCODE_QUIET_ENV },
  ),

  async prepare(installed, ctx) {
    const configDir = path.join(ctx.home, '.config', 'opencode')
    const configFile = await writeInside(
      ctx.home,
      '.config/opencode/opencode.json',
      jsonFile(opencodeConfig(ctx)),
    )
    for (const [name, text] of Object.entries(OPENCODE_STUB)) {
      await writeInside(ctx.home, `.config/opencode/${name}`, text)
    }
    await mkdir(path.join(configDir, 'node_modules'), { recursive: true })
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      OPENCODE_CONFIG: configFile,
      [OPENCODE_KEY_ENV]: ctx.endpoint.apiKey,
      ...OPENCODE_QUIET_ENV,
    })
    // No --title: the title-generation request is part of what OpenCode costs, and is measured.
    const args = [
      'run',
      '--format',
      'json',
      '--auto',
      '--pure',
      '-m',
      `${OPENCODE_PROVIDER}/${ctx.model}`,
      '--dir',
      ctx.workspace,
      ...ctx.config.args,
    ]
    // The prompt goes on stdin: as a positional argument `opencode run` wraps it in quotes and escapes
    // the quotes inside, so OpenCode would see a different prompt from every other harness.
    return { ...launch(installed, args), env, cwd: ctx.workspace, stdin: ctx.prompt }
  },

  async parse(run: RawRun, ctx): Promise<ParsedRun> {
    return parseOpencodeOutput(run, ctx.prices !== undefined)
  },
}

/**
 * OpenCode's `--format json` stream: `step_finish.part.tokens{input, output, reasoning, cache{read,write}}`
 * and `.part.cost` per agent step (the title call is not counted there), `text` parts for the answer,
 * `error` events for failures.
 */
export function parseOpencodeOutput(run: RawRun, priced: boolean): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const steps = events.filter((e) => e.type === 'step_finish')
  const tokens = steps.map((e) => dig(e, 'part', 'tokens'))
  let finalMessage: string | null = null
  for (const e of events) {
    if (e.type !== 'text') continue
    const text = str(dig(e, 'part', 'text'))
    if (text && text.trim() !== '') finalMessage = text.trim()
  }
  const errors = events
    .filter((e) => e.type === 'error')
    .map((e) => str(dig(e, 'error', 'data', 'message')) ?? str(dig(e, 'error', 'name')) ?? 'error')
  const selfReport =
    steps.length === 0
      ? null
      : {
          // OpenCode's `input` leaves out cache reads and writes; the self-report counts every prompt token.
          input_tokens: sumOrNull(
            tokens.map((t) =>
              inputWithCache(
                num(dig(t, 'input')),
                num(dig(t, 'cache', 'read')),
                num(dig(t, 'cache', 'write')),
              ),
            ),
          ),
          output_tokens: sumOrNull(tokens.map((t) => num(dig(t, 'output')))),
          cache_read_tokens: sumOrNull(tokens.map((t) => num(dig(t, 'cache', 'read')))),
          cache_write_tokens: sumOrNull(tokens.map((t) => num(dig(t, 'cache', 'write')))),
          cost_usd: priced ? sumOrNull(steps.map((e) => num(dig(e, 'part', 'cost')))) : null,
          requests: steps.length,
          turns: steps.length,
        }
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: steps.length > 0 ? null : startupFailure(run, errors),
  }
}
