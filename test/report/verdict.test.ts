// The verdict in plain sentences (report/verdict.ts): one per compared metric, the confirmed ones named
// in the headline, the notation left to the sections below.
import { describe, expect, it } from 'vitest'
import type { Decision, Signal } from '../../src/detect/schema.js'
import { codeSpan } from '../../src/report/escape.js'
import { confirmedMetrics, verdictSentences } from '../../src/report/verdict.js'
import { type CellSpec, makeComparison } from '../detect/fixtures.js'
import { breachingComparison, confirmedRun, firstRun } from '../github/support.js'

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
      'Resolve rates are not distinguishable at n = 16 (−18.8 points, cleared on a rerun of 6 blocks).',
      "OpenCode spent 2.2× Pi's dollars on the same 16 tasks — confirmed on a rerun of 6 blocks.",
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

describe('the verdict of a rerun report: the rerun’s own n beside the first run’s', () => {
  const r = (): CellSpec => ({ o: 'r' })
  const u = (): CellSpec => ({ o: 'u' })
  /** The rerun's comparison.json: only the blocks the confirmation reran (round 1). */
  function rerunComparison(holds: boolean) {
    return makeComparison({
      cells: ['a', 'b'],
      runId: 'run-7',
      round: 1,
      rows: Object.fromEntries(
        firstRun().affected_blocks.map((id) => [id, { a: r(), b: holds ? u() : r() }]),
      ),
    })
  }

  it('a confirmed deficit names the 6 rerun blocks; figures without a signal are the rerun tasks', () => {
    expect(firstRun().affected_blocks).toHaveLength(6)
    expect(verdictSentences(confirmedRun(), rerunComparison(true), codeSpan)).toEqual([
      '`b` resolved fewer of the same 30 tasks than `a` (−20.0 points) — confirmed on a rerun of 6 blocks.',
      "`b` spent 1.0× `a`'s dollars on the 6 rerun tasks, within the 1.5× threshold.",
      "`b` sent 1.0× `a`'s fresh input tokens on the 6 rerun tasks, within the 1.5× threshold.",
      "`b` made 1.0× `a`'s proxy requests on the 6 rerun tasks, within the 1.5× threshold.",
    ])
  })

  it('a cleared deficit: "at n = 30", cleared on a rerun of 6 blocks', () => {
    const lines = verdictSentences(confirmedRun(false), rerunComparison(false), codeSpan)
    expect(lines[0]).toBe(
      'Resolve rates are not distinguishable at n = 30 (−20.0 points, cleared on a rerun of 6 blocks).',
    )
  })

  it('the first run’s report (round 0 comparison) keeps "the same 30 tasks"', () => {
    const lines = verdictSentences(firstRun(), breachingComparison, codeSpan)
    expect(lines[0]).toBe(
      '`b` resolved fewer of the same 30 tasks than `a` (−20.0 points) — not yet confirmed: a rerun decides.',
    )
    expect(lines[1]).toBe("`b` spent 1.0× `a`'s dollars on the same 30 tasks, within the 1.5× threshold.")
  })
})
