import type { Comparison } from '../records/comparison.js'
import { type CacheSemantics, cacheRuleFor, type UsageApi } from '../telemetry/cache-semantics.js'

const WIRE_APIS: readonly string[] = ['chat', 'responses', 'anthropic', 'gemini']

/**
 * Why two cells' fresh-input token figures cannot be compared, or null when they can. Fresh input is
 * comparable when both cells speak the same wire API, or when both APIs' input accounting is known
 * and alike (telemetry/cache-semantics.ts). When it differs — e.g. Anthropic Messages reports prompt
 * caching's fresh input as cache writes, OpenAI chat counts it in prompt_tokens — a ratio would read
 * 0× or ∞ from bookkeeping alone, so the figure is null with this reason. A cell's API falls back to
 * the model route's (`stamp.model.api`); an unknown API is never comparable with another API. Pure.
 */
export function freshInputNotComparable(c: Comparison, baseline: string, treatment: string): string | null {
  const apiOf = (id: string) => c.cells.find((x) => x.id === id)?.api ?? c.stamp.model.api ?? null
  const a = apiOf(baseline)
  const b = apiOf(treatment)
  if (a === b) return null
  const provider = c.stamp.model.provider
  const rule = (api: string | null) =>
    cacheRuleFor(provider, api !== null && WIRE_APIS.includes(api) ? (api as UsageApi) : 'other')
  const ra = rule(a)
  const rb = rule(b)
  if (ra.semantics === rb.semantics && ra.semantics !== 'unknown') return null
  const side = (id: string, api: string | null, s: CacheSemantics) =>
    `${id} uses the ${api ?? 'unknown'} API (input accounting ${s})`
  return (
    `not comparable: input-token accounting differs (${side(baseline, a, ra.semantics)}, ` +
    `${side(treatment, b, rb.semantics)}; fresh input can be reported as cache writes)`
  )
}
