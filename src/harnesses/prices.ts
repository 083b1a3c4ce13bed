import type { AttemptContext } from './contract.js'

/**
 * Prices for a harness's own model config, USD per million tokens. Absent prices become zeros in the
 * config (the harness needs numbers) and the adapter then reports its cost as null. Cache prices
 * default to the input price when the route does not price them separately.
 */
export function pricesPerMtok(prices: AttemptContext['prices']): {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
} {
  if (!prices) return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  return {
    input: prices.input,
    output: prices.output,
    cacheRead: prices.cache_read ?? prices.input,
    cacheWrite: prices.cache_write ?? prices.input,
  }
}
