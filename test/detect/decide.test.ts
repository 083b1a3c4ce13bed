import { describe, expect, it } from 'vitest'
import { selectConfirmation } from '../../src/detect/confirm-plan.js'
import { detect, formatEffect } from '../../src/detect/decide.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { type CellSpec, makeComparison, policy, ref, rows } from './fixtures.js'

const r = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'r', ...extra })
const u = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'u', ...extra })

function run(spec: Parameters<typeof makeComparison>[0], quarantine: string[] = []) {
  const d = detect({ current: ref(makeComparison(spec)), policy, quarantine })
  DecisionSchema.parse(d)
  return d
}

describe('detect: competitive thresholds on complete blocks', () => {
  it('identical cells: ok, no signals, no confirmation', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: i < 20 ? r() : u(), b: i < 20 ? r() : u() })),
    })
    expect(d.status).toBe('ok')
    expect(d.signals).toEqual([])
    expect(d.comparisons[0]).toMatchObject({
      key: 'exp/a-vs-b',
      status: 'ok',
      coverage: { planned: 30, outcome: 30 },
    })
    expect(selectConfirmation(d, 50).instances).toEqual([])
  })

  it('a resolve-rate deficit of 16.7 pp is a breach, unconfirmed, with its interval and driving blocks', () => {
    // b = 6 baseline-only wins (inst-01..06), c = 1 (inst-30): (1 − 6)/30 = −16.7 pp.
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => {
        if (i < 6) return { a: r(), b: u() }
        if (i === 29) return { a: u(), b: r() }
        return i < 20 ? { a: r(), b: r() } : { a: u(), b: u() }
      }),
    })
    expect(d.status).toBe('breach')
    expect(d.signals).toHaveLength(1)
    const s = d.signals[0]!
    expect(s).toMatchObject({
      id: 'exp/a-vs-b:resolved',
      metric: 'resolved',
      state: 'unconfirmed',
      threshold: 10,
    })
    expect(s.effect.estimate).toBeCloseTo(-16.6667, 3)
    expect(s.effect.ci).not.toBeNull()
    expect(s.effect.ci![0]).toBeLessThan(s.effect.estimate!)
    expect(s.effect.ci![1]).toBeGreaterThan(s.effect.estimate!)
    expect(s.p_one_sided).toBeCloseTo(0.0625, 10) // P(X ≥ 6 | n = 7, ½) = 8/128
    expect(s.instances.driving).toEqual(['inst-01', 'inst-02', 'inst-03', 'inst-04', 'inst-05', 'inst-06'])
    expect(s.instances.opposing).toEqual(['inst-30'])
    expect(formatEffect(s.effect)).toMatch(/^−16\.7 pp \[/)
    expect(d.summary).toMatch(/^breach \(unconfirmed\): b vs a −16\.7 pp/)
    const sel = selectConfirmation(d, 50)
    expect(sel).toEqual({
      instances: ['inst-01', 'inst-02', 'inst-03', 'inst-04', 'inst-05', 'inst-06', 'inst-30'],
      cells: ['a', 'b'],
      signals: ['exp/a-vs-b:resolved'],
      capped: false,
      sample: [],
      estimate: [],
    })
    expect(selectConfirmation(d, 3)).toMatchObject({
      instances: ['inst-01', 'inst-02', 'inst-03'],
      capped: true,
    })
  })

  it('a deficit just under the threshold (9.9 pp) is not a breach', () => {
    // 101 blocks, b = 10, c = 0: −9.90 pp.
    const d = run({
      cells: ['a', 'b'],
      rows: rows(101, (i) => (i < 10 ? { a: r(), b: u() } : { a: u(), b: u() })),
    })
    expect(d.status).toBe('ok')
    expect(d.signals).toEqual([])
  })

  it('spend 2× with equal outcomes is a cost breach; the over-threshold blocks drive it, largest excess first', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: r({ spend: 1 }), b: r({ spend: i === 3 ? 9 : 2 }) })),
    })
    expect(d.status).toBe('breach')
    const s = d.signals.find((x) => x.metric === 'spend_usd')!
    expect(s.effect.estimate).toBeCloseTo(67 / 30, 10)
    expect(s.instances.driving[0]).toBe('inst-04')
    expect(s.instances.driving).toHaveLength(30)
    expect(s.resolved_advantage?.estimate).toBe(0)
    expect(d.signals.map((x) => x.metric)).toEqual(['spend_usd'])
  })

  it('a clear resolved advantage excuses higher cost (no alarm), and improvements are reported', () => {
    // Treatment resolves 12 more of 30 (c = 12, b = 0) at 2× spend.
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({
        a: i < 10 ? r({ spend: 1 }) : u({ spend: 1 }),
        b: i < 22 ? r({ spend: 2 }) : u({ spend: 2 }),
      })),
    })
    expect(d.signals).toEqual([])
    expect(d.status).toBe('ok')
    expect(d.improvements.map((x) => x.metric)).toEqual(['resolved'])
    expect(d.improvements[0]!.effect.estimate).toBeCloseTo(40, 10)
  })

  it('request and fresh-input ratios have their own thresholds', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, () => ({ a: r({ requests: 10, fresh: 1000 }), b: r({ requests: 16, fresh: 1400 }) })),
    })
    expect(d.signals.map((x) => [x.metric, Number(x.effect.estimate!.toFixed(2))])).toEqual([
      ['proxy_requests', 1.6],
    ])
  })

  it('each treatment is its own comparison with its own key', () => {
    const d = run({
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })),
    })
    expect(d.comparisons.map((v) => [v.key, v.status])).toEqual([
      ['exp/a-vs-b', 'ok'],
      ['exp/a-vs-c', 'breach'],
    ])
    expect(selectConfirmation(d, 50).cells).toEqual(['a', 'c'])
  })
})

