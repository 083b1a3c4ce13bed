import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { combineEvidence, evidenceFor } from '../../src/detect/evidence.js'
import { keyRunStatus } from '../../src/github/issue.js'
import { detectStep } from '../../src/pipeline/detect.js'
import type { Comparison } from '../../src/records/comparison.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { adaptiveAlternative, deficitAlternative } from '../../src/stats/evalue.js'
import { strictJson } from '../../src/util/json.js'
import { type CellSpec, makeComparison, policy, ref, rows, writeThreeCellPlan } from './fixtures.js'

const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })
const decisionFixture = (c: Comparison) => detect({ current: ref(c), policy, quarantine: [] })

describe('evidence across weekly runs: product of per-run one-sided likelihood-ratio e-values', () => {
  it('multiplies the reference e-values at θ₁ = 0.6 and states whether they suffice at α', () => {
    // (7, 0) → 1.2^7 = 3.583181; (20, 5) → 1.2^20·0.8^5 = 12.5631; product 45.014 ≥ 1/0.05 = 20
    const one = combineEvidence([{ run_id: 'w1', b: 7, c: 0 }], 0.05, 0.6)
    expect(one.e).toBeCloseTo(3.583181, 6)
    expect(one.runs[0]!.theta).toBe(0.6)
    expect(one.sufficient).toBe(false)
    expect(one.statement).toBe(
      'evidence so far: E = 3.58 over 1 run; 20 needed at α = 0.05 — not yet sufficient',
    )
    const two = combineEvidence(
      [
        { run_id: 'w1', b: 7, c: 0 },
        { run_id: 'w2', b: 20, c: 5 },
      ],
      0.05,
      0.6,
    )
    expect(two.e).toBeCloseTo(1.2 ** 27 * 0.8 ** 5, 8)
    expect(two.e).toBeCloseTo(45.0136, 3)
    expect(two.sufficient).toBe(true)
    expect(two.statement).toMatch(
      /^evidence so far: E = 45\.0 over 2 runs; 20 needed at α = 0\.05 — sufficient: the treatment resolves fewer, at α$/,
    )
    // at α = 0.01 (100 needed) the same weeks are not enough
    expect(combineEvidence(two.runs, 0.01, 0.6).sufficient).toBe(false)
  })

  it('is one-sided: a treatment advantage lowers the evidence of a regression', () => {
    const better = combineEvidence([{ run_id: 'w1', b: 0, c: 7 }], 0.05, 0.6)
    expect(better.e).toBeCloseTo(0.8 ** 7, 12)
    expect(better.sufficient).toBe(false)
  })

  it('never pools weeks: each run keeps the θ₁ declared for it', () => {
    // w1 was made under a 20-point threshold (θ₁ 0.7), w2 under 10 points (θ₁ 0.6)
    const ev = combineEvidence(
      [
        { run_id: 'w1', b: 6, c: 1, theta: 0.7 },
        { run_id: 'w2', b: 6, c: 1 },
      ],
      0.05,
      0.6,
    )
    expect(ev.runs.map((r) => r.theta)).toEqual([0.7, 0.6])
    expect(ev.e).toBeCloseTo(1.4 ** 6 * 0.6 * 1.2 ** 6 * 0.8, 10)
    expect(deficitAlternative(10)).toBeCloseTo(1.21 / 2.02, 14)
    expect(deficitAlternative(20)).toBeCloseTo(1.44 / (1.44 + 0.64), 14)
    expect(deficitAlternative(90)).toBe(0.95)
    expect(() => deficitAlternative(0)).toThrow(RangeError)
    // the smallest θ a 10-point deficit gives at any resolve rate
    let least = 1
    for (let p = 0.1001; p <= 1; p += 0.0001) {
      const q = p - 0.1
      least = Math.min(least, (p * (1 - q)) / (p * (1 - q) + q * (1 - p)))
    }
    expect(least).toBeCloseTo(deficitAlternative(10), 6)
  })

  it('refuses a run counted twice, an α outside (0, 1) or a θ₁ not above ½; empty history is E = 1', () => {
    expect(() =>
      combineEvidence(
        [
          { run_id: 'w1', b: 0, c: 7 },
          { run_id: 'w1', b: 0, c: 7 },
        ],
        0.05,
        0.6,
      ),
    ).toThrow(/run w1 appears twice/)
    expect(() => combineEvidence([], 0, 0.6)).toThrow(RangeError)
    expect(() => combineEvidence([], 1, 0.6)).toThrow(RangeError)
    expect(() => combineEvidence([{ run_id: 'w', b: 1, c: 0 }], 0.05, 0.5)).toThrow(RangeError)
    expect(combineEvidence([], 0.05, 0.6)).toMatchObject({ e: 1, log_e: 0, sufficient: false })
    expect(() => combineEvidence([{ run_id: 'w', b: -1, c: 0 }], 0.05, 0.6)).toThrow(RangeError)
  })

  it('stays finite in log space beyond the double range', () => {
    const weeks = Array.from({ length: 40 }, (_, i) => ({ run_id: `w${i}`, b: 400, c: 0 }))
    const ev = combineEvidence(weeks, 0.05, 0.6)
    expect(ev.e).toBeNull()
    expect(ev.log_e).toBeCloseTo(16000 * Math.log(1.2), 6)
    expect(ev.sufficient).toBe(true)
    expect(ev.statement).toMatch(/^evidence so far: E = exp\(\d+\.\d\) over 40 runs/)
  })
})

