import { describe, expect, it } from 'vitest'
import { confirm } from '../../src/detect/confirm.js'
import { selectConfirmation } from '../../src/detect/confirm-plan.js'
import { detect, formatEffect } from '../../src/detect/decide.js'
import { DESIGNS } from '../../src/detect/designs/registry.js'

// These cases pin the rerun-exact design (decisions recorded before two-stage-split); the default
// design is exercised in confirm-two-stage.test.ts.
const DEFAULT_DESIGN = DESIGNS['rerun-exact']

import { competitivePairs } from '../../src/detect/pairs.js'
import { type Decision, DecisionSchema } from '../../src/detect/schema.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { type CellSpec, type FixtureSpec, makeComparison, policy, ref, rows } from './fixtures.js'

const r = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'r', ...extra })
const u = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'u', ...extra })

// First run: 30 blocks, b = 6 (inst-01..06), c = 1 (inst-30) → −16.7 pp, a breach.
const firstRows = rows(30, (i) => {
  if (i < 6) return { a: r(), b: u() }
  if (i === 29) return { a: u(), b: r() }
  return i < 20 ? { a: r(), b: r() } : { a: u(), b: u() }
})
const first = makeComparison({ cells: ['a', 'b'], rows: firstRows })

/**
 * The rerun of the whole sample (here the whole 30-block panel): the given blocks as specified, every
 * other block as it was on the first run (so nothing else flips).
 */
function rerunPanel(changed: FixtureSpec['rows']) {
  return rerunOf({ ...firstRows, ...changed })
}

