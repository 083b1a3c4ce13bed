/**
 * JSON-lines output of a harness, read leniently: harnesses interleave warnings and banners with their
 * events on stdout, so a line that is not a JSON object is kept apart instead of failing the parse.
 */
export interface JsonLines {
  /** Every line that parsed as a JSON object, in order. */
  events: Record<string, unknown>[]
  /** Non-empty lines that were not JSON objects. */
  other: string[]
}

export function parseJsonLines(text: string): JsonLines {
  const events: Record<string, unknown>[] = []
  const other: string[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '') continue
    if (line.startsWith('{')) {
      try {
        const v: unknown = JSON.parse(line)
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          events.push(v as Record<string, unknown>)
          continue
        }
      } catch {
        // fall through: a banner or a truncated line
      }
    }
    other.push(line)
  }
  return { events, other }
}

/** `obj[k1][k2]…` when every step is an object, else undefined. */
export function dig(obj: unknown, ...keys: (string | number)[]): unknown {
  let cur: unknown = obj
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string | number, unknown>)[k]
  }
  return cur
}

/** A finite, non-negative number, or null. */
export function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null
}

/** A string, or null. */
export function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

/** Sum of the non-null values; null when every value is null (missing is never zero). */
export function sumOrNull(values: readonly (number | null)[]): number | null {
  let total: number | null = null
  for (const v of values) if (v !== null) total = (total ?? 0) + v
  return total
}

/**
 * Every prompt token of one request or run: fresh input plus cache reads and writes, for harnesses that
 * report fresh input apart from the cache (Anthropic-style usage); null when fresh input is unknown.
 */
export function inputWithCache(
  fresh: number | null,
  cacheRead: number | null,
  cacheWrite: number | null,
): number | null {
  return fresh === null ? null : fresh + (cacheRead ?? 0) + (cacheWrite ?? 0)
}
