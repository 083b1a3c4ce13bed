import { describe, expect, it } from 'vitest'
import { normalCdf, normalQuantile } from '../../../src/stats/normal.js'
import {
  lnGamma,
  logChoose,
  logFactorial,
  regularizedIncompleteBeta,
  studentTCdf,
  studentTTwoSidedP,
} from '../../../src/stats/special.js'
import { expectRelative } from './helpers.js'

// Reference values from scipy.special 1.17.1 (ndtr, ndtri, betainc, gammaln) and scipy.stats.t.cdf.

describe('normal distribution', () => {
  it.each([
    [-8.5, 9.47953482220325e-18],
    [-3.2, 0.0006871379379158471],
    [-0.7, 0.24196365222307303],
    [1.3, 0.9031995154143897],
    [2.9999, 0.998649658717045],
    [4.5, 0.9999966023268753],
  ])('Φ(%d)', (x, p) => {
    expectRelative(normalCdf(x), p, 1e-13)
  })

  it('tails: Φ(−40) underflows to 0, Φ(∞) = 1', () => {
    expect(normalCdf(-40)).toBe(0)
    expect(normalCdf(Number.POSITIVE_INFINITY)).toBe(1)
  })

  it.each([
    [1e-10, -6.361340902404056],
    [0.01, -2.3263478740408408],
    [0.025, -1.959963984540054],
    [0.3, -0.5244005127080409],
    [0.6, 0.2533471031357997],
    [0.99, 2.3263478740408408],
    [1 - 1e-12, 7.0344869100478356],
  ])('Φ⁻¹(%d) (Wichura AS241)', (p, z) => {
    expectRelative(normalQuantile(p), z, 1e-12)
  })

  it('Φ(Φ⁻¹(p)) = p', () => {
    for (const p of [1e-12, 0.001, 0.2, 0.5, 0.8, 0.999])
      expectRelative(normalCdf(normalQuantile(p)), p, 1e-13)
  })

  it('Φ⁻¹ outside (0, 1) throws (it would be infinite)', () => {
    expect(() => normalQuantile(0)).toThrow(RangeError)
    expect(() => normalQuantile(1)).toThrow(RangeError)
  })
})

describe('gamma, factorials and the incomplete beta function', () => {
  it.each([
    [0.3, 1.0957979948180756],
    [4.5, 2.4537365708424423],
    [50.5, 146.51925549072064],
    [1234.5, 7550.550901077894],
  ])('ln Γ(%d)', (x, v) => {
    expectRelative(lnGamma(x), v, 1e-14)
  })

  it('log factorials and binomial coefficients', () => {
    expect(logFactorial(0)).toBe(0)
    expectRelative(logFactorial(10), Math.log(3_628_800), 1e-15)
    expectRelative(logChoose(50, 25), Math.log(126_410_606_437_752), 1e-13)
    expectRelative(logFactorial(1000), 5912.128178488164, 1e-14) // scipy gammaln(1001)
  })

  it('memoized log factorials are the values computed afresh; bad arguments still throw', () => {
    for (const k of [0, 1, 170, 171, 999, 5000, 2 ** 20 + 3]) {
      const fresh =
        k <= 170 ? Math.log([...Array(k).keys()].reduce((p, i) => p * (i + 1), 1)) : lnGamma(k + 1)
      expect(logFactorial(k)).toBe(fresh)
      expect(logFactorial(k)).toBe(fresh) // second call: from the table
    }
    for (const bad of [-1, 2.5, Number.NaN, 2 ** 60]) expect(() => logFactorial(bad)).toThrow(RangeError)
  })

  it.each([
    [0.2, 2.5, 3.5, 0.1328173097780492],
    [0.7, 10, 0.5, 0.008322504862464206],
    [0.999, 30, 2, 0.9995438962809783],
    [0.05, 0.5, 0.5, 0.14356629312870628],
  ])('I_%d(%d, %d)', (x, a, b, v) => {
    expectRelative(regularizedIncompleteBeta(x, a, b), v, 1e-12)
  })

  it.each([
    [-1.5, 3, 0.11529193262241147],
    [0.2, 7, 0.5764166242551011],
    [4, 30, 0.9998090771819581],
    [2.5, 1, 0.8788810584091566],
  ])('Student t CDF(%d; df=%d)', (t, df, v) => {
    expectRelative(studentTCdf(t, df), v, 1e-12)
  })

  it('two-sided t p-values at the edges', () => {
    expect(studentTTwoSidedP(0, 5)).toBe(1)
    expect(studentTTwoSidedP(1e200, 5)).toBe(0)
    expect(() => studentTTwoSidedP(1, 0)).toThrow(RangeError)
  })
})