describe('evidence so far in decision.json and the report, across weekly runs', () => {
  // Each week b loses 10 blocks a resolves (b = 10, c = 0 for a vs b): at the default 10-point
  // threshold θ₁ = 1.21/2.02, E = (2θ₁)^10 = 6.0903 per week; two weeks 37.09 ≥ 20.
  const week = (runId: string) =>
    makeComparison({
      runId,
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => (i < 10 ? { a: r(), b: u(), c: r() } : { a: r(), b: r(), c: r() })),
    })

  it('week 1 alone is not sufficient (6.09 < 20); week 2 extends it from the previous decision.json (37.1)', async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(path.join(w1, 'comparison.json'), strictJson(week('w1')))
    await writeFile(path.join(w2, 'comparison.json'), strictJson(week('w2')))
    const first = await detectStep({ comparison: path.join(w1, 'comparison.json'), plan: planPath })
    const ev1 = first.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    const perWeek = (2 * deficitAlternative(10)) ** 10
    expect(ev1.runs.map((x) => [x.run_id, x.b, x.c, x.theta])).toEqual([['w1', 10, 0, 1.21 / 2.02]])
    expect(ev1.e).toBeCloseTo(perWeek, 10)
    expect(ev1.e).toBeCloseTo(6.0903, 3)
    expect(ev1.sufficient).toBe(false)
    const second = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    const ev2 = second.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev2.runs.map((x) => x.run_id)).toEqual(['w1', 'w2'])
    expect(ev2.e).toBeCloseTo(perWeek ** 2, 8)
    expect(ev2.sufficient).toBe(true)
    // a vs c: no discordant pair either week: E = 1
    expect(second.decision.evidence!.find((x) => x.key === 'exp/a-vs-c')!.e).toBe(1)
    const md = await readFile(path.join(w2, 'report.md'), 'utf8')
    expect(md).toContain(
      'Evidence across weekly runs, `exp/a-vs-b`: evidence so far: E = 37.1 over 2 runs; 20 needed at α = 0.05 — sufficient: the treatment resolves fewer, at α (runs w1 (b = 10, c = 0), w2 (b = 10, c = 0); one-sided likelihood-ratio e-values at θ₁ = 0.599 multiplied, weeks never pooled).',
    )
    expect(await readFile(path.join(w2, 'report.html'), 'utf8')).toContain(
      'evidence so far: E = 37.1 over 2 runs',
    )
    // the same run passed as its own previous run is counted once
    const again = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w2, 'comparison.json'),
    })
    expect(again.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.runs.map((x) => x.run_id)).toEqual([
      'w1',
      'w2',
    ])
  })

  it("a forged previous decision.json cannot replace this run's counts nor stop the step", async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(path.join(w1, 'comparison.json'), strictJson(week('w1')))
    // this week a vs b has 1 baseline-only and 1 treatment-only block: E = 2θ₁·2(1 − θ₁) < 1
    const mixed = makeComparison({
      runId: 'w2',
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) =>
        i === 0
          ? { a: r(), b: u(), c: r() }
          : i === 1
            ? { a: u(), b: r(), c: r() }
            : { a: r(), b: r(), c: r() },
      ),
    })
    await writeFile(path.join(w2, 'comparison.json'), strictJson(mixed))
    await detectStep({ comparison: path.join(w1, 'comparison.json'), plan: planPath })
    const file = path.join(w1, 'decision.json')
    const honest = JSON.parse(await readFile(file, 'utf8'))
    const forge = async (extra: Array<{ run_id: string; b: number; c: number; log_e: number }>) => {
      const d = structuredClone(honest)
      for (const ev of d.evidence) ev.runs.push(...extra)
      await writeFile(file, JSON.stringify(d))
      return detectStep({
        comparison: path.join(w2, 'comparison.json'),
        plan: planPath,
        previous: path.join(w1, 'comparison.json'),
      })
    }
    // an entry under this run's id claiming 40 baseline-only blocks is replaced by the real (1, 1)
    const substituted = await forge([{ run_id: 'w2', b: 40, c: 0, log_e: 0 }])
    const ev = substituted.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    const t = deficitAlternative(10)
    expect(ev.runs.map((x) => [x.run_id, x.b, x.c])).toEqual([
      ['w1', 10, 0],
      ['w2', 1, 1],
    ])
    expect(ev.e).toBeCloseTo((2 * t) ** 11 * 2 * (1 - t), 8)
    expect(ev.sufficient).toBe(false)
    // a record counting a run twice is not extended: a note says why, the decision is still written
    const doubled = await forge([{ run_id: 'w1', b: 10, c: 0, log_e: 0 }])
    expect(doubled.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.runs.map((x) => x.run_id)).toEqual(
      ['w2'],
    )
    expect(doubled.decision.notes).toContain(
      'no readable decision.json beside the previous run\'s comparison (run "w1" appears twice in "exp/a-vs-b"): the evidence so far starts with this run',
    )
    expect(JSON.parse(await readFile(path.join(w2, 'decision.json'), 'utf8')).evidence[0].runs).toHaveLength(
      1,
    )
    // an id of a megabyte is cut in the note
    const long = 'x'.repeat(1_000_000)
    const huge = await forge([
      { run_id: long, b: 0, c: 0, log_e: 0 },
      { run_id: long, b: 0, c: 0, log_e: 0 },
    ])
    const note = huge.decision.notes.find((n) => n.startsWith('no readable decision.json'))!
    expect(note).toContain(`(run "${'x'.repeat(80)}…" appears twice in "exp/a-vs-b")`)
    expect(note.length).toBeLessThan(300)
    // a record whose own run (w1) does not hold its comparison's counts (10, 0) is not extended
    const inflated = structuredClone(honest)
    inflated.evidence[0].runs[0].b = 30
    await writeFile(file, JSON.stringify(inflated))
    const lied = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    expect(lied.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.sufficient).toBe(false)
    expect(lied.decision.notes).toContain(
      'no readable decision.json beside the previous run\'s comparison (its exp/a-vs-b counts for run "w1" (b = 30, c = 0) are not the comparison\'s (b = 10, c = 0)): the evidence so far starts with this run',
    )
    // nor one of another run
    const other = structuredClone(honest)
    other.run_id = 'w0'
    await writeFile(file, JSON.stringify(other))
    const moved = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    expect(moved.decision.notes.find((n) => n.startsWith('no readable decision.json'))).toContain(
      '(it is of run "w0", the comparison of run "w1")',
    )
    // a θ₁ outside (½, 1) or a non-integer count is a schema problem, named in the note
    const d = structuredClone(honest)
    d.evidence[0].runs[0].theta = 1.5
    await writeFile(file, JSON.stringify(d))
    const badTheta = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    expect(badTheta.decision.notes.find((n) => n.startsWith('no readable decision.json'))).toMatch(
      /\(not a decision\.json: evidence\.0\.runs\.0\.theta: .+\)/,
    )
  })

  it('a record of 10,000 runs keeps the evidence line short: earlier runs and θ₁ values are counted, not listed', () => {
    const c = week('now')
    const runs = Array.from({ length: 10_000 }, (_, i) => ({
      run_id: `w${i}`,
      b: 1,
      c: 0,
      theta: 0.51 + i * 4e-5,
    }))
    const ev = evidenceFor(c, null, 0.05, 20)
    ev[0] = { ...ev[0]!, ...combineEvidence(runs, 0.05, 0.6) }
    const md = decisionMarkdown({ decision: { ...decisionFixture(c), evidence: ev } })
    const line = md.split('\n').find((l) => l.startsWith('Evidence across weekly runs'))!
    expect(line).toContain('over 10000 runs')
    expect(line).toContain('(runs 9975 earlier not listed, then w9975 (b = 1, c = 0), w9976')
    expect(line).toContain('at θ₁ = 0.51 / 0.511 / 0.512 / 0.513 / 0.514 / … (401 values) multiplied')
    expect(line.length).toBeLessThan(1500)
  })

  it('a later run’s θ₁ comes from the earlier runs’ discordance, never from its own', () => {
    const floor = deficitAlternative(10)
    // two earlier runs with 30 discordant blocks of 200 each: Wilson upper 0.18831 → θ₁ 0.76551
    const previous = {
      ...decisionFixture(week('w2')),
      evidence: [
        {
          key: 'exp/a-vs-b',
          ...combineEvidence(
            [
              { run_id: 'w1', b: 30, c: 0, theta: floor, blocks: 200 },
              { run_id: 'w2', b: 25, c: 5, theta: floor, blocks: 200 },
            ],
            0.05,
            floor,
          ),
        },
      ],
    }
    const ev = evidenceFor(week('w3'), previous, 0.05, 10).find((x) => x.key === 'exp/a-vs-b')!
    const theta = adaptiveAlternative(10, { discordant: 60, blocks: 400 })
    expect(theta).toBeCloseTo(0.7655145308, 9)
    expect(ev.runs.map((r) => [r.run_id, r.theta, r.blocks])).toEqual([
      ['w1', floor, 200],
      ['w2', floor, 200],
      ['w3', theta, 30],
    ])
    expect(ev.runs[2]!.log_e).toBeCloseTo(10 * Math.log(2 * theta), 12)
    // a record whose blocks cannot hold its discordant pairs does not set θ₁
    const broken = structuredClone(previous)
    broken.evidence[0]!.runs[1]!.blocks = 3
    const again = evidenceFor(week('w3'), broken, 0.05, 10).find((x) => x.key === 'exp/a-vs-b')!
    expect(again.runs[2]!.theta).toBeCloseTo(adaptiveAlternative(10, { discordant: 30, blocks: 200 }), 12)
    // without any earlier blocks (a first run, or an older record) the floor
    expect(evidenceFor(week('w1'), null, 0.05, 10)[0]!.runs[0]!.theta).toBe(floor)
  })

  it('a previous decision.json whose blocks for its own run differ from its comparison is not extended', async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(path.join(w1, 'comparison.json'), strictJson(week('w1')))
    await writeFile(path.join(w2, 'comparison.json'), strictJson(week('w2')))
    await detectStep({ comparison: path.join(w1, 'comparison.json'), plan: planPath })
    const file = path.join(w1, 'decision.json')
    const d = JSON.parse(await readFile(file, 'utf8'))
    expect(d.evidence[0].runs[0].blocks).toBe(30)
    // fewer blocks claimed would raise the next run's θ₁
    for (const ev of d.evidence) ev.runs[0].blocks = 12
    await writeFile(file, JSON.stringify(d))
    const second = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    expect(second.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.runs.map((x) => x.run_id)).toEqual([
      'w2',
    ])
    expect(second.decision.notes.join('\n')).toMatch(
      /blocks for run "w1" \(12\) are not the comparison's \(30\)/,
    )
  })

  it('a forged run id is escaped in report.md', () => {
    const c = week('w1')
    const ev = evidenceFor(c, null, 0.05, 20)
    ev[0]!.runs[0]!.run_id = '<img src=x> @team'
    const d = { ...decisionFixture(c), evidence: ev }
    const md = decisionMarkdown({ decision: d })
    expect(md).not.toContain('<img')
    expect(md).toContain('&lt;img src=x&gt; @\u200dteam')
  })
})

