import { describe, expect, it } from 'vitest'
import { confirm } from '../../src/detect/confirm.js'
import { selectConfirmation } from '../../src/detect/confirm-plan.js'
import { detect, formatEffect } from '../../src/detect/decide.js'
import { type Decision, DecisionSchema } from '../../src/detect/schema.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { type CellSpec, type FixtureSpec, makeComparison, policy, ref, rows } from './fixtures.js'

const r = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'r', ...extra })
const u = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'u', ...extra })

// First run: 30 blocks, b = 6 (inst-01..06), c = 1 (inst-30) → −16.7 pp, a breach.
const first = makeComparison({
  cells: ['a', 'b'],
  rows: rows(30, (i) => {
    if (i < 6) return { a: r(), b: u() }
    if (i === 29) return { a: u(), b: r() }
    return i < 20 ? { a: r(), b: r() } : { a: u(), b: u() }
  }),
})

function firstDecision(c = first, p = policy): Decision {
  const d = detect({ current: ref(c), policy: p, quarantine: [] })
  const sel = selectConfirmation(d, p.confirmation.max_blocks)
  d.affected_blocks = sel.instances
  d.confirmation = {
    round: 1,
    plan: 'confirm-1/plan.json',
    seed: 7,
    cells: sel.cells,
    instances: sel.instances,
    legs: 2,
    capped: sel.capped,
  }
  return d
}

/** A rerun comparison over only the given instances (round 1). */
function rerunOf(rowsSpec: FixtureSpec['rows'], cells = ['a', 'b']) {
  return makeComparison({ runId: 'run-1-c1', round: 1, cells, rows: rowsSpec })
}

function decide(original: Decision, rerun: ReturnType<typeof rerunOf>, originalComparison = first) {
  const d = confirm({
    original,
    originalComparison,
    rerun: ref(rerun, 'confirm-1/comparison.json'),
    originalRef: ref(originalComparison, '../comparison.json'),
  })
  DecisionSchema.parse(d)
  return d
}

const affected = ['inst-01', 'inst-02', 'inst-03', 'inst-04', 'inst-05', 'inst-06', 'inst-30']

