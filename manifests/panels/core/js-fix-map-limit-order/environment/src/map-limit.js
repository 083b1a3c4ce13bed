/**
 * Run `fn` on every item with at most `limit` calls in flight.
 * @template T, R
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T, index: number) => Promise<R>} fn
 * @returns {Promise<R[]>} results in input order
 */
export async function mapLimit(items, limit, fn) {
  const results = []
  let next = 0
  async function worker() {
    while (next < items.length) {
      const item = items[next++]
      results.push(await fn(item))
    }
  }
  await Promise.all(Array.from({ length: limit }, worker))
  return results
}
