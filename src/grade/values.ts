/** Deep equality of JSON values; numbers compare by value (1 equals 1.0). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null) return false
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  if (typeof a === 'object') {
    if (Array.isArray(b)) return false
    const ka = Object.keys(a as object)
    const kb = Object.keys(b as object)
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.hasOwn(b as object, k) &&
          jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    )
  }
  return false
}

/**
 * The first place `actual` fails to contain `expected`, or null when it does: objects may have extra
 * keys (recursively); arrays and scalars must be equal. The path is dotted (`orders.W1.status`).
 */
export function subsetMismatch(
  expected: unknown,
  actual: unknown,
  at = '',
): { path: string; expected: unknown; actual: unknown } | null {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual))
      return { path: at || '(world)', expected, actual }
    for (const [k, v] of Object.entries(expected)) {
      const sub = at ? `${at}.${k}` : k
      if (!Object.hasOwn(actual, k)) return { path: sub, expected: v, actual: undefined }
      const m = subsetMismatch(v, (actual as Record<string, unknown>)[k], sub)
      if (m) return m
    }
    return null
  }
  return jsonEqual(expected, actual) ? null : { path: at || '(world)', expected, actual }
}

/** A short JSON rendering for reasons (cut at 80 characters). */
export function brief(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v)
  return s.length > 80 ? `${s.slice(0, 77)}...` : s
}
