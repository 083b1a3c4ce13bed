import { describe, expect, it } from 'vitest'
import { formatEffect } from '../../src/detect/decide.js'
import {
  fmtMde,
  fmtP,
  fmtPoints,
  fmtPointsCi,
  fmtPp,
  mcnemarText,
  mdeNote,
  roundHalfAway,
} from '../../src/util/format.js'

describe('points print one way', () => {
  it('one decimal, half away from zero on the decimal form, U+2212 minus', () => {
    expect(roundHalfAway(-18.75)).toBe(-18.8)
    expect(roundHalfAway(18.75)).toBe(18.8)
    expect(roundHalfAway(1.45)).toBe(1.5) // 1.45 is 1.4499… in binary
    expect(roundHalfAway(-1.45)).toBe(-1.5)
    expect(roundHalfAway(-0.04)).toBe(0)
    expect(fmtPp(-18.75)).toBe('−18.8 pp')
    expect(fmtPp(18.75)).toBe('+18.8 pp')
    expect(fmtPp(0)).toBe('±0.0 pp')
    expect(fmtPoints(-18.75, { unit: false })).toBe('−18.8')
    expect(fmtPointsCi([-30.05, 0])).toBe('[−30.1, 0.0]')
    expect(fmtMde({ n: 400, mde_pp: 12.25 })).toBe('12.3 pp')
    expect(fmtMde({ n: 0, mde_pp: null })).toBe('—')
    // Not detectable at this n: said, with the reason beside the table, never a bare dash.
    const none = {
      n: 16,
      mde_pp: null,
      reason: 'not detectable: even with every discordant pair in one direction the power is 0.3736',
    }
    expect(fmtMde(none)).toBe('none at this n')
    expect(mdeNote(none)).toBe(
      'at n = 16, not detectable: even with every discordant pair in one direction the power is 0.3736',
    )
    expect(mdeNote({ n: 400, mde_pp: 12.25, reason: null })).toBeNull()
    // The decision stage prints the same figure the report does.
    expect(
      formatEffect({ estimate: -18.75, ci: [-30.05, -7.45], unit: 'pp', method: 'x', n: 80, reason: null }),
    ).toBe('−18.8 pp [−30.1, −7.5]')
    for (const s of [
      fmtPp(-18.75),
      formatEffect({ estimate: -18.75, ci: null, unit: 'pp', method: '', n: 1, reason: null }),
    ])
      expect(s).not.toContain('-')
  })
})

describe('p-values print one way', () => {
  it('3 significant digits, scientific below 1e-4, exactly 1 as "1"', () => {
    expect(fmtP(0.0703125)).toBe('0.0703')
    expect(fmtP(0.03515625)).toBe('0.0352')
    expect(fmtP(1.9e-4)).toBe('0.00019')
    expect(fmtP(3.2e-7)).toBe('3.20e-7')
    expect(fmtP(1)).toBe('1')
    expect(fmtP(null)).toBe('—')
  })

  it('McNemar with no outcome-complete block is "—" with "no blocks", never p = 1', () => {
    const m = { p_two_sided: 1, p_one_sided: 1, p_mid: 1, note: 'no discordant pairs' }
    expect(mcnemarText({ n: 0, mcnemar: m })).toBe('— (no blocks)')
    expect(mcnemarText({ n: 20, mcnemar: m })).toBe('1 · 1 · 1 (no discordant pairs)')
  })
})