function firstDecision(c = first, p = policy): Decision {
  const d = detect({ current: ref(c), policy: p, quarantine: [] })
  const sel = selectConfirmation(d, p.confirmation.max_blocks, {
    pairs: (s) => competitivePairs(c, s.baseline, s.treatment),
    seed: 11,
    design: DEFAULT_DESIGN,
  })
  d.affected_blocks = sel.instances
  d.confirmation = {
    round: 1,
    plan: 'confirm-1/plan.json',
    seed: 7,
    cells: sel.cells,
    instances: sel.instances,
    legs: 2,
    capped: sel.capped,
    sample: sel.sample,
    design: {
      name: DEFAULT_DESIGN.name,
      version: DEFAULT_DESIGN.version,
      alpha: p.confirmation.alpha,
      statement: DEFAULT_DESIGN.statement(p.confirmation.alpha),
    },
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
    // The rerun is the whole panel (a seeded random sample of up to max_blocks = 50 blocks).
    expect([...original.affected_blocks].sort()).toEqual(Object.keys(firstRows).sort())
    expect(original.confirmation!.sample).toHaveLength(30)
    const rerun = rerunPanel(
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
      planned_blocks: 30,
      complete_blocks: 30,
      b: 5,
      c: 0,
      holds: true,
    })
    expect(s.rerun!.combined.estimate).toBeCloseTo((-5 / 30) * 100, 10)
    expect(s.rerun!.p_one_sided).toBeCloseTo(1 / 32, 12)
    // Decided by the exact one-sided McNemar on the rerun alone: p = 1/32 ≤ α = 0.05.
    expect(s.rerun!.test).toMatchObject({
      design: 'rerun-exact@1',
      n: 5,
      statistic: 5,
      alpha: 0.05,
      rejects: true,
    })
    expect(s.rerun!.test!.p_one_sided).toBe(1 / 32)
    expect(d.runs.map((x) => [x.round, x.comparison])).toEqual([
      [0, '../comparison.json'],
      [1, 'confirm-1/comparison.json'],
    ])
    expect(d.comparisons[0]).toMatchObject({ status: 'confirmed' })
    expect(d.summary).toMatch(
      /^confirmed regression: b vs a −16\.7 pp \[.*\] resolved on the first run \(n = 30\); rerun exact one-sided McNemar p = 0\.0313 ≤ α 0\.05 \(b′ = 5, c′ = 0; rerun blocks only \(n = 30\): .*\)$/,
    )
  })

  it('b′ = 4, c′ = 0 is not enough at α = 0.05 (p = 1/16), though the old point rule held it', () => {
    const rerun = rerunPanel(
      Object.fromEntries(affected.map((id, i) => [id, i < 4 ? { a: r(), b: u() } : { a: r(), b: r() }])),
    )
    const d = decide(firstDecision(), rerun)
    const s = d.signals[0]!
    // The combined figure (−13.3 pp) crosses the threshold and b′ > c′, but the test does not reject.
    expect(s.rerun!.combined.estimate).toBeCloseTo((-4 / 30) * 100, 10)
    expect(s.rerun!.test!.p_one_sided).toBe(1 / 16)
    expect(s.state).toBe('cleared')
    expect(s.rerun!.reason).toBe(
      'b′ = 4, c′ = 0, exact one-sided McNemar p = 0.0625 > α = 0.05: did not hold',
    )
    // A declared α of 0.1 confirms the same rerun.
    const loose = { ...firstDecision() }
    loose.policy = { ...loose.policy, confirmation: { ...loose.policy.confirmation, alpha: 0.1 } }
    expect(decide(loose, rerun).status).toBe('confirmed')
  })

  it('the flips do not repeat (b′ = 2, c′ = 1 → −3.3 pp): cleared, never filed', () => {
    const rerun = rerunPanel(
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
    expect(d.signals[0]!.rerun!.reason).toMatch(/p = 0\.500 > α = 0\.05: did not hold/)
    // inst-03..06 flipped (b recovered), inst-30 did not: the flipped ones are unstable by evidence.
    expect(d.unstable_instances).toEqual(['inst-03', 'inst-04', 'inst-05', 'inst-06'])
  })

  it('an incomplete rerun (infra errors) is inconclusive, with a health error — not confirmed, not cleared', () => {
    // Infra errors on 10 of the 30 rerun blocks: 20 complete, below min_coverage 0.8.
    const rerun = rerunPanel(
      Object.fromEntries(
        Object.keys(firstRows)
          .slice(0, 10)
          .map((id) => [id, { a: r(), b: { o: 'i' } }]),
      ),
    )
    const d = decide(firstDecision(), rerun)
    expect(d.status).toBe('inconclusive')
    expect(d.signals[0]!.state).toBe('inconclusive')
    expect(d.health.find((h) => h.code === 'rerun_incomplete')!.message).toMatch(
      /20 of 30 rerun blocks complete/,
    )
  })

  it('F07: rerun losses only on unstable instances (mixed trials) never confirm', () => {
    const rerun = rerunPanel(
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
    const original = firstDecision(aa, {
      ...strict,
      confirmation: { enabled: true, max_blocks: 100, alpha: 0.05 },
    })
    expect(original.status).toBe('breach')
    // The rerun is a seeded random sample of 100 of the 500 blocks (max_blocks).
    expect(original.affected_blocks).toHaveLength(100)
    // Noise: on the rerun half the sampled blocks are discordant, in both directions (b′ = 21, c′ = 29).
    const rerun = rerunOf(
      Object.fromEntries(
        original.affected_blocks.map((id, i) => [
          id,
          i % 2 === 0 ? (i < 42 ? { a: r(), b: u() } : { a: u(), b: r() }) : { a: r(), b: r() },
        ]),
      ),
    )
    const d = decide(original, rerun, aa)
    expect(d.signals[0]!.rerun).toMatchObject({ b: 21, c: 29 })
    expect(d.status).toBe('cleared')
  })

  it('a cost breach is confirmed when the sampled rerun blocks are still over the threshold', () => {
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
    // Every one of the 30 sampled blocks is above 1.5×: exact Wilcoxon p = 2^−30.
    expect(d.signals[0]!.rerun!.test).toMatchObject({ n: 30, statistic: 465, rejects: true })
    expect(d.signals[0]!.rerun!.test!.p_one_sided).toBe(2 ** -30)

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

describe('confirm: ratios are tested on a random sample, never on the blocks that crossed', () => {
  // First run, 16 blocks: b spends 2.3× on inst-01..15 and 1.2× on inst-16; b loses inst-01, inst-02
  // and inst-16 (−18.75 pp). Two signals: the resolve-rate deficit and spend. max_blocks 6: the rerun
  // is a seeded random sample of 6 of the 16 cost-complete blocks (no room is left for more).
  const capped = { ...policy, confirmation: { enabled: true, max_blocks: 6, alpha: 0.05 } }
  const loses = new Set([0, 1, 15])
  const panel = makeComparison({
    cells: ['a', 'b'],
    rows: rows(16, (i) => ({
      a: r({ spend: 1 }),
      b: (loses.has(i) ? u : r)({ spend: i === 15 ? 1.2 : 2.3 }),
    })),
  })
  const original = firstDecision(panel, capped)
  const sample = original.confirmation!.sample!
  // Rerun: b spends 3 on the first sampled block, 2 on the others (against 1); b loses the first only.
  const again = rerunOf(
    Object.fromEntries(
      sample.map((id, i) => [id, { a: r({ spend: 1 }), b: (i === 0 ? u : r)({ spend: i === 0 ? 3 : 2 }) }]),
    ),
  )

  it('the sample is seeded, of the panel, and independent of which blocks crossed', () => {
    expect(original.signals.map((s) => s.metric)).toEqual(['resolved', 'spend_usd'])
    expect(sample).toHaveLength(6)
    expect(original.affected_blocks).toEqual(sample)
    expect(original.confirmation!.capped).toBe(true)
    // Same seed, same sample; another seed, another sample (of the same size).
    const again1 = selectConfirmation(original, 6, {
      pairs: (s) => competitivePairs(panel, s.baseline, s.treatment),
      seed: 11,
    })
    expect(again1.sample).toEqual(sample)
    const other = selectConfirmation(original, 6, {
      pairs: (s) => competitivePairs(panel, s.baseline, s.treatment),
      seed: 12,
    })
    expect(other.sample).toHaveLength(6)
    expect(other.sample).not.toEqual(sample)
  })

  it('spend: exact Wilcoxon on the sampled rerun blocks (all above 1.5×: p = 1/64) confirms', () => {
    const d = decide(original, again, panel)
    const spend = d.signals.find((s) => s.metric === 'spend_usd')!
    const rr = spend.rerun!
    expect(spend.state).toBe('confirmed')
    expect(rr.decided_on).toBe('rerun_only')
    expect(rr.rerun_only.n).toBe(6)
    expect(rr.rerun_only.estimate).toBeCloseTo(13 / 6, 12)
    expect(rr.rerun_only.estimate).toBe(again.comparisons[0]!.metrics.spend_usd.ratio_of_means.estimate)
    expect(rr.test).toMatchObject({ n: 6, statistic: 21, rejects: true, advantage_p: 1 })
    expect(rr.test!.p_one_sided).toBe(1 / 64)
  })

  it('the deficit: one loss on the rerun (b′ = 1, c′ = 0, p = 0.5) does not hold', () => {
    const d = decide(original, again, panel)
    const deficit = d.signals.find((s) => s.metric === 'resolved')!
    expect(deficit.rerun).toMatchObject({ b: 1, c: 0, holds: false })
    expect(deficit.rerun!.test!.p_one_sided).toBe(0.5)
    expect(deficit.state).toBe('cleared')
  })

  it('a resolved advantage excuses the cost only by the exact one-sided McNemar at α', () => {
    // b resolves 5 sampled blocks a loses … but only 6 blocks: c′ = 5, b′ = 0 → p = 1/32 ≤ 0.05.
    const better = rerunOf(
      Object.fromEntries(
        sample.map((id, i) => [id, { a: (i < 5 ? u : r)({ spend: 1 }), b: r({ spend: 2 }) }]),
      ),
    )
    const spend = decide(original, better, panel).signals.find((s) => s.metric === 'spend_usd')!
    expect(spend.rerun!.test!.advantage_p).toBe(1 / 32)
    expect(spend.state).toBe('cleared')
    expect(spend.rerun!.reason).toMatch(/resolved advantage .* p = 0\.0313 ≤ α = 0\.05\): not a regression$/)
    // Four wins (p = 1/16) do not excuse it.
    const fewer = rerunOf(
      Object.fromEntries(
        sample.map((id, i) => [id, { a: (i < 4 ? u : r)({ spend: 1 }), b: r({ spend: 2 }) }]),
      ),
    )
    expect(decide(original, fewer, panel).signals.find((s) => s.metric === 'spend_usd')!.state).toBe(
      'confirmed',
    )
  })

  it('the summary and the report quote the deciding test with its n, the first run’s figure beside it', () => {
    const d = decide(original, again, panel)
    expect(d.status).toBe('confirmed')
    const spend = d.signals.find((s) => s.metric === 'spend_usd')!
    const first = formatEffect(spend.effect)
    expect(first).toMatch(/^2\.23× \[/)
    expect(d.summary).toContain(
      `b vs a ${first} spend_usd on the first run (n = 16); rerun exact one-sided Wilcoxon signed-rank on ln(T/B) − ln 1.5 p = 0.0156 ≤ α 0.05 (6 non-tied blocks; rerun blocks only (n = 6): ${formatEffect(spend.rerun!.rerun_only)})`,
    )
    const md = decisionMarkdown({ decision: d })
    const row = md.split('\n').find((l) => l.startsWith('| `b` vs `a`: spend |'))!
    expect(row).toContain(`| ${first} (n = 16; bootstrap BCa) |`)
    expect(row).toContain('6 of 6 rerun blocks complete')
    expect(md).toContain('Design (rerun-exact@1): Confirmation reruns a seeded random sample')
    expect(md).toContain('α = 0.05')
  })
})
