const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Parse a calendar date written as YYYY-MM-DD.
 * @param {string} s
 * @returns {Date} midnight UTC of that day
 */
export function parseDate(s) {
  const [y, m, d] = s.split('-').map(Number)
  return new Date(y, m, d)
}

/**
 * Whole days from `a` to `b` (both YYYY-MM-DD); negative when `b` is earlier.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function daysBetween(a, b) {
  return Math.floor((parseDate(b) - parseDate(a)) / DAY_MS)
}
