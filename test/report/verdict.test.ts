// The verdict in plain sentences (report/verdict.ts): one per compared metric, the confirmed ones named
// in the headline, the notation left to the sections below.
import { describe, expect, it } from 'vitest'
import type { Decision, Signal } from '../../src/detect/schema.js'
import { codeSpan } from '../../src/report/escape.js'
import { confirmedMetrics, verdictSentences } from '../../src/report/verdict.js'
import { confirmedRun } from '../github/support.js'

/** The field case: OpenCode vs Pi on 16 tasks, spend confirmed, the resolve-rate deficit cleared. */
function opencodeVsPi(): Decision {
  const d = confirmedRun()
  const resolved = d.signals.find((s) => s.metric === 'resolved') as Signal
  const key = 'exp/pi-vs-opencode'
  const base = { ...resolved, key, baseline: 'pi', treatment: 'opencode' }
  d.comparisons = [{ ...d.comparisons[0]!, key, baseline: 'pi', treatment: 'opencode' }]
  d.signals = [
    { ...base, state: 'cleared', effect: { ...resolved.effect, estimate: -18.75, n: 16 } },
    {
      ...base,
      id: `${key}:spend_usd`,
      metric: 'spend_usd',
      state: 'confirmed',
      effect: { estimate: 2.2149, ci: [1.9, 2.6], unit: 'ratio', method: 'bootstrap-t', n: 16, reason: null },
    },
  ]
  d.improvements = []
  return d
}

describe('the verdict in plain sentences', () => {
  it('reads as the field case asks: spend confirmed, resolve rates not distinguishable (cleared)', () => {
    const lines = verdictSentences(
      opencodeVsPi(),
      null,
      (id) => ({ opencode: 'OpenCode', pi: 'Pi' })[id] ?? id,
    )
    expect(lines.slice(0, 2)).toEqual([
      'Resolve rates are not distinguishable at n = 16 (−18.8 points, cleared on the rerun).',
      "OpenCode spent 2.2× Pi's dollars on the same 16 tasks — confirmed on a rerun.",
    ])
    expect(lines.join(' ')).not.toMatch(/b′|θ|e-value|\[/)
  })

  it('the headline names each confirmed metric and never a cleared one', () => {
    expect(confirmedMetrics(opencodeVsPi(), codeSpan)).toBe('spend (`opencode` vs `pi`)')
    const d = opencodeVsPi()
    d.signals[0]!.state = 'confirmed'
    expect(confirmedMetrics(d, codeSpan)).toBe('resolve rate and spend (`opencode` vs `pi`)')
    d.signals.forEach((s) => {
      s.state = 'cleared'
    })
    expect(confirmedMetrics(d, codeSpan)).toBeNull()
  })

  it('an unconfirmed crossing says a rerun decides; several comparisons are listed by name', () => {
    const d = opencodeVsPi()
    d.signals[1]!.state = 'unconfirmed'
    d.comparisons.push({ ...d.comparisons[0]!, key: 'exp/pi-vs-codex', treatment: 'codex' })
    const lines = verdictSentences(d, null, codeSpan)
    expect(lines).toContain(
      "- `opencode` spent 2.2× `pi`'s dollars on the same 16 tasks — not yet confirmed: a rerun decides.",
    )
    expect(lines).toContain('`opencode` vs `pi`:')
    expect(lines).toContain('`codex` vs `pi`: no figure to compare.')
  })
})
