import path from 'node:path'
import type { WireApi } from '../manifest/harness-names.js'
import type { AttemptContext, HarnessAdapter, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { jsonFile, writeCellFiles, writeInside } from './files.js'
import { dig, inputWithCache, num, parseJsonLines, str, sumOrNull } from './jsonl.js'
import { modulePath } from './native.js'
import { launch, npmLifecycle } from './npm-harness.js'
import { pricesPerMtok } from './prices.js'
import { startupFailure } from './startup.js'
import { bareOrigin, geminiVersionedUrl, openaiBaseUrl } from './urls.js'

/** Provider id written into Pi's models.json (the harness sees `hw/<model>`). */
export const PI_PROVIDER = 'hw'
const PACKAGE = '@mariozechner/pi-coding-agent'

/** Pi's `api` value and base URL per wire API (harnesses.md §3.5: all four verified). */
export function piEndpoint(api: WireApi, origin: string): { api: string; baseUrl: string } {
  switch (api) {
    case 'chat':
      return { api: 'openai-completions', baseUrl: openaiBaseUrl(origin) }
    case 'responses':
      return { api: 'openai-responses', baseUrl: openaiBaseUrl(origin) }
    case 'anthropic':
      return { api: 'anthropic-messages', baseUrl: bareOrigin(origin) }
    case 'gemini':
      return { api: 'google-generative-ai', baseUrl: geminiVersionedUrl(origin) }
  }
}

/** `$PI_CODING_AGENT_DIR/models.json`: one provider holding the declared model at the attempt endpoint. */
export function piModelsJson(ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model' | 'prices'>) {
  const { api, baseUrl } = piEndpoint(ctx.api, ctx.endpoint.origin)
  const p = pricesPerMtok(ctx.prices)
  return {
    providers: {
      [PI_PROVIDER]: {
        baseUrl,
        api,
        apiKey: ctx.endpoint.apiKey,
        ...(ctx.api === 'chat'
          ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: false } }
          : {}),
        models: [
          {
            id: ctx.model,
            name: ctx.model,
            reasoning: false,
            input: ['text'],
            contextWindow: 200000,
            maxTokens: 8192,
            cost: { input: p.input, output: p.output, cacheRead: p.cacheRead, cacheWrite: p.cacheWrite },
          },
        ],
      },
    },
  }
}

/** `$PI_CODING_AGENT_DIR/settings.json`: default model, no install telemetry, no retries (the proxy counts). */
export function piSettingsJson(model: string) {
  return {
    defaultProvider: PI_PROVIDER,
    defaultModel: model,
    quietStartup: true,
    enableInstallTelemetry: false,
    retry: { enabled: false },
  }
}

/** Pi (`@mariozechner/pi-coding-agent`): plain Node, JSON-lines events on stdout, no permission prompts. */
export const piAdapter: HarnessAdapter = {
  name: 'pi',
  ...npmLifecycle(
    { harness: 'pi', package: PACKAGE, resolveBin: (root) => modulePath(root, PACKAGE, 'dist', 'cli.js') },
    { PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1', PI_TELEMETRY: '0' },
  ),

  async prepare(installed, ctx) {
    const agentDir = path.join(ctx.home, '.pi', 'agent')
    await writeInside(ctx.home, '.pi/agent/models.json', jsonFile(piModelsJson(ctx)))
    await writeInside(ctx.home, '.pi/agent/settings.json', jsonFile(piSettingsJson(ctx.model)))
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: '1',
      PI_SKIP_VERSION_CHECK: '1',
      PI_TELEMETRY: '0',
    })
    const args = [
      '-p',
      '--mode',
      'json',
      '--offline',
      '--provider',
      PI_PROVIDER,
      '--model',
      ctx.model,
      ...ctx.config.args,
      ctx.prompt,
    ]
    return { ...launch(installed, args), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun, ctx): Promise<ParsedRun> {
    return parsePiOutput(run, ctx.prices !== undefined)
  },
}

/**
 * Pi's `--mode json` stream: one assistant `message_end` per model request, each with
 * `message.usage{input (uncached), output, cacheRead, cacheWrite, cost.total}`; the last assistant
 * message's text is the final answer.
 */
export function parsePiOutput(run: RawRun, priced: boolean): ParsedRun {
  const { events } = parseJsonLines(run.stdout)
  const assistant = events.filter(
    (e) => e.type === 'message_end' && dig(e, 'message', 'role') === 'assistant',
  )
  const usages = assistant.map((e) => dig(e, 'message', 'usage'))
  let finalMessage: string | null = null
  for (const e of assistant) {
    const text = textOfContent(dig(e, 'message', 'content'))
    if (text) finalMessage = text
  }
  const errors = assistant
    .map((e) => str(dig(e, 'message', 'errorMessage')))
    .filter((m): m is string => m !== null)
  const selfReport =
    assistant.length === 0
      ? null
      : {
          // Pi's `input` leaves out cache reads and writes; the self-report counts every prompt token.
          input_tokens: sumOrNull(
            usages.map((u) =>
              inputWithCache(num(dig(u, 'input')), num(dig(u, 'cacheRead')), num(dig(u, 'cacheWrite'))),
            ),
          ),
          output_tokens: sumOrNull(usages.map((u) => num(dig(u, 'output')))),
          cache_read_tokens: sumOrNull(usages.map((u) => num(dig(u, 'cacheRead')))),
          cache_write_tokens: sumOrNull(usages.map((u) => num(dig(u, 'cacheWrite')))),
          // Pi prices from models.json: without declared prices its figure is a placeholder zero.
          cost_usd: priced ? sumOrNull(usages.map((u) => num(dig(u, 'cost', 'total')))) : null,
          requests: assistant.length,
          turns: events.filter((e) => e.type === 'turn_end').length,
        }
  const usedModel = usages.some((u) => (num(dig(u, 'input')) ?? 0) > 0)
  return {
    finalMessage,
    trajectory: events,
    selfReport,
    startupError: usedModel ? null : startupFailure(run, errors),
  }
}

function textOfContent(content: unknown): string | null {
  if (typeof content === 'string') return content.trim() || null
  if (!Array.isArray(content)) return null
  const parts = content
    .filter((c) => dig(c, 'type') === 'text')
    .map((c) => str(dig(c, 'text')) ?? '')
    .filter((t) => t.trim() !== '')
  return parts.length > 0 ? parts.join('\n').trim() : null
}
