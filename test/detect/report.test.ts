import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { decisionTrials } from '../../src/compare/trial-halves.js'
import { detectStep } from '../../src/pipeline/detect.js'
import { GITHUB_BODY_LIMIT } from '../../src/report/budget.js'
import { strictJson } from '../../src/util/json.js'
import { captureOutput } from '../support/capture.js'
import { type CellSpec, type FixtureSpec, makeComparison, rows, writeThreeCellPlan } from './fixtures.js'

const io = captureOutput()
const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })
const g = (): CellSpec => ({ o: 'g' })

/** A plan of 30 instances and cells a, b, c, and a folder with `comparison` written as hw-out/comparison.json. */
async function firstRun(spec: Omit<FixtureSpec, 'cells'>, n = 30) {
  const { dir, out, planPath } = await writeThreeCellPlan(n)
  await mkdir(out, { recursive: true })
  const comparison = path.join(out, 'comparison.json')
  await writeFile(comparison, strictJson(makeComparison({ ...spec, cells: ['a', 'b', 'c'] })))
  return { dir, out, planPath, comparison }
}

const read = (f: string) => readFile(f, 'utf8')

describe('report.md and report.html state the decision once it is made', () => {
  it('ok: the decision line sits near the top, before the outcome section', async () => {
    const f = await firstRun({ rows: rows(30, () => ({ a: r(), b: r(), c: r() })) })
    const res = await detectStep({ comparison: f.comparison, plan: f.planPath })
    expect(res.decision.status).toBe('ok')
    const md = await read(path.join(f.out, 'report.md'))
    expect(res.reports.markdown).toBe(md)
    expect(md).toContain('**Decision: ok** — no threshold crossed on complete blocks.')
    expect(md.indexOf('## Decision')).toBeGreaterThan(0)
    expect(md.indexOf('## Decision')).toBeLessThan(md.indexOf('## Outcome'))
    expect(md).toContain('No regression signal.')
    expect(md).toContain('No health problems.')
    expect(md).toContain('| `b` vs `a` | ok | 30 of 30 |  |')
    const html = await read(path.join(f.out, 'report.html'))
    expect(html).toContain('<strong>Decision: ok</strong>')
  })

  it('breach: status, each signal with its effect and interval, and the planned confirmation rerun with its blocks', async () => {
    const f = await firstRun({ rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })) })
    const res = await detectStep({ comparison: f.comparison, plan: f.planPath })
    expect(res.decision.status).toBe('breach')
    const md = await read(path.join(f.out, 'report.md'))
    expect(md).toContain('**Decision: breach (unconfirmed)** — a threshold was crossed on this run only;')
    expect(md).toMatch(
      /\| `c` vs `a`: resolve rate \| resolve-rate deficit ≥ 10 points \(treatment − baseline ≤ −10 pp\) \| −20\.0 pp \[−\d+\.\d, −\d+\.\d\] \(n = 30; [^)]+\) \| 0\.0156 \| unconfirmed \| pending \|/,
    )
    // The rerun: a seeded random sample of the panel (all 30 blocks fit in max_blocks).
    const blocks = ['inst-01', 'inst-02', 'inst-03', 'inst-04', 'inst-05', 'inst-06']
    const planned = md.split('\n').find((l) => l.startsWith('A confirmation rerun is planned'))!
    expect(planned).toMatch(
      /^A confirmation rerun is planned: round 1, 4 leg\(s\), cells `a`, `c`, 30 block\(s\): /,
    )
    for (const b of blocks) expect(planned).toContain(`\`${b}\``)
    expect(planned).toContain('(plan `confirm-1/plan.json`)')
    const html = await read(path.join(f.out, 'report.html'))
    expect(html).toContain('<strong>Decision: breach (unconfirmed)</strong>')
    expect(html).toContain('A confirmation rerun is planned: round 1')
  })

  it('confirmed: the rerun’s report holds the final decision; the first run’s report points to it', async () => {
    const f = await firstRun({ rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })) })
    const first = await detectStep({ comparison: f.comparison, plan: f.planPath })
    const rerunDir = path.join(f.out, 'confirm-1', 'result')
    await mkdir(rerunDir, { recursive: true })
    // The rerun's four trials per block, split by the plan's seed: c loses five blocks on all three
    // decision trials, and three of them on the held-out trial.
    const planned = first.decision.confirmation!.instances
    const seed = first.decision.confirmation!.seed
    const part = (trials: number, wins: (id: string) => number) =>
      makeComparison({
        round: 1,
        cells: ['a', 'c'],
        rows: Object.fromEntries(
          planned.map((id) => [
            id,
            {
              a: { o: 'r' as const, trials, resolved_trials: trials },
              c: { o: wins(id) > 0 ? ('r' as const) : ('u' as const), trials, resolved_trials: wins(id) },
            },
          ]),
        ),
      })
    const lostD = ['inst-01', 'inst-02', 'inst-03', 'inst-04', 'inst-05']
    const lostE = ['inst-01', 'inst-02', 'inst-03']
    const dWins = (id: string) => (lostD.includes(id) ? 0 : 3)
    const eWins = (id: string) => (lostE.includes(id) ? 0 : 1)
    const split = {
      ...part(4, (id) => dWins(id) + eWins(id)),
      trial_halves: {
        seed,
        trials: { decision: 3, estimate: 1 },
        decision_trials: Object.fromEntries(decisionTrials(planned, 4, seed)),
        decision: part(3, dWins).instances,
        estimate: part(1, eWins).instances,
      },
    }
    await writeFile(path.join(rerunDir, 'comparison.json'), strictJson(split))
    const second = await detectStep({
      comparison: path.join(rerunDir, 'comparison.json'),
      plan: first.confirmPlanPath!,
    })
    expect(second.decision.status).toBe('confirmed')
    const rerunMd = await read(path.join(rerunDir, 'report.md'))
    expect(rerunMd).toContain(
      '**Decision: confirmed** — a threshold was crossed and held on the targeted rerun.',
    )
    // First run 6 losses of 30 (p = 1/64), decision trials 5 of 30 (p = 1/32), equal weights √30:
    // z = (2.154 + 1.863)/√2 = 2.841, p = 0.00225; the figure shown: 3 losses of 30, −10.0 points.
    expect(rerunMd).toMatch(
      /\| confirmed \| round 1: two-stage test of the resolve-rate difference treatment − baseline \(points\): combined p = 0\.00225 ≤ α 0\.05 \(first run n = 30, p = 0\.0156; rerun decision trials n = 30, p = 0\.0313\); figure shown, estimation trials of the rerun \(1 of each block's 4 trials, n = 30 sampled blocks\), not used by the decision: −10\.0 pp \[[^\]]*\]; 30 of 30 rerun blocks complete, b′ = 5, c′ = 0 \|/,
    )
    expect(rerunMd).toContain('Design (two-stage-split@4): Confirmation reruns a seeded random sample')
    // Every report states what its claims cover.
    expect(rerunMd).toContain('Scope: the resolve-rate claim covers these 30 instances')
    expect(rerunMd).toContain('not the benchmark they were drawn from')
    expect(rerunMd).toMatch(/each ratio claim \(spend, fresh input, requests\) is the ratio of totals/)
    expect(rerunMd).toMatch(/rejects at α = 0\.05/)
    expect(rerunMd).toContain('First run’s report: `../../report.md`.')
    // The rerun's block counts in the decision table are the first run's panel, and say so.
    expect(rerunMd).toContain('| Comparison | Status | Outcome-complete blocks (first run) | Note |')
    const firstMd = await read(path.join(f.out, 'report.md'))
    expect(firstMd).toContain('| Comparison | Status | Outcome-complete blocks | Note |')
    // The first run's report leads with the final decision; its own status and figures are labelled.
    const finalLine =
      '**Final decision: confirmed** (confirmation round 1) — a threshold was crossed and held on the targeted rerun. Its report: `confirm-1/result/report.md`.'
    const firstLine = 'First run (this report): breach (unconfirmed); the figures below are the first run’s.'
    expect(firstMd).toContain(finalLine)
    expect(firstMd).toContain(firstLine)
    expect(firstMd.indexOf(finalLine)).toBeLessThan(firstMd.indexOf(firstLine))
    expect(firstMd.indexOf(firstLine)).toBeLessThan(firstMd.indexOf('## Outcome'))
    expect(firstMd).not.toContain('**Decision: breach (unconfirmed)**')
    const firstHtml = await read(path.join(f.out, 'report.html'))
    expect(firstHtml).toContain('<strong>Final decision: confirmed</strong> (confirmation round 1)')
    expect(firstHtml).toContain('<a href="confirm-1/result/report.html">confirm-1/result/report.html</a>')
  })

  it('health problems are listed, identical messages once with a count', async () => {
    // 10 of 30 blocks ungraded in every cell: coverage below min_coverage for both comparisons alike.
    const f = await firstRun({
      rows: rows(30, (i) => (i < 10 ? { a: g(), b: g(), c: g() } : { a: r(), b: r(), c: r() })),
    })
    const res = await detectStep({ comparison: f.comparison, plan: f.planPath })
    expect(res.decision.status).toBe('inconclusive')
    const lows = res.decision.health.filter((h) => h.code === 'coverage_low')
    expect(lows).toHaveLength(2)
    expect(lows[0]!.message).toBe(lows[1]!.message)
    const md = await read(path.join(f.out, 'report.md'))
    expect(md).toContain('**Decision: inconclusive**')
    const rowsWithCoverage = md.split('\n').filter((l) => l.includes('`coverage_low`'))
    expect(rowsWithCoverage).toHaveLength(1)
    expect(rowsWithCoverage[0]).toMatch(
      /^\| error \| `coverage_low` \| 20 of 30 blocks complete \(66\.7%\) is below min\\_coverage 80%: inconclusive .* \(×2\) \|$/,
    )
    // The CLI's own summary groups them the same way.
    io.out = ''
    await main(['detect', '--comparison', f.comparison, '--plan', f.planPath])
    expect(io.out.split('\n').filter((l) => l.includes('coverage_low'))).toEqual([
      expect.stringMatching(/^ {2}error {3}coverage_low: 20 of 30 blocks complete .*\(×2\)$/),
    ])
  })

  it('the decision section survives the 65,536-character budget on a large panel', async () => {
    const n = 3000
    const f = await firstRun({ rows: rows(n, (i) => ({ a: r(), b: r(), c: i < 600 ? u() : r() })) }, n)
    const res = await detectStep({ comparison: f.comparison, plan: f.planPath })
    expect(res.decision.status).toBe('breach')
    expect(res.decision.confirmation?.instances.length).toBeGreaterThan(0)
    const md = await read(path.join(f.out, 'report.md'))
    expect(md.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT)
    expect(md).toContain('**Decision: breach (unconfirmed)**')
    expect(md).toContain('A confirmation rerun is planned: round 1')
    expect(md).toMatch(/Shortened to fit 65,536 characters/)
    expect(md.indexOf('## Decision')).toBeLessThan(md.indexOf('## Outcome'))
  })
})
