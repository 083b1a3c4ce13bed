import { strictJson } from '../util/json.js'
import type { Comparison } from './schema.js'

/**
 * comparison.json text: keys sorted recursively, 2-space indent, trailing newline. Throws if any
 * number is NaN or ±Infinity (a defect: every undefined statistic is built as null with a reason).
 * Row order is fixed by the builder, so the same comparison gives the same bytes.
 */
export function comparisonJson(c: Comparison): string {
  return strictJson(sortKeysDeep(c))
}

/** A copy of `v` with every object's keys in code-unit order; `undefined` members dropped. */
export function sortKeysDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeysDeep)
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      const x = (v as Record<string, unknown>)[k]
      if (x !== undefined) out[k] = sortKeysDeep(x)
    }
    return out
  }
  return v
}
