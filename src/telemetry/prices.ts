import type { Tokens } from '../records/ledger.js'
import { hasTokens } from './normalize.js'

/** The manifest price table of a route, USD per million tokens (`model.prices`). */
export interface Prices {
  input: number
  output: number
  /** null = cache reads are not priced separately (charged as input). */
  cache_read: number | null
  /** null = cache writes are not priced separately (charged as input). */
  cache_write: number | null
}

export type SpendSource = 'proxy' | 'litellm' | 'cost_breakdown' | 'recomputed' | 'unpriced'

/** Relative and absolute slack before a logged spend is called a mismatch with the recomputed one. */
export const SPEND_TOLERANCE = { relative: 0.01, absoluteUsd: 1e-6 }

const round = (usd: number): number => Math.round(usd * 1e10) / 1e10

/**
 * Spend in USD recomputed from token classes × the price table:
 * fresh·input + cache_read·(cache_read ?? input) + cache_write·(cache_write ?? input) + output·output,
 * all / 1e6. Output includes reasoning (providers bill reasoning as output). When the cache split is
 * unknown the total is priced at the input rate only if cache classes cost the same; otherwise null.
 * Returns null when prices or the needed counters are absent (unpriced, never free).
 */
export function recomputeSpendUsd(t: Tokens, prices: Prices | null | undefined): number | null {
  if (!prices || t.output === null || t.input_total === null) return null
  const readRate = prices.cache_read ?? prices.input
  const writeRate = prices.cache_write ?? prices.input
  let input: number
  if (t.input_fresh !== null && t.cache_read !== null && t.cache_write !== null) {
    input = t.input_fresh * prices.input + t.cache_read * readRate + t.cache_write * writeRate
  } else if (readRate === prices.input && writeRate === prices.input) {
    input = t.input_total * prices.input
  } else {
    return null
  }
  return round((input + t.output * prices.output) / 1e6)
}

/** True when two spends differ by more than {@link SPEND_TOLERANCE}. */
export function spendDiffers(a: number, b: number): boolean {
  const slack = Math.max(SPEND_TOLERANCE.absoluteUsd, SPEND_TOLERANCE.relative * Math.max(a, b))
  return Math.abs(a - b) > slack
}

export interface SpendChoice {
  spend_usd: number | null
  spend_source: SpendSource
  spend_recomputed_usd: number | null
  flags: string[]
}

/**
 * The spend of one LiteLLM spend-log row, and where it came from:
 * - logged spend > 0 that agrees with the recomputed one (or nothing to recompute) → `litellm`;
 * - logged spend > 0 that disagrees → the recomputed figure, source `recomputed`, flag `spend_mismatch`
 *   (F02: Anthropic cache writes priced twice);
 * - logged spend 0 with tokens > 0 → never free (F03): `metadata.cost_breakdown.total_cost` when
 *   present (`cost_breakdown`), else recomputed, else null with source `unpriced`; flag `logged_spend_zero`;
 * - logged spend 0 with no tokens → 0 (`litellm`).
 */
export function chooseLoggedSpend(
  logged: number | null,
  costBreakdownUsd: number | null,
  tokens: Tokens,
  prices: Prices | null | undefined,
): SpendChoice {
  const recomputed = recomputeSpendUsd(tokens, prices)
  const flags: string[] = []
  if (logged !== null && logged > 0) {
    if (recomputed !== null && spendDiffers(logged, recomputed)) {
      return {
        spend_usd: recomputed,
        spend_source: 'recomputed',
        spend_recomputed_usd: recomputed,
        flags: ['spend_mismatch'],
      }
    }
    return { spend_usd: logged, spend_source: 'litellm', spend_recomputed_usd: recomputed, flags }
  }
  if (!hasTokens(tokens)) {
    return { spend_usd: logged ?? 0, spend_source: 'litellm', spend_recomputed_usd: recomputed, flags }
  }
  flags.push('logged_spend_zero')
  if (costBreakdownUsd !== null && costBreakdownUsd > 0) {
    return {
      spend_usd: costBreakdownUsd,
      spend_source: 'cost_breakdown',
      spend_recomputed_usd: recomputed,
      flags,
    }
  }
  if (recomputed !== null) {
    return { spend_usd: recomputed, spend_source: 'recomputed', spend_recomputed_usd: recomputed, flags }
  }
  flags.push('unpriced')
  return { spend_usd: null, spend_source: 'unpriced', spend_recomputed_usd: null, flags }
}

/**
 * The spend of one request seen by the recording proxy: recomputed from its tokens. A request with
 * tokens and no price table (or no usage at all) is `unpriced` (null), never free.
 */
export function chooseProxySpend(tokens: Tokens, prices: Prices | null | undefined): SpendChoice {
  const recomputed = recomputeSpendUsd(tokens, prices)
  if (recomputed !== null) {
    return { spend_usd: recomputed, spend_source: 'recomputed', spend_recomputed_usd: recomputed, flags: [] }
  }
  return { spend_usd: null, spend_source: 'unpriced', spend_recomputed_usd: null, flags: ['unpriced'] }
}