describe('confirm: decide on the rerun data only', () => {
  it('the deficit holds on the rerun (b′ = 5, c′ = 0): confirmed, both runs reported', () => {
    const original = firstDecision()
    expect(original.status).toBe('breach')
    expect(original.affected_blocks).toEqual(affected)
    const rerun = rerunOf(
      Object.fromEntries(affected.map((id, i) => [id, i < 5 ? { a: r(), b: u() } : { a: r(), b: r() }])),
    )
    const d = decide(original, rerun)
    expect(d.status).toBe('confirmed')
    expect(d.round).toBe(1)
    const s = d.signals[0]!
    expect(s.state).toBe('confirmed')
    // The first-run effect is kept; the rerun sits beside it.
    expect(s.effect.estimate).toBeCloseTo(-16.6667, 3)
    expect(s.rerun).toMatchObject({
      round: 1,
      planned_blocks: 7,
      complete_blocks: 7,
      b: 5,
      c: 0,
      holds: true,
    })
    expect(s.rerun!.combined.estimate).toBeCloseTo((-5 / 30) * 100, 10)
    expect(s.rerun!.p_one_sided).toBeCloseTo(1 / 32, 12)
    expect(d.runs.map((x) => [x.round, x.comparison])).toEqual([
      [0, '../comparison.json'],
      [1, 'confirm-1/comparison.json'],
    ])
    expect(d.comparisons[0]).toMatchObject({ status: 'confirmed' })
    expect(d.summary).toMatch(/^confirmed regression: b vs a −16\.7 pp/)
  })

  it('the flips do not repeat (b′ = 2, c′ = 1 → −3.3 pp): cleared, never filed', () => {
    const rerun = rerunOf(
      Object.fromEntries(
        affected.map((id, i) => [
          id,
          i < 2 ? { a: r(), b: u() } : i === 6 ? { a: u(), b: r() } : { a: r(), b: r() },
        ]),
      ),
    )
    const d = decide(firstDecision(), rerun)
    expect(d.status).toBe('cleared')
    expect(d.signals[0]!.state).toBe('cleared')
    expect(d.signals[0]!.rerun!.combined.estimate).toBeCloseTo((-1 / 30) * 100, 10)
    expect(d.signals[0]!.rerun!.reason).toMatch(/did not hold/)
    // inst-03..06 flipped (b recovered), inst-30 did not: the flipped ones are unstable by evidence.
    expect(d.unstable_instances).toEqual(['inst-03', 'inst-04', 'inst-05', 'inst-06'])
  })

  it('an incomplete rerun (infra errors) is inconclusive, with a health error — not confirmed, not cleared', () => {
    const rerun = rerunOf(
      Object.fromEntries(
        affected.map((id, i) => [id, i < 4 ? { a: r(), b: { o: 'i' } } : { a: r(), b: u() }]),
      ),
    )
    const d = decide(firstDecision(), rerun)
    expect(d.status).toBe('inconclusive')
    expect(d.signals[0]!.state).toBe('inconclusive')
    expect(d.health.find((h) => h.code === 'rerun_incomplete')!.message).toMatch(
      /3 of 7 rerun blocks complete/,
    )
  })

  it('F07: rerun losses only on unstable instances (mixed trials) never confirm', () => {
    const rerun = rerunOf(
      Object.fromEntries(
        affected.map((id, i) => [
          id,
          i < 6
            ? { a: r({ trials: 3, resolved_trials: 3 }), b: u({ trials: 3, resolved_trials: 1 }) }
            : { a: r({ trials: 3, resolved_trials: 3 }), b: r({ trials: 3, resolved_trials: 3 }) },
        ]),
      ),
    )
    const d = decide(firstDecision(), rerun)
    const s = d.signals[0]!
    // Six losses of 2/3 of a resolution each: −13.3 pp, beyond the threshold — but all unstable.
    expect(s.rerun!.b).toBe(6)
    expect(s.rerun!.combined.estimate).toBeCloseTo((-4 / 30) * 100, 10)
    expect(s.state).toBe('cleared')
    expect(s.rerun!.reason).toMatch(/only on unstable instances/)
  })

  it('F08: an A/A breach at a strict threshold does not survive an independent rerun', () => {
    const strict = { ...policy, thresholds: { ...policy.thresholds, resolved_deficit_pp: 5 } }
    const aa = makeComparison({
      cells: ['a', 'b'],
      B: 500,
      rows: rows(500, (i) => {
        if (i < 70) return { a: r(), b: r() }
        if (i < 130) return { a: r(), b: u() }
        if (i < 155) return { a: u(), b: r() }
        return { a: u(), b: u() }
      }),
    })
    const original = firstDecision(aa, { ...strict, confirmation: { enabled: true, max_blocks: 100 } })
    expect(original.status).toBe('breach')
    expect(original.affected_blocks).toHaveLength(85)
    // Noise: on the rerun the 85 discordant blocks split evenly (b′ = 21, c′ = 22).
    const rerun = rerunOf(
      Object.fromEntries(
        original.affected_blocks.map((id, i) => [
          id,
          i % 2 === 0 ? (i < 42 ? { a: r(), b: u() } : { a: u(), b: r() }) : { a: r(), b: r() },
        ]),
      ),
    )
    const d = decide(original, rerun, aa)
    expect(d.signals[0]!.rerun).toMatchObject({ b: 21, c: 22 })
    expect(d.status).toBe('cleared')
  })

  it('a cost breach is confirmed when the rerun blocks are still over the threshold', () => {
    const costly = makeComparison({
      cells: ['a', 'b'],
      rows: rows(30, () => ({ a: r({ spend: 1 }), b: r({ spend: 2 }) })),
    })
    const original = firstDecision(costly)
    expect(original.signals.map((s) => s.metric)).toEqual(['spend_usd'])
    expect(original.affected_blocks).toHaveLength(30)
    const again = rerunOf(
      Object.fromEntries(
        original.affected_blocks.map((id) => [id, { a: r({ spend: 1 }), b: r({ spend: 1.9 }) }]),
      ),
    )
    const d = decide(original, again, costly)
    expect(d.status).toBe('confirmed')
    expect(d.signals[0]!.rerun!.combined.estimate).toBeCloseTo(1.9, 10)
    expect(d.signals[0]!.rerun!.rerun_only.estimate).toBeCloseTo(1.9, 10)

    const cheap = rerunOf(
      Object.fromEntries(
        original.affected_blocks.map((id) => [id, { a: r({ spend: 1 }), b: r({ spend: 1.1 }) }]),
      ),
    )
    const cleared = decide(original, cheap, costly)
    expect(cleared.status).toBe('cleared')
    expect(cleared.signals[0]!.rerun!.reason).toMatch(/did not hold/)
  })
})

