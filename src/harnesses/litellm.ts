import type { WireApi } from '../manifest/harness-names.js'
import type { AttemptContext } from './contract.js'
import { bareOrigin, openaiBaseUrl } from './urls.js'

/**
 * How a LiteLLM-based harness (OpenHands, mini-swe-agent) names the declared model and where it sends
 * it. LiteLLM picks the client from the model prefix and strips it before the request, so the route
 * still sees the declared id: `openai/<id>` (Chat Completions at `<origin>/v1`),
 * `openai/responses/<id>` (LiteLLM's completion→Responses bridge, same base), `anthropic/<id>`
 * (Messages at the bare origin). Source: LiteLLM provider docs (OpenAI-compatible endpoints,
 * Anthropic, Responses bridge).
 */
export function litellmRoute(ctx: Pick<AttemptContext, 'api' | 'endpoint' | 'model'>): {
  model: string
  baseUrl: string
  keyEnv: 'OPENAI_API_KEY' | 'ANTHROPIC_API_KEY'
} {
  const api: WireApi = ctx.api
  if (api === 'anthropic') {
    return {
      model: `anthropic/${ctx.model}`,
      baseUrl: bareOrigin(ctx.endpoint.origin),
      keyEnv: 'ANTHROPIC_API_KEY',
    }
  }
  const prefix = api === 'responses' ? 'openai/responses/' : 'openai/'
  return {
    model: `${prefix}${ctx.model}`,
    baseUrl: openaiBaseUrl(ctx.endpoint.origin),
    keyEnv: 'OPENAI_API_KEY',
  }
}

/** LiteLLM downloads its model price map from GitHub at import unless told to use the bundled copy. */
export const LITELLM_QUIET_ENV = { LITELLM_LOCAL_MODEL_COST_MAP: 'True' } as const
