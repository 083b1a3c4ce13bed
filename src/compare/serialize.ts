import type { Comparison } from '../records/comparison.js'

/**
 * comparison.json text: keys sorted recursively, 2-space indent, trailing newline. Throws if any
 * number is NaN or ±Infinity (a defect: every undefined statistic is built as null with a reason).
 * Row order is fixed by the builder, so the same comparison gives the same bytes.
 */
export function comparisonJson(c: Comparison): string {
  // The same text as strictJson(sortKeysDeep(c)): the finiteness check is made while sorting, so
  // JSON.stringify runs without a replacer (several times faster on a large comparison).
  return `${JSON.stringify(sortKeysDeep(c, true), null, 2)}\n`
}

/**
 * A copy of `v` with every object's keys in code-unit order; `undefined` members dropped. With
 * `strict`, throws on a NaN or ±Infinity (as strictJson).
 */
export function sortKeysDeep(v: unknown, strict = false, key: string | number = ''): unknown {
  // An element's key is its index, made into text only for the error message.
  if (Array.isArray(v)) return v.map((x, i) => sortKeysDeep(x, strict, i))
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      const x = (v as Record<string, unknown>)[k]
      if (x !== undefined) out[k] = sortKeysDeep(x, strict, k)
    }
    return out
  }
  if (strict && typeof v === 'number' && !Number.isFinite(v)) {
    throw new Error(`non-finite number ${v} at key "${key}": use null with a reason`)
  }
  return v
}
