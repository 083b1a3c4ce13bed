import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { evidenceFor, sequentialEvidence } from '../../src/detect/evidence.js'
import type { GroupSequentialEvidence } from '../../src/detect/schema.js'
import { keyRunStatus } from '../../src/github/issue.js'
import { detectStep } from '../../src/pipeline/detect.js'
import type { Comparison } from '../../src/records/comparison.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { obfConstant, planObf } from '../../src/stats/index.js'
import { strictJson } from '../../src/util/json.js'
import { type CellSpec, makeComparison, policy, ref, rows, writeThreeCellPlan } from './fixtures.js'

const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })
const decisionFixture = (c: Comparison) => detect({ current: ref(c), policy, quarantine: [] })
// Each week b loses 10 blocks a resolves (b = 10, c = 0 for a vs b); a vs c has no discordant pair.
const week = (runId: string) =>
  makeComparison({
    runId,
    cells: ['a', 'b', 'c'],
    rows: rows(30, (i) => (i < 10 ? { a: r(), b: u(), c: r() } : { a: r(), b: r(), c: r() })),
  })

describe("weekly evidence: a group-sequential McNemar test with O'Brien–Fleming bounds", () => {
  // Weeks of 30 blocks with 10 baseline-only resolutions: ψ = 1/3, planned for a 10-point deficit at
  // 90% power: 11 looks (seeded constant C = 1.8152); Z₁ = 9/√10, Z₂ = 19/√20, Z₃ = 29/√30.
  const w = (run_id: string, b: number, c: number, blocks = 30) => ({ run_id, b, c, blocks })

  it('plans from the first run, pools the counts of its looks and crosses at the third week', () => {
    const one = sequentialEvidence([w('w1', 10, 0)], 0.05, 10)
    expect(one.plan).toMatchObject({ looks: 11, blocks_per_look: 30, max_blocks: 330, discordance: 1 / 3 })
    expect(one.plan.constant).toBeCloseTo(1.8152, 3)
    expect(one.plan.planned_power).toBeGreaterThanOrEqual(0.9)
    expect(one.z).toBeCloseTo(9 / Math.sqrt(10), 12)
    expect(one.bound).toBeCloseTo(one.plan.constant * Math.sqrt(11), 12)
    expect(one.sufficient).toBe(false)
    expect(one.statement).toBe(
      "weekly group-sequential McNemar test (O'Brien–Fleming, 11 looks of 30 blocks planned for a 10-point deficit at 90% power, one-sided α = 0.05): look 1 of 11, b = 10, c = 0 over 30 blocks, Z = 2.85 against the bound 6.02 — not crossed yet",
    )
    const two = sequentialEvidence([w('w1', 10, 0), w('w2', 10, 0)], 0.05, 10)
    // Z₂ = 4.249 < C·√(11/2) = 4.257: not yet
    expect(two.z).toBeCloseTo(19 / Math.sqrt(20), 12)
    expect(two.bound).toBeCloseTo(4.257, 3)
    expect(two.sufficient).toBe(false)
    const three = sequentialEvidence([w('w1', 10, 0), w('w2', 10, 0), w('w3', 10, 0)], 0.05, 10)
    expect(three.runs.map((r) => [r.look, Number(r.z.toFixed(3)), Number(r.bound.toFixed(3))])).toEqual([
      [1, 2.846, 6.02],
      [2, 4.249, 4.257],
      [3, 5.295, 3.476],
    ])
    expect(three).toMatchObject({ b: 30, c: 0, blocks: 90, sufficient: true, crossed_at: 'w3', ended: false })
    expect(three.statement).toMatch(
      /— crossed at run w3 \(look 3\): the treatment resolves fewer, at α; later runs never reset it$/,
    )
    // at α = 0.01 the same three weeks are not enough
    expect(sequentialEvidence(three.runs, 0.01, 10).sufficient).toBe(false)
  })

  it('is one-sided: a treatment advantage never crosses', () => {
    const better = sequentialEvidence([w('w1', 0, 10), w('w2', 0, 10), w('w3', 0, 10)], 0.05, 10)
    expect(better.z).toBeCloseTo(-31 / Math.sqrt(30), 12)
    expect(better.sufficient).toBe(false)
  })

  it('a cleared or improving week after the crossing never resets it', () => {
    const runs = [w('w1', 10, 0), w('w2', 10, 0), w('w3', 10, 0), w('w4', 0, 6), w('w5', 0, 30)]
    const e = sequentialEvidence(runs, 0.05, 10)
    expect(e.z).toBeLessThan(e.bound)
    expect(e).toMatchObject({ sufficient: true, crossed_at: 'w3' })
  })

  it('a test whose last planned look passes uncrossed ends, and the next run starts a new one', () => {
    // ψ = 20/40 for a 20-point deficit: 4 looks of 40 blocks
    const runs = [w('w1', 10, 10, 40), w('w2', 10, 10, 40), w('w3', 10, 10, 40), w('w4', 10, 10, 40)]
    const e = sequentialEvidence(runs, 0.05, 20)
    expect(e.plan.looks).toBe(4)
    expect(sequentialEvidence(runs.slice(0, 3), 0.05, 20).ended).toBe(false)
    expect(e).toMatchObject({ sufficient: false, ended: true })
    expect(e.statement).toMatch(
      /— the last planned look passed without crossing: no 20-point deficit shown at α; the next run starts a new test$/,
    )
    const c = week('w5')
    const base = decisionFixture(c)
    const previous = { ...base, evidence: [{ key: 'exp/a-vs-b', ...e }] }
    const next = evidenceFor(c, previous, 0.05, 20).find((x) => x.key === 'exp/a-vs-b')!
    expect(next).toMatchObject({ cycle: 2, sufficient: false })
    expect(next.runs.map((r) => r.run_id)).toEqual(['w5'])
    expect(next.statement).toContain(', test 2): look 1 of')
  })

  it('refuses a run counted twice, no run or an α outside (0, 1)', () => {
    expect(() => sequentialEvidence([w('w1', 0, 7), w('w1', 0, 7)], 0.05, 10)).toThrow(/run w1 appears twice/)
    expect(() => sequentialEvidence([], 0.05, 10)).toThrow(RangeError)
    expect(() => sequentialEvidence([w('w1', 1, 0)], 0, 10)).toThrow(RangeError)
    expect(() => sequentialEvidence([w('w1', 1, 0)], 1, 10)).toThrow(RangeError)
  })

  it("O'Brien–Fleming constants match the exact values within the seeded paths' error", () => {
    expect(obfConstant(1, 0.05)).toBeCloseTo(1.6448536269514789, 10)
    expect(Math.abs(obfConstant(2, 0.05) - 1.6779527404685983)).toBeLessThan(0.015)
    expect(Math.abs(obfConstant(3, 0.05) - 1.7096236031665437)).toBeLessThan(0.015)
    // a 1-look plan is the fixed one-sided z test
    const big = planObf({
      blocksPerLook: 4000,
      discordance: 0.5,
      deficitPp: 10,
      alpha: 0.05,
      power: 0.9,
      maxLooks: 52,
    })
    expect(big.looks).toBe(1)
    // not reachable within the horizon: the horizon, with its power stated
    const tiny = planObf({
      blocksPerLook: 2,
      discordance: 1,
      deficitPp: 2,
      alpha: 0.05,
      power: 0.9,
      maxLooks: 52,
    })
    expect(tiny.looks).toBe(52)
    expect(tiny.planned_power).toBeLessThan(0.9)
  })
})

