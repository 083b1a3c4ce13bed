/**
 * One page of `items`.
 * @template T
 * @param {T[]} items
 * @param {number} page 1-based page number
 * @param {number} perPage items per page
 * @returns {{ items: T[], page: number, totalPages: number, hasNext: boolean }}
 */
export function paginate(items, page, perPage) {
  const totalPages = Math.floor(items.length / perPage)
  const start = page * perPage
  return {
    items: items.slice(start, start + perPage),
    page,
    totalPages,
    hasNext: page < totalPages,
  }
}
