import { describe, expect, it } from 'vitest'
import { discordantEValue } from '../../../src/stats/evalue.js'
import { holm } from '../../../src/stats/holm.js'
import { expectRelative } from './helpers.js'

describe('Holm step-down', () => {
  it('[0.01, 0.04, 0.03, 0.005] → [0.03, 0.06, 0.06, 0.02], reject [T, F, F, T]', () => {
    const r = holm([0.01, 0.04, 0.03, 0.005])
    const expected = [0.03, 0.06, 0.06, 0.02]
    r.adjusted.forEach((p, i) => {
      expect(p).toBeCloseTo(expected[i]!, 15)
    })
    expect(r.reject).toEqual([true, false, false, true])
    expect(r.alpha).toBe(0.05)
  })

  it('caps at 1, keeps ties in order, handles empty input', () => {
    expect(holm([0.5, 0.5, 0.9]).adjusted).toEqual([1, 1, 1])
    expect(holm([0.01, 0.01]).adjusted).toEqual([0.02, 0.02])
    expect(holm([])).toEqual({ adjusted: [], reject: [], alpha: 0.05 })
    expect(holm([0.04], 0.05)).toEqual({ adjusted: [0.04], reject: [true], alpha: 0.05 })
    expect(() => holm([1.2])).toThrow(RangeError)
    expect(() => holm([0.1], 0)).toThrow(RangeError)
  })
})

describe('Beta(1,1)-mixture e-value for discordant signs', () => {
  it.each([
    [1, 7, 3.5556],
    [0, 7, 16],
    [0, 8, 28.444],
    [2, 12, 12.003],
    [5, 20, 24.291],
  ])('(b=%i, c=%i) → %d', (b, c, e) => {
    const r = discordantEValue(b, c)
    expect(r.reason).toBeNull()
    expect(r.e!).toBeCloseTo(e, 3)
  })

  it('is exact to about 1e-14 relative against the factorial formula', () => {
    expectRelative(discordantEValue(1, 7).e, (256 * 5040) / 362_880, 1e-13)
    expectRelative(discordantEValue(0, 7).e, 16, 1e-13)
    expectRelative(discordantEValue(0, 8).e, 256 / 9, 1e-13)
  })

  it('symmetric in b and c; E = 1 with no discordant pairs', () => {
    expect(discordantEValue(12, 2).e).toBe(discordantEValue(2, 12).e)
    expect(discordantEValue(0, 0)).toEqual({ e: 1, logE: 0, b: 0, c: 0, reason: null })
  })

  it('beyond the double range: e null, logE finite', () => {
    const r = discordantEValue(0, 3000)
    expect(r.e).toBeNull()
    expect(r.logE).toBeCloseTo(3000 * Math.LN2 - Math.log(3001), 8)
    expect(r.reason).toMatch(/double range/)
  })
})
