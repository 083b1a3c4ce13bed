import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Comparison } from '../../src/compare/schema.js'
import { discordantEValue } from '../../src/compare/stats/evalue.js'
import { detect } from '../../src/detect/decide.js'
import { combineEvidence, evidenceFor } from '../../src/detect/evidence.js'
import { detectStep } from '../../src/detect/step.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { strictJson } from '../../src/util/json.js'
import { type CellSpec, makeComparison, policy, ref, rows, writeThreeCellPlan } from './fixtures.js'

const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })
const decisionFixture = (c: Comparison) => detect({ current: ref(c), policy, quarantine: [] })

describe('evidence across weekly runs: product of per-run e-values', () => {
  it('multiplies the reference e-values and states whether they suffice at α', () => {
    // (0,7) → 16, (1,7) → 3.5556 (2^8·7!/9! = 256/72): 16 × 3.5556 = 56.889 ≥ 1/0.05 = 20
    const one = combineEvidence([{ run_id: 'w1', b: 0, c: 7 }], 0.05)
    expect(one.e).toBeCloseTo(16, 10)
    expect(one.sufficient).toBe(false)
    expect(one.statement).toBe(
      'evidence so far: E = 16.0 over 1 run; 20 needed at α = 0.05 — not yet sufficient',
    )
    const two = combineEvidence(
      [
        { run_id: 'w1', b: 0, c: 7 },
        { run_id: 'w2', b: 1, c: 7 },
      ],
      0.05,
    )
    expect(two.e).toBeCloseTo(256 / 4.5, 10)
    expect(two.sufficient).toBe(true)
    expect(two.statement).toMatch(
      /^evidence so far: E = 56\.9 over 2 runs; 20 needed at α = 0\.05 — sufficient/,
    )
    // at α = 0.01 (100 needed) the same weeks are not enough
    expect(combineEvidence(two.runs, 0.01).sufficient).toBe(false)
  })

  it('never pools weeks: two opposite weeks multiply, they are not one (7, 7) sample', () => {
    const ev = combineEvidence(
      [
        { run_id: 'w1', b: 0, c: 7 },
        { run_id: 'w2', b: 7, c: 0 },
      ],
      0.05,
    )
    expect(ev.e).toBeCloseTo(256, 8)
    const pooled = discordantEValue(7, 7).e!
    expect(pooled).toBeCloseTo((2 ** 14 * 5040 * 5040) / 1307674368000, 12)
    expect(ev.e).not.toBeCloseTo(pooled, 2)
  })

  it('refuses a run counted twice and an α outside (0, 1); empty history is E = 1', () => {
    expect(() =>
      combineEvidence(
        [
          { run_id: 'w1', b: 0, c: 7 },
          { run_id: 'w1', b: 0, c: 7 },
        ],
        0.05,
      ),
    ).toThrow(/run w1 appears twice/)
    expect(() => combineEvidence([], 0)).toThrow(RangeError)
    expect(() => combineEvidence([], 1)).toThrow(RangeError)
    expect(combineEvidence([], 0.05)).toMatchObject({ e: 1, log_e: 0, sufficient: false })
    expect(() => combineEvidence([{ run_id: 'w', b: -1, c: 0 }], 0.05)).toThrow(RangeError)
  })

  it('stays finite in log space beyond the double range', () => {
    const weeks = Array.from({ length: 40 }, (_, i) => ({ run_id: `w${i}`, b: 0, c: 200 }))
    const ev = combineEvidence(weeks, 0.05)
    expect(ev.e).toBeNull()
    expect(Number.isFinite(ev.log_e)).toBe(true)
    expect(ev.sufficient).toBe(true)
    expect(ev.statement).toMatch(/^evidence so far: E = exp\(\d+\.\d\) over 40 runs/)
  })
})

describe('evidence so far in decision.json and the report, across weekly runs', () => {
  // Each week b loses 7 blocks a resolves (b = 7, c = 0 for b vs a): E = 2^7·7!/8! = 16 per week.
  const week = (runId: string) =>
    makeComparison({
      runId,
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => (i < 7 ? { a: r(), b: u(), c: r() } : { a: r(), b: r(), c: r() })),
    })

  it('week 1 alone is not sufficient (16 < 20); week 2 extends it from the previous decision.json (256)', async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(path.join(w1, 'comparison.json'), strictJson(week('w1')))
    await writeFile(path.join(w2, 'comparison.json'), strictJson(week('w2')))
    const first = await detectStep({ comparison: path.join(w1, 'comparison.json'), plan: planPath })
    const ev1 = first.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev1.runs.map((x) => [x.run_id, x.b, x.c])).toEqual([['w1', 7, 0]])
    expect(ev1.e).toBeCloseTo(16, 10)
    expect(ev1.sufficient).toBe(false)
    const second = await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    const ev2 = second.decision.evidence!.find((x) => x.key === 'exp/a-vs-b')!
    expect(ev2.runs.map((x) => x.run_id)).toEqual(['w1', 'w2'])
    expect(ev2.e).toBeCloseTo(256, 8)
    expect(ev2.sufficient).toBe(true)
    // a vs c: no discordant pair either week: E = 1
    expect(second.decision.evidence!.find((x) => x.key === 'exp/a-vs-c')!.e).toBe(1)
    const md = await readFile(path.join(w2, 'report.md'), 'utf8')
    expect(md).toContain(
      'Evidence across weekly runs, `exp/a-vs-b`: evidence so far: E = 256 over 2 runs; 20 needed at α = 0.05 — sufficient: a resolve-rate difference at α (runs w1 (b = 7, c = 0), w2 (b = 7, c = 0); e-values multiplied, weeks never pooled).',
    )
    expect(await readFile(path.join(w2, 'report.html'), 'utf8')).toContain(
      'evidence so far: E = 256 over 2 runs',
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

  it('a forged run id is escaped in report.md', () => {
    const c = week('w1')
    const ev = evidenceFor(c, null, 0.05)
    ev[0]!.runs[0]!.run_id = '<img src=x> @team'
    const d = { ...decisionFixture(c), evidence: ev }
    const md = decisionMarkdown({ decision: d })
    expect(md).not.toContain('<img')
    expect(md).toContain('&lt;img src=x&gt; @\u200dteam')
  })
})
