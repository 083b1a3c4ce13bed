import type { Prices } from './prices.js'
import type { RequestInfo } from './request-shape.js'

/**
 * Output tokens reserved for a request that declares no ceiling (`max_tokens` and kin). Generous on
 * purpose: a reservation only holds back later requests while this one is in flight.
 */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 8192

/** Request bytes per input token assumed for a reservation (fewer than real text has: an over-estimate). */
export const RESERVED_BYTES_PER_TOKEN = 3

/**
 * The spend reserved for one request before it is forwarded, USD: its input at the route's input
 * price (body bytes / {@link RESERVED_BYTES_PER_TOKEN} tokens, all at the dearest input rate, cache
 * writes included) plus its
 * declared maximum output (or {@link DEFAULT_RESERVED_OUTPUT_TOKENS}) at the output price; reasoning
 * counts as output. 0 when the route has no prices (then no spend cap can bind, and none is claimed).
 */
export function reserveUsd(info: RequestInfo, prices: Prices | null): number {
  if (!prices) return 0
  const input = Math.ceil(info.shape.bytes / RESERVED_BYTES_PER_TOKEN)
  const output = info.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT_TOKENS
  const inputRate = Math.max(prices.input, prices.cache_write ?? 0, prices.cache_read ?? 0)
  const usd = (input * inputRate + output * prices.output) / 1e6
  return Number.isFinite(usd) && usd > 0 ? usd : 0
}