describe('confirm: one definition of the rerun figures, each with its n', () => {
  // First run, 16 blocks: b spends 2.3× on inst-01..15 and 1.2× on inst-16; b loses inst-01, inst-02
  // and inst-16 (−18.75 pp). Two signals: the resolve-rate deficit (driving inst-01, inst-02, inst-16)
  // and spend (driving inst-01..15). max_blocks 6 caps the rerun at inst-01, inst-02, inst-16,
  // inst-03, inst-04, inst-05 — inst-16 is rerun for the deficit, not for spend.
  const capped = { ...policy, confirmation: { enabled: true, max_blocks: 6 } }
  const loses = new Set([0, 1, 15])
  const panel = makeComparison({
    cells: ['a', 'b'],
    rows: rows(16, (i) => ({
      a: r({ spend: 1 }),
      b: (loses.has(i) ? u : r)({ spend: i === 15 ? 1.2 : 2.3 }),
    })),
  })
  const rerunIds = ['inst-01', 'inst-02', 'inst-16', 'inst-03', 'inst-04', 'inst-05']
  // Rerun: b spends 3, 2, 2, 2, 2 and 1.5 against 1 → 12.5 / 6 = 2.0833×; b loses only inst-01.
  const rerunSpend: Record<string, number> = {
    'inst-01': 3,
    'inst-02': 2,
    'inst-03': 2,
    'inst-04': 2,
    'inst-05': 2,
    'inst-16': 1.5,
  }
  const again = rerunOf(
    Object.fromEntries(
      rerunIds.map((id) => [
        id,
        { a: r({ spend: 1 }), b: (id === 'inst-01' ? u : r)({ spend: rerunSpend[id] }) },
      ]),
    ),
  )

  it('spend decides on the rerun blocks only (n = 6, 2.08×) — the rerun comparison.json’s own figure', () => {
    const original = firstDecision(panel, capped)
    expect(original.signals.map((s) => s.metric)).toEqual(['resolved', 'spend_usd'])
    expect(original.affected_blocks).toEqual(rerunIds)
    expect(original.confirmation!.capped).toBe(true)
    const first = original.signals[1]!
    expect(first.effect.estimate).toBeCloseTo((15 * 2.3 + 1.2) / 16, 12)
    expect(first.effect.n).toBe(16)

    const d = decide(original, again, panel)
    const spend = d.signals.find((s) => s.metric === 'spend_usd')!
    const rr = spend.rerun!
    expect(spend.state).toBe('confirmed')
    expect(rr.decided_on).toBe('rerun_only')
    expect(rr.planned_blocks).toBe(6)
    expect(rr.complete_blocks).toBe(6)
    expect([...rr.instances].sort()).toEqual([...rerunIds].sort())
    // Rerun blocks only: every rerun block with its rerun value, inst-16 included.
    expect(rr.rerun_only.n).toBe(6)
    expect(rr.rerun_only.estimate).toBeCloseTo(12.5 / 6, 12)
    // … and exactly the rerun comparison.json's figure, interval included.
    const own = again.comparisons[0]!.metrics.spend_usd.ratio_of_means
    expect(rr.rerun_only.estimate).toBe(own.estimate)
    expect(rr.rerun_only.ci).toEqual(own.ci)
    // Combined: 10 blocks keep 2.3 from the first run, the 6 rerun blocks take their rerun values.
    expect(rr.combined.n).toBe(16)
    expect(rr.combined.estimate).toBeCloseTo((10 * 2.3 + 12.5) / 16, 12)
    // The cost is not excused: the combined resolve rate is −1/16 (inst-01 only), no advantage.
    expect(rr.resolved_advantage!.estimate).toBeCloseTo(-100 / 16, 10)
    expect(rr.resolved_advantage!.n).toBe(16)
    expect(rr.reason).toBe(
      'rerun blocks only (n = 6): 2.08× > 1.5× without a resolved advantage (combined resolve-rate difference −6.3 pp, n = 16)',
    )
  })

  it('the deficit decides on the combined figure (n = 16) with the direction on the rerun blocks', () => {
    const d = decide(firstDecision(panel, capped), again, panel)
    const deficit = d.signals.find((s) => s.metric === 'resolved')!
    const rr = deficit.rerun!
    expect(rr.decided_on).toBe('combined')
    expect(rr.combined.n).toBe(16)
    expect(rr.combined.estimate).toBeCloseTo(-100 / 16, 10)
    expect(rr.rerun_only.n).toBe(6)
    expect(rr.rerun_only.estimate).toBeCloseTo(-100 / 6, 10)
    expect(rr.rerun_only.estimate).toBe(again.comparisons[0]!.outcome.diff_pp)
    expect(rr).toMatchObject({ b: 1, c: 0, holds: false })
    expect(deficit.state).toBe('cleared')
    expect(rr.reason).toBe(
      'combined: rerun blocks replaced in the full panel (n = 16): −6.3 pp (threshold −10), b′ = 1, c′ = 0 on the rerun blocks only (n = 6): did not hold',
    )
  })

  it('the summary and the report quote the deciding figure with its n, the first run’s beside it', () => {
    const d = decide(firstDecision(panel, capped), again, panel)
    expect(d.status).toBe('confirmed')
    const spend = d.signals.find((s) => s.metric === 'spend_usd')!
    const decided = formatEffect(spend.rerun!.rerun_only)
    const first = formatEffect(spend.effect)
    expect(decided).toMatch(/^2\.08× \[/)
    expect(first).toMatch(/^2\.23× \[/)
    expect(d.summary).toBe(
      `confirmed regression: b vs a ${decided} spend_usd on rerun blocks only (n = 6), first run ${first} (n = 16)`,
    )
    const md = decisionMarkdown({ decision: d })
    const row = md.split('\n').find((l) => l.startsWith('| `b` vs `a`: spend |'))!
    expect(row).toContain(`| ${first} (n = 16) |`)
    expect(row).toContain(
      `round 1: decided on rerun blocks only (n = 6): ${decided}; also combined: rerun blocks replaced in the full panel (n = 16): ${formatEffect(spend.rerun!.combined)}; 6 of 6 rerun blocks complete, b′ = 1, c′ = 0`,
    )
    expect(md).not.toContain('projected')
  })
})