describe('detect: evaluation health is never a competitive alarm', () => {
  it('F06: budget exhaustion on 12 of 30 blocks → inconclusive, coverage error, no signal, no rerun', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: r(), b: i < 12 ? { o: 'i', spend: 0 } : i < 16 ? u() : r() })),
    })
    expect(d.status).toBe('inconclusive')
    expect(d.signals).toEqual([])
    expect(d.comparisons[0]).toMatchObject({ status: 'inconclusive' })
    const codes = d.health.map((h) => [h.code, h.severity])
    expect(codes).toContainEqual(['coverage_low', 'error'])
    expect(codes).toContainEqual(['infra_errors', 'warning'])
    const low = d.health.find((h) => h.code === 'coverage_low')!
    expect(low.message).toMatch(/18 of 30 blocks complete \(60%\) is below min_coverage 80%/)
    expect(d.health.find((h) => h.code === 'infra_errors')!.message).toMatch(/budget_exceeded ×12/)
    expect(selectConfirmation(d, 50).instances).toEqual([])
  })

  it('a harness failing at startup on every instance is a health error, not a loss', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: i < 20 ? r() : u(), b: u({ exit: 'error', requests: 0, spend: 0 }) })),
    })
    expect(d.status).toBe('inconclusive')
    expect(d.signals).toEqual([])
    expect(d.health.find((h) => h.code === 'harness_startup_failure')).toMatchObject({
      cell: 'b',
      severity: 'error',
    })
  })

  it('F11: blocks planned but no attempt recorded → inconclusive, never a green ok', () => {
    const d = run({ cells: ['a', 'b'], rows: rows(10, () => ({ a: { o: 'm' }, b: { o: 'm' } })) })
    expect(d.status).toBe('inconclusive')
    expect(d.health[0]).toMatchObject({ code: 'no_legs_executed', severity: 'error' })
    expect(d.health[0]!.message).toMatch(/10 blocks were planned but no attempt was recorded/)
  })

  it('a missing leg is reported; the comparison is still decided while coverage holds', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: r(), b: i < 3 ? { o: 'm' } : r() })),
      missingLegs: [
        { leg: 'b-s1', cell: 'b', shard: 1, artifact: 'hw-exp-b-1', reason: 'artifact not downloaded' },
      ],
    })
    expect(d.health.find((h) => h.code === 'leg_missing')).toMatchObject({ severity: 'error', cell: 'b' })
    expect(d.status).toBe('ok')
  })

  it('missing telemetry: cost ratios are not decided; with valid outcome pairs the run completes with gaps (not a failed evaluation)', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: r(), b: r({ coverage: i < 10 ? 'missing' : 'complete', spend: 5 }) })),
    })
    expect(d.signals).toEqual([])
    expect(d.status).toBe('completed_with_gaps')
    expect(d.comparisons[0]!.reason).toMatch(/^outcome decided; cost/)
    expect(d.health.find((h) => h.code === 'telemetry_missing' && h.key === 'exp/a-vs-b')).toMatchObject({
      severity: 'warning',
    })
  })
})

