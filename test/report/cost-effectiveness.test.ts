import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

async function comparisonWith(over: Record<string, unknown>, unpriced = false): Promise<Comparison> {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) }, ...over })
  const atts = pairedOutcomes(plan, { both: 5, bOnly: 2, cOnly: 3, neither: 2 })
  if (unpriced)
    for (const a of atts) Object.assign(a.telemetry, { spend_usd: null, spend_source: 'unpriced' })
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, atts),
    out: mkdtempSync(path.join(tmpdir(), 'hw-ce-')),
    resamples: 2000,
  })
  // what was written, read back strictly
  return ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
}

// The fixture: 12 blocks, a resolves 7 (both 5 + a only 2), b resolves 8 (both 5 + b only 3); spend of
// block i is 0.10·(1 + i mod 7) for a and 0.15·(1 + i mod 7) for b, Σ(1 + i mod 7) over i < 12 = 43.
const SUM = 43
describe('cost-effectiveness in comparison.json and both reports', () => {
  it('places each cell at its mean spend and resolve rate, marks the frontier and gives the paired net benefit', async () => {
    const c = await comparisonWith({ reporting: { value_per_resolution_usd: 3 } })
    const ce = c.cost_effectiveness!
    expect(ce.blocks).toBe(12)
    const [a, b] = ce.points
    expect(a!.cell).toBe('a')
    expect(a!.resolve_rate.estimate).toBeCloseTo(7 / 12, 12)
    expect(b!.resolve_rate.estimate).toBeCloseTo(8 / 12, 12)
    expect(a!.expected_spend_usd.estimate).toBeCloseTo((0.1 * SUM) / 12, 12)
    expect(b!.expected_spend_usd.estimate).toBeCloseTo((0.15 * SUM) / 12, 12)
    // neither dominates: b resolves more and spends more
    expect([a!.frontier, b!.frontier]).toEqual([true, true])
    expect(a!.vs_baseline).toBeNull()
    expect(b!.vs_baseline!.resolve_rate_diff.estimate).toBeCloseTo(1 / 12, 12)
    expect(b!.vs_baseline!.spend_diff_usd.estimate).toBeCloseTo((0.05 * SUM) / 12, 12)
    // both axes carry intervals around the estimates
    for (const p of ce.points)
      for (const x of [p.resolve_rate, p.expected_spend_usd]) {
        expect(x.ci![0]).toBeLessThanOrEqual(x.estimate!)
        expect(x.ci![1]).toBeGreaterThanOrEqual(x.estimate!)
      }
    // NB = 3 · 1/12 − 0.05 · 43 / 12 = 0.85 / 12
    const nb = ce.net_benefit[0]!
    expect(ce.value_per_resolution_usd).toBe(3)
    expect(nb.n).toBe(12)
    expect(nb.net_benefit_usd.estimate).toBeCloseTo(0.85 / 12, 12)
    expect(nb.resolved_diff).toBeCloseTo(1 / 12, 12)
    expect(nb.spend_diff_usd).toBeCloseTo(2.15 / 12, 12)
    expect(nb.net_benefit_usd.ci![0]).toBeLessThan(0.85 / 12)
    expect(nb.net_benefit_usd.ci![1]).toBeGreaterThan(0.85 / 12)

    const md = renderMarkdownReport(c)
    expect(md).toContain('## Cost-effectiveness')
    expect(md).toContain('net benefit at $3 per resolution: +$0.07083 per attempted instance')
    expect(md).toMatch(
      /\| `b` \| 66\.7% \\\[[^|]+\\\] \| \$0\.5375 \\\[[^|]+\| \+8\.3 pp [^|]+\| \+\$0\.1792 [^|]+\| on the frontier \|/,
    )
    const html = renderHtmlReport(c)
    expect(html).toContain('<h2>Cost-effectiveness</h2>')
    expect(html).toContain('<canvas id="chart-pareto"')
    const noscript = /<canvas id="chart-pareto"[^>]*><\/canvas><noscript>(.*?)<\/noscript>/s.exec(html)![1]!
    expect(noscript).toContain('<table class="chart-data pareto">')
    expect(noscript.match(/<tr data-cell=/g)).toHaveLength(2)
    expect(noscript).toContain('data-cell="a" data-frontier="true"')
    expect(noscript).toContain('58.3%')
    expect(html).toContain('net benefit at $3 per resolution: +$0.07083 per attempted instance')
    const data = JSON.parse(
      /<script type="application\/json" id="hw-pareto">(.*?)<\/script>/s.exec(html)![1]!,
    )
    expect(data.points.map((p: { cell: string }) => p.cell)).toEqual(['a', 'b'])
    expect(data.frontier).toHaveLength(2)
  })

  it('says there is no declared value instead of a net benefit', async () => {
    const c = await comparisonWith({})
    expect(c.cost_effectiveness!.value_per_resolution_usd).toBeNull()
    expect(c.cost_effectiveness!.net_benefit).toEqual([])
    expect(renderMarkdownReport(c)).toContain('no value per resolution declared')
  })

  it('unpriced spend is unknown, never $0: no placed point, no net benefit figure', async () => {
    const c = await comparisonWith({ reporting: { value_per_resolution_usd: 3 } }, true)
    const ce = c.cost_effectiveness!
    expect(ce.blocks).toBe(0)
    expect(ce.reason).toMatch(/^spend unknown/)
    expect(ce.points.every((p) => p.frontier === null && p.expected_spend_usd.estimate === null)).toBe(true)
    expect(ce.net_benefit[0]!.net_benefit_usd.estimate).toBeNull()
    expect(ce.net_benefit[0]!.net_benefit_usd.reason).toMatch(/^spend unknown/)
    const md = renderMarkdownReport(c)
    const section = md.slice(
      md.indexOf('## Cost-effectiveness'),
      md.indexOf('##', md.indexOf('## Cost-effectiveness') + 3),
    )
    expect(section).toContain('net benefit at $3 per resolution: unknown (spend unknown')
    expect(section).not.toMatch(/\$0[^.\d]/)
    const html = renderHtmlReport(c)
    const data = JSON.parse(/id="hw-pareto">(.*?)<\/script>/s.exec(html)![1]!)
    expect(data.points).toEqual([])
    expect(data.empty).toMatch(/^spend unknown/)
  })

  it('escapes a forged cell name in the table, the net-benefit line and the chart data', async () => {
    const c = await comparisonWith({ reporting: { value_per_resolution_usd: 3 } })
    const forged = '<img src=x onerror=alert(1)>'
    c.cost_effectiveness!.points[1]!.cell = forged
    c.cost_effectiveness!.net_benefit[0]!.treatment = forged
    const html = renderHtmlReport(c)
    expect(html).not.toContain(forged)
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
    // report.md: in the table a code span (shown verbatim), in the net-benefit line entity-escaped
    const md = renderMarkdownReport(c)
    expect(md).toContain(`| \`${forged}\` |`)
    expect(md).toContain('a → &lt;img src=x onerror=alert(1)&gt;: net benefit')
  })
})
