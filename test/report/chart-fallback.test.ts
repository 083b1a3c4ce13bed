import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from '../compare/fixtures.js'

/** Aggregates `cells` on `plan`, instance i spending (i + 1) / 1000 in each; returns report.html. */
async function reportOf(plan: Awaited<ReturnType<typeof makePlan>>, cells: string[]): Promise<string> {
  const attempts = plan.panel.instances.flatMap((instance, i) =>
    cells.map((cell) => attempt(plan, { cell, instance, spend: (i + 1) / 1000 })),
  )
  const out = mkdtempSync(path.join(tmpdir(), 'hw-fallback-'))
  await aggregate({ plan: writePlan(plan), artifacts: writeArtifacts(plan, attempts), out, resamples: 200 })
  return readFileSync(path.join(out, 'report.html'), 'utf8')
}

/** The scatter's <noscript> table, between its tags. */
const scatterTable = (html: string) =>
  html.match(/<table class="chart-data scatter">(.*?)<\/table>/)?.[1] ?? ''

// 210 instances: the paired scatter has 210 points, more than the 200 rows its <noscript> table lists.
describe('the scatter chart without JavaScript', () => {
  it('lists the first 200 paired points, then how many more there are', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(210) } })
    const html = await reportOf(plan, ['a', 'b'])
    const table = scatterTable(html)
    const rows = table.match(/<tr>/g) ?? []
    // a head row, 200 points and the count of the rest
    expect(rows).toHaveLength(202)
    expect(table).toContain('<tr><td colspan="5">… 10 more</td></tr>')
    expect(table).toContain('<td>t-001</td><td>0.001</td><td>0.001</td>')
    expect(table).toContain('<td>t-200</td><td>0.2</td><td>0.2</td>')
    expect(table).not.toContain('<td>t-201</td>')
    // the chart's own data still holds every point
    const data = JSON.parse(
      html
        .match(/<script type="application\/json" id="hw-data">(.*?)<\/script>/)![1]!
        .replace(/\\u003c/g, '<'),
    )
    expect(data.pairs[0].points).toHaveLength(210)
  })

  it('fills its 200 rows across comparisons, in their order, and counts the rest of every comparison', async () => {
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(110) },
      cells: [
        { id: 'a', harness: 'pi', version: '0.73.1' },
        { id: 'b', harness: 'opencode', version: '1.18.33' },
        { id: 'c', harness: 'pi', version: '0.74.0' },
      ],
    })
    const table = scatterTable(await reportOf(plan, ['a', 'b', 'c']))
    // 110 points of a → b, then 90 of a → c, then the 20 of a → c not listed
    expect(table.match(/<tr><td>a → b<\/td>/g)).toHaveLength(110)
    expect(table.match(/<tr><td>a → c<\/td>/g)).toHaveLength(90)
    expect(table).toContain('<tr><td>a → c</td><td>Spend (USD)</td><td>t-090</td>')
    expect(table).not.toContain('<tr><td>a → c</td><td>Spend (USD)</td><td>t-091</td>')
    expect(table).toContain('<tr><td colspan="5">… 20 more</td></tr>')
  })
})