describe('detect: flaky instances never confirm a breach (F07)', () => {
  const spec = {
    cells: ['a', 'b'],
    rows: rows(30, (i) => (i < 4 ? { a: r(), b: u() } : { a: r(), b: r() })),
  }

  it('driving blocks all quarantined/known-flaky → not_confirmable, no rerun, listed as unstable', () => {
    const d = run(spec, ['inst-01', 'inst-02', 'inst-03', 'inst-04'])
    expect(d.signals[0]).toMatchObject({ metric: 'resolved', flaky_only: true, state: 'not_confirmable' })
    expect(d.status).toBe('ok')
    expect(d.comparisons[0]!.reason).toMatch(/only on quarantined\/unstable instances/)
    expect(selectConfirmation(d, 50).instances).toEqual([])
    expect(d.unstable_instances).toEqual(['inst-01', 'inst-02', 'inst-03', 'inst-04'])
  })

  it('mixed trials mark an instance unstable by evidence', () => {
    const d = run({
      cells: ['a', 'b'],
      rows: rows(30, (i) =>
        i < 4
          ? { a: r({ trials: 3, resolved_trials: 2 }), b: u({ trials: 3, resolved_trials: 1 }) }
          : { a: r(), b: r() },
      ),
    })
    expect(d.signals[0]).toMatchObject({ flaky_only: true, state: 'not_confirmable' })
  })

  it('one stable driving block is enough to try confirmation (flaky ones are not rerun)', () => {
    const d = run(spec, ['inst-01', 'inst-02', 'inst-03'])
    expect(d.signals[0]).toMatchObject({ flaky_only: false, state: 'unconfirmed' })
    expect(d.signals[0]!.instances.flaky).toEqual(['inst-01', 'inst-02', 'inst-03'])
    expect(selectConfirmation(d, 50).instances).toEqual(['inst-04'])
  })
})

describe('detect: F08 A/A noise — one run is at most an unconfirmed signal', () => {
  it('500 blocks, b = 60, c = 25 (identical configs) → breach, unconfirmed, p one-sided small', () => {
    const spec = {
      cells: ['a', 'b'],
      B: 500,
      rows: rows(500, (i) => {
        if (i < 70) return { a: r(), b: r() }
        if (i < 130) return { a: r(), b: u() }
        if (i < 155) return { a: u(), b: r() }
        return { a: u(), b: u() }
      }),
    }
    // At the default 10-point threshold −7 pp is not a breach; at a 5-point threshold it is, and the
    // exact McNemar test calls it "significant" (two-sided p ≈ 1.9e-4) — still only unconfirmed.
    expect(run(spec).status).toBe('ok')
    const strict = { ...policy, thresholds: { ...policy.thresholds, resolved_deficit_pp: 5 } }
    const d = detect({ current: ref(makeComparison(spec)), policy: strict, quarantine: [] })
    expect(d.status).toBe('breach')
    expect(d.signals).toHaveLength(1)
    expect(d.signals[0]!.state).toBe('unconfirmed')
    expect(d.signals[0]!.effect.estimate).toBeCloseTo(-7, 10)
    expect(d.signals[0]!.p_one_sided).toBeLessThan(1e-4)
    expect(d.signals[0]!.p_one_sided! * 2).toBeCloseTo(1.9e-4, 5)
    expect(d.signals.some((s) => s.state === 'confirmed')).toBe(false)
  })
})

describe('detect: self-regression (a cell against its own earlier run)', () => {
  const prev = makeComparison({
    runId: 'run-0',
    cells: ['a', 'b'],
    rows: rows(30, (i) => ({ a: r(), b: i < 24 ? r() : u() })),
  })
  const cur = makeComparison({
    runId: 'run-1',
    cells: ['a', 'b'],
    version: { b: '1.1.0' },
    rows: rows(30, (i) => ({ a: r(), b: i < 18 ? r() : u() })),
  })

  it('is a separate result with its own key, recomputed from the rows, and notes the version change', () => {
    const d = detect({
      current: ref(cur),
      previous: ref(prev, '../prev/comparison.json'),
      policy,
      quarantine: [],
    })
    const self = d.signals.filter((s) => s.kind === 'self')
    expect(self.map((s) => [s.key, s.metric])).toEqual([['exp/self/b', 'resolved']])
    expect(self[0]!.effect.estimate).toBeCloseTo(-20, 10)
    expect(self[0]!.effect.ci).not.toBeNull()
    expect(self[0]!.instances.driving).toHaveLength(6)
    const comp = d.signals.filter((s) => s.kind === 'competitive')
    expect(comp.map((s) => s.key)).toEqual(['exp/a-vs-b'])
    expect(d.comparisons.map((v) => [v.key, v.kind, v.status])).toEqual([
      ['exp/a-vs-b', 'competitive', 'breach'],
      ['exp/self/a', 'self', 'ok'],
      ['exp/self/b', 'self', 'breach'],
    ])
    expect(d.previous).toMatchObject({ run_id: 'run-0', comparison: '../prev/comparison.json' })
    expect(d.notes).toContain('cell b changed since the previous run: version 1.0.0 → 1.1.0')
  })

  it('a previous run of another panel revision is not compared (health warning)', () => {
    const other = structuredClone(prev)
    other.stamp.panel.revision = 'r2'
    const d = detect({ current: ref(cur), previous: ref(other), policy, quarantine: [] })
    expect(d.signals.every((s) => s.kind === 'competitive')).toBe(true)
    expect(d.health.find((h) => h.code === 'previous_not_comparable')!.message).toMatch(
      /builtin@r2 ≠ builtin@r1/,
    )
  })
})
