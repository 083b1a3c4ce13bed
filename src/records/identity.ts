/**
 * When two telemetry rows are one request: only on a real identity. A request id that is missing,
 * empty, or a placeholder string a logger writes when it has none (`None`, `null`, `unknown`, `0`,
 * `-`, `n/a`, `undefined`, a run of zeros, a bare uuid of zeros) is no identity: rows carrying one
 * are kept apart, and the duplicate check (records/ledger-check.ts) names the ones that look alike.
 * Pure.
 */

const PLACEHOLDERS = new Set([
  'none',
  'null',
  'nil',
  'undefined',
  'unknown',
  'n/a',
  'na',
  '-',
  '--',
  '?',
  'placeholder',
  'request_id',
  'requestid',
  'id',
  'nan',
  'false',
  'true',
])

/** Identifiers made only of zeros (`0`, `000`, `00000000-0000-0000-0000-000000000000`). */
const ZEROS = /^[0\-_:.]+$/

/** True when `id` can identify a request: a non-empty string that is not a known placeholder. */
export function isRealRequestId(id: unknown): id is string {
  if (typeof id !== 'string') return false
  const t = id.trim()
  if (t === '') return false
  const low = t.toLowerCase()
  if (PLACEHOLDERS.has(low)) return false
  if (/^<.*>$/.test(t) || /^\{\{.*\}\}$/.test(t) || /^\$\{.*\}$/.test(t)) return false
  return !ZEROS.test(t)
}

/**
 * The identity two rows must share to be merged: the request id (real, see {@link isRealRequestId}),
 * the start time and the attempt the row belongs to. Null when the row has no real request id: such a
 * row is never merged with another.
 */
export function requestIdentity(
  id: unknown,
  startedAt: unknown,
  attempt: string | number | null | undefined,
): string | null {
  if (!isRealRequestId(id)) return null
  const t = typeof startedAt === 'string' || typeof startedAt === 'number' ? String(startedAt) : ''
  return `${id.trim()}\u0000${t}\u0000${attempt ?? ''}`
}
