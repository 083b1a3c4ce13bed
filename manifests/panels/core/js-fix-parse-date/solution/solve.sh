#!/usr/bin/env bash
# Reference solution: strict format, Date.UTC with a 0-based month, round-trip check, UTC arithmetic.
set -euo pipefail
cat > src/dates.js <<'EOF'
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Parse a calendar date written as YYYY-MM-DD.
 * @param {string} s
 * @returns {Date} midnight UTC of that day
 * @throws {RangeError} for another format or a date that does not exist
 */
export function parseDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) throw new RangeError(`not a YYYY-MM-DD date: ${JSON.stringify(s)}`)
  const y = Number(m[1])
  const mo = Number(m[2])
  const d = Number(m[3])
  const date = new Date(Date.UTC(y, mo - 1, d))
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) {
    throw new RangeError(`no such date: ${s}`)
  }
  return date
}

/**
 * Whole days from `a` to `b` (both YYYY-MM-DD); negative when `b` is earlier.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function daysBetween(a, b) {
  return Math.round((parseDate(b).getTime() - parseDate(a).getTime()) / DAY_MS)
}
EOF
