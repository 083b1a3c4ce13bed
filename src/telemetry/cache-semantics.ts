/**
 * Cache-token semantics per provider and wire API: does the reported input count include cache reads
 * and cache writes, and where are those counters? One versioned table, looked up explicitly; a route
 * whose semantics are not in it is `unknown` (the cache split is then null, never inferred from
 * magnitudes). Sources: telemetry.md "Cache semantics" and LiteLLM 6.8.
 */
export const CACHE_SEMANTICS_VERSION = 1

export type CacheSemantics = 'inclusive' | 'exclusive' | 'unknown'

/** Where token counts come from: one wire API's usage object, or a LiteLLM spend-log row. */
export type UsageApi = 'chat' | 'responses' | 'anthropic' | 'gemini' | 'litellm' | 'other'

export interface CacheRule {
  /** inclusive: input total already counts cache reads and writes; exclusive: it counts neither. */
  semantics: CacheSemantics
  /** Why we believe it, for the report. */
  source: string
}

const OPENAI = 'OpenAI usage: prompt_tokens / input_tokens include cached_tokens'

/**
 * The map. Keys are `<provider>/<api>`; `*` matches any provider. Provider rows win over `*` rows.
 * Anthropic models served through an OpenAI-compatible route are not listed: their split is unknown.
 */
export const CACHE_SEMANTICS_MAP: Readonly<Record<string, CacheRule>> = {
  '*/chat': { semantics: 'inclusive', source: OPENAI },
  '*/responses': { semantics: 'inclusive', source: OPENAI },
  '*/gemini': {
    semantics: 'inclusive',
    source: 'Gemini usageMetadata: promptTokenCount includes cachedContentTokenCount',
  },
  '*/anthropic': {
    semantics: 'exclusive',
    source:
      'Anthropic Messages usage: input_tokens excludes cache_read_input_tokens and cache_creation_input_tokens',
  },
  '*/litellm': {
    semantics: 'inclusive',
    source:
      'LiteLLM spend logs: prompt_tokens is cache-inclusive for every provider (Anthropic: input + cache_creation + cache_read)',
  },
  'openrouter/chat': {
    semantics: 'inclusive',
    source: 'OpenRouter usage: prompt_tokens include cached_tokens and cache_write_tokens',
  },
  'anthropic/chat': {
    semantics: 'unknown',
    source: 'Anthropic through an OpenAI-compatible route: cache split not documented',
  },
  '*/other': { semantics: 'unknown', source: 'no usage contract for this route' },
}

/**
 * The cache rule of a route. `override` is the manifest's `model.cache_semantics` when declared (it wins,
 * but cannot make an unlisted API known). Returns semantics `unknown` when nothing matches.
 */
export function cacheRuleFor(provider: string | null, api: UsageApi, override?: CacheSemantics): CacheRule {
  const key = `${(provider ?? '*').toLowerCase()}/${api}`
  const rule = CACHE_SEMANTICS_MAP[key] ?? CACHE_SEMANTICS_MAP[`*/${api}`]
  const base: CacheRule = rule ?? { semantics: 'unknown', source: 'not in the map' }
  if (override && override !== base.semantics) {
    return { ...base, semantics: override, source: `manifest model.cache_semantics: ${override}` }
  }
  return base
}