describe('weekly evidence decides, and a crossed bound is never reset', () => {
  it('once the running product reaches 1/α, later weeks (cleared, improving) keep it sufficient', () => {
    // 1.2^7 · 1.2^10 = 22.2 ≥ 1/α = 20 after two weeks; a week of six wins (0.8^6) brings it to 5.8.
    const runs = [
      { run_id: 'w1', b: 7, c: 0 },
      { run_id: 'w2', b: 10, c: 0 },
      { run_id: 'w3', b: 0, c: 6 },
    ]
    const e = combineEvidence(runs, 0.05, 0.6)
    expect(e.log_e).toBeLessThan(Math.log(20))
    expect(e.sufficient).toBe(true)
    expect(e.crossed_at).toBe('w2')
    expect(e.statement).toMatch(
      /sufficient since run w2: the bound was crossed then \(later runs never reset it\)/,
    )
    expect(combineEvidence(runs.slice(0, 1), 0.05, 0.6).crossed_at).toBeNull()
  })

  it('a crossed bound opens or updates the tracking issue even when this week cleared', () => {
    const verdict = {
      key: 'exp/a-vs-b',
      kind: 'competitive' as const,
      baseline: 'a',
      treatment: 'b',
      status: 'cleared' as const,
      coverage: { planned: 40, outcome: 40, cost: 40, share: 1 },
      reason: null,
    }
    const crossed = {
      key: 'exp/a-vs-b',
      ...combineEvidence(
        [
          { run_id: 'w1', b: 7, c: 0 },
          { run_id: 'w2', b: 10, c: 0 },
        ],
        0.05,
        0.6,
      ),
    }
    expect(keyRunStatus(verdict, crossed)).toBe('confirmed')
    expect(keyRunStatus({ ...verdict, status: 'ok' }, crossed)).toBe('confirmed')
    expect(keyRunStatus({ ...verdict, status: 'breach' }, crossed)).toBe('confirmed')
    // Without the crossing: a cleared week is clean, a breach unconfirmed; a failed evaluation stays inconclusive.
    expect(keyRunStatus(verdict, null)).toBe('clean')
    expect(keyRunStatus({ ...verdict, status: 'breach' }, null)).toBe('unconfirmed')
    expect(keyRunStatus({ ...verdict, status: 'inconclusive' }, crossed)).toBe('inconclusive')
  })
})
