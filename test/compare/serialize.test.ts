import { describe, expect, it } from 'vitest'
import { comparisonJson, sortKeysDeep } from '../../src/compare/serialize.js'
import type { Comparison } from '../../src/records/comparison.js'
import { strictJson } from '../../src/util/json.js'

/** A comparison-like value: the serializer reads only the shape, not the schema. */
const asComparison = (v: unknown) => v as Comparison

describe('comparisonJson', () => {
  it('sorts keys at every depth, drops undefined members and keeps array order', () => {
    const c = { b: 1, a: { d: [3, { z: 1, y: 2 }, 1], c: undefined }, '': null }
    const text = comparisonJson(asComparison(c))
    expect(text).toBe(strictJson({ '': null, a: { d: [3, { y: 2, z: 1 }, 1] }, b: 1 }))
    expect(text.endsWith('}\n')).toBe(true)
    expect(Object.keys(JSON.parse(text))).toEqual(['', 'a', 'b'])
  })

  it('names the key of a non-finite number, whether a field or an array element', () => {
    expect(() => comparisonJson(asComparison({ ok: 1, rows: [{ spend: Number.NaN }] }))).toThrow(
      'non-finite number NaN at key "spend": use null with a reason',
    )
    expect(() => comparisonJson(asComparison({ values: [0, 1, Number.POSITIVE_INFINITY] }))).toThrow(
      'non-finite number Infinity at key "2": use null with a reason',
    )
  })

  it('leaves non-finite numbers alone when not strict (the copy is only sorted)', () => {
    expect(sortKeysDeep({ b: [Number.NaN], a: 1 })).toEqual({ a: 1, b: [Number.NaN] })
  })
})