describe('evidence so far in decision.json and the report, across weekly runs', () => {
  async function weeks(n: number) {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const paths: string[] = []
    for (let i = 1; i <= n; i++) {
      const d = path.join(dir, `w${i}`)
      await mkdir(d)
      await writeFile(path.join(d, 'comparison.json'), strictJson(week(`w${i}`)))
      paths.push(path.join(d, 'comparison.json'))
    }
    return { dir, planPath, paths }
  }

  it('weeks 1 and 2 do not cross; week 3 extends the previous decision.json and crosses', async () => {
    const { planPath, paths } = await weeks(3)
    const first = await detectStep({ comparison: paths[0]!, plan: planPath })
    const ev1 = first.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev1.runs.map((x) => [x.run_id, x.b, x.c, x.blocks])).toEqual([['w1', 10, 0, 30]])
    expect(ev1.sufficient).toBe(false)
    const second = await detectStep({ comparison: paths[1]!, plan: planPath, previous: paths[0]! })
    expect(second.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.sufficient).toBe(false)
    const third = await detectStep({ comparison: paths[2]!, plan: planPath, previous: paths[1]! })
    const ev3 = third.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev3.runs.map((x) => x.run_id)).toEqual(['w1', 'w2', 'w3'])
    expect(ev3).toMatchObject({ sufficient: true, crossed_at: 'w3', b: 30, c: 0, blocks: 90 })
    // a vs c: no discordant pair: Z = 0 each week
    expect(third.decision.evidence!.find((x) => x.key === 'exp/a-vs-c')).toMatchObject({
      z: 0,
      sufficient: false,
    })
    const md = await readFile(path.join(path.dirname(paths[2]!), 'report.md'), 'utf8')
    expect(md).toContain(
      "Evidence across weekly runs, `exp/a-vs-b`: weekly group-sequential McNemar test (O'Brien–Fleming, 11 looks of 30 blocks planned for a 10-point deficit at 90% power, one-sided α = 0.05): look 3 of 11, b = 30, c = 0 over 90 blocks, Z = 5.29 against the bound 3.48 — crossed at run w3 (look 3): the treatment resolves fewer, at α; later runs never reset it (runs w1 (b = 10, c = 0), w2 (b = 10, c = 0), w3 (b = 10, c = 0); one look per run, discordant counts pooled within the test).",
    )
    expect(await readFile(path.join(path.dirname(paths[2]!), 'report.html'), 'utf8')).toContain(
      'look 3 of 11, b = 30, c = 0 over 90 blocks',
    )
    // the same run passed as its own previous run is counted once
    const again = await detectStep({ comparison: paths[2]!, plan: planPath, previous: paths[2]! })
    expect(again.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.runs.map((x) => x.run_id)).toEqual([
      'w1',
      'w2',
      'w3',
    ])
  })

  it("a forged previous decision.json cannot replace this run's counts, its plan, nor stop the step", async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(path.join(w1, 'comparison.json'), strictJson(week('w1')))
    // this week a vs b has 1 baseline-only and 1 treatment-only block
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
    const step = () =>
      detectStep({
        comparison: path.join(w2, 'comparison.json'),
        plan: planPath,
        previous: path.join(w1, 'comparison.json'),
      })
    const forge = async (extra: Array<Record<string, unknown>>) => {
      const d = structuredClone(honest)
      for (const ev of d.evidence) ev.runs.push(...extra)
      await writeFile(file, JSON.stringify(d))
      return step()
    }
    const entry = (run_id: string, b: number) => ({ run_id, b, c: 0, blocks: 30, look: 2, z: 0, bound: 0 })
    // an entry under this run's id claiming 30 baseline-only blocks is replaced by the real (1, 1)
    const substituted = await forge([entry('w2', 30)])
    const ev = substituted.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev.runs.map((x) => [x.run_id, x.b, x.c])).toEqual([
      ['w1', 10, 0],
      ['w2', 1, 1],
    ])
    expect((ev as GroupSequentialEvidence).z).toBeCloseTo(9 / Math.sqrt(12), 12)
    expect(ev.sufficient).toBe(false)
    // a plan written into the record is never read back: a bound of 0 does not make it cross
    const lowered = structuredClone(honest)
    for (const e of lowered.evidence) e.plan.constant = 0
    await writeFile(file, JSON.stringify(lowered))
    const replanned = (await step()).decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect((replanned as GroupSequentialEvidence).plan.constant).toBeCloseTo(1.8152, 3)
    expect(replanned.sufficient).toBe(false)
    // a record counting a run twice is not extended: a note says why, the decision is still written
    const doubled = await forge([entry('w1', 10)])
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
    const huge = await forge([entry(long, 0), entry(long, 0)])
    const note = huge.decision.notes.find((n) => n.startsWith('no readable decision.json'))!
    expect(note).toContain(`(run "${'x'.repeat(80)}…" appears twice in "exp/a-vs-b")`)
    expect(note.length).toBeLessThan(300)
    // a record whose own run (w1) does not hold its comparison's counts (10, 0) is not extended
    const inflated = structuredClone(honest)
    inflated.evidence[0].runs[0].b = 30
    await writeFile(file, JSON.stringify(inflated))
    const lied = await step()
    expect(lied.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!.sufficient).toBe(false)
    expect(lied.decision.notes).toContain(
      'no readable decision.json beside the previous run\'s comparison (its exp/a-vs-b counts for run "w1" (b = 30, c = 0) are not the comparison\'s (b = 10, c = 0)): the evidence so far starts with this run',
    )
    // nor one of another run
    const other = structuredClone(honest)
    other.run_id = 'w0'
    await writeFile(file, JSON.stringify(other))
    expect((await step()).decision.notes.find((n) => n.startsWith('no readable decision.json'))).toContain(
      '(it is of run "w0", the comparison of run "w1")',
    )
    // a negative count is a schema problem, named in the note
    const d = structuredClone(honest)
    d.evidence[0].runs[0].c = -1
    await writeFile(file, JSON.stringify(d))
    expect((await step()).decision.notes.find((n) => n.startsWith('no readable decision.json'))).toMatch(
      /\(not a decision\.json: evidence\.0.*\)/,
    )
  })

  it('a crossing recorded by the earlier e-value rule is kept; an uncrossed one starts a new test', () => {
    const c = week('w2')
    const legacy = (sufficient: boolean) => ({
      ...decisionFixture(week('w1')),
      evidence: [
        {
          key: 'exp/a-vs-b',
          alpha: 0.05,
          runs: [{ run_id: 'w1', b: 30, c: 0, log_e: 3.5 }],
          log_e: 3.5,
          e: 33.1,
          threshold: 20,
          sufficient,
          crossed_at: sufficient ? 'w1' : null,
          statement: 'evidence so far',
        },
      ],
    })
    const kept = evidenceFor(c, legacy(true), 0.05, 10).find((x) => x.key === 'exp/a-vs-b')!
    expect(kept).toMatchObject({ sufficient: true, crossed_at: 'w1', design: 'obrien-fleming' })
    expect(kept.runs.map((r) => r.run_id)).toEqual(['w2'])
    expect(kept.statement).toContain('crossed earlier (the weekly e-value rule reached 1/α at run w1)')
    // and it stays kept the week after, even though the new test alone has not crossed
    const next = evidenceFor(week('w3'), { ...decisionFixture(c), evidence: [kept] }, 0.05, 10)
    expect(next.find((x) => x.key === 'exp/a-vs-b')).toMatchObject({ sufficient: true, crossed_at: 'w1' })
    const fresh = evidenceFor(c, legacy(false), 0.05, 10).find((x) => x.key === 'exp/a-vs-b')!
    expect(fresh).toMatchObject({ sufficient: false, cycle: 1 })
    expect(fresh.runs.map((r) => r.run_id)).toEqual(['w2'])
  })

  it('a record of 10,000 runs keeps the evidence line short: earlier runs are counted, not listed', () => {
    const c = week('now')
    const runs = Array.from({ length: 10_000 }, (_, i) => ({ run_id: `w${i}`, b: 1, c: 0, blocks: 30 }))
    const ev = evidenceFor(c, null, 0.05, 20)
    ev[0] = { key: ev[0]!.key, ...sequentialEvidence(runs, 0.05, 20) }
    const md = decisionMarkdown({ decision: { ...decisionFixture(c), evidence: ev } })
    const line = md.split('\n').find((l) => l.startsWith('Evidence across weekly runs'))!
    expect(line).toContain('(runs 9975 earlier not listed, then w9975 (b = 1, c = 0), w9976')
    expect(line.length).toBeLessThan(1500)
  })

  it('a previous decision.json whose blocks for its own run differ from its comparison is not extended', async () => {
    const { planPath, paths } = await weeks(2)
    await detectStep({ comparison: paths[0]!, plan: planPath })
    const file = path.join(path.dirname(paths[0]!), 'decision.json')
    const d = JSON.parse(await readFile(file, 'utf8'))
    expect(d.evidence[0].runs[0].blocks).toBe(30)
    // fewer blocks claimed would shrink the plan
    for (const ev of d.evidence) ev.runs[0].blocks = 12
    await writeFile(file, JSON.stringify(d))
    const second = await detectStep({ comparison: paths[1]!, plan: planPath, previous: paths[0]! })
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
    const w = (run_id: string, b: number, c: number) => ({ run_id, b, c, blocks: 30 })
    const crossed = {
      key: 'exp/a-vs-b',
      ...sequentialEvidence([w('w1', 10, 0), w('w2', 10, 0), w('w3', 10, 0), w('w4', 0, 5)], 0.05, 10),
    }
    expect(crossed.sufficient).toBe(true)
    expect(keyRunStatus(verdict, crossed)).toBe('confirmed')
    expect(keyRunStatus({ ...verdict, status: 'ok' }, crossed)).toBe('confirmed')
    expect(keyRunStatus({ ...verdict, status: 'breach' }, crossed)).toBe('confirmed')
    // Without the crossing: a cleared week is clean, a breach unconfirmed; a failed evaluation stays inconclusive.
    expect(keyRunStatus(verdict, null)).toBe('clean')
    expect(keyRunStatus({ ...verdict, status: 'breach' }, null)).toBe('unconfirmed')
    expect(keyRunStatus({ ...verdict, status: 'inconclusive' }, crossed)).toBe('inconclusive')
  })
})
