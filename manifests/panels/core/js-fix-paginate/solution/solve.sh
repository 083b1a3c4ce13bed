#!/usr/bin/env bash
# Reference solution: 1-based start index, ceiling page count, argument checks.
set -euo pipefail
cat > src/paginate.js <<'EOF'
/**
 * One page of `items`.
 * @template T
 * @param {T[]} items
 * @param {number} page 1-based page number
 * @param {number} perPage items per page
 * @returns {{ items: T[], page: number, totalPages: number, hasNext: boolean }}
 */
export function paginate(items, page, perPage) {
  if (!Number.isInteger(page) || page < 1) throw new RangeError(`page must be an integer >= 1, got ${page}`)
  if (!Number.isInteger(perPage) || perPage < 1) {
    throw new RangeError(`perPage must be an integer >= 1, got ${perPage}`)
  }
  const totalPages = Math.ceil(items.length / perPage)
  const start = (page - 1) * perPage
  return {
    items: items.slice(start, start + perPage),
    page,
    totalPages,
    hasNext: page < totalPages,
  }
}
EOF
