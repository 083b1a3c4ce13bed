import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { adjustedP } from '../../src/report/adjusted.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from '../compare/fixtures.js'

/**
 * The adjusted p beside each test in the resource tables is the family's when the report states more
 * than one comparison, so the tables and the family section never show two adjusted p for one test.
 */

const glm = { id: 'glm-4.6', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } }
const sonnet = {
  id: 'claude-sonnet-4-5',
  provider: 'scripted',
  api: 'chat',
  prices: { input: 3, output: 15 },
}

/**
 * Two models × two harnesses on 12 instances. On each model opencode spends twice as much on every
 * instance (spend sign test p = 2·2⁻¹² = 0.000488) and sends 12 requests instead of 10 on the first 9
 * (the five request and token sign tests p = 2·2⁻⁹ = 0.00391, 3 ties). Within one comparison (9
 * tests) Holm gives those 0.00391 × 8 = 0.0313; across the family (2 × 9 tests + the interaction =
 * 19) they come after both spend tests: 0.00391 × 17 = 0.0664, above α = 0.05.
 */
async function twoModels(over: Record<string, unknown> = {}): Promise<{ plan: Plan; atts: AttemptRecord[] }> {
  const plan = await makePlan({
    model: undefined,
    models: { glm, sonnet },
    panel: { source: 'inline', instances: ids(12) },
    cells: [
      { id: 'pi-glm', harness: 'pi', version: '0.73.1', model: 'glm' },
      { id: 'oc-glm', harness: 'opencode', version: '1.18.33', model: 'glm' },
      { id: 'pi-son', harness: 'pi', version: '0.73.1', model: 'sonnet' },
      { id: 'oc-son', harness: 'opencode', version: '1.18.33', model: 'sonnet' },
    ],
    baseline: 'pi-glm',
    ...over,
  })
  const resolves: Record<string, number> = { 'pi-glm': 4, 'oc-glm': 10, 'pi-son': 10, 'oc-son': 4 }
  const atts: AttemptRecord[] = []
  for (const c of plan.cells) {
    const oc = c.id.startsWith('oc')
    plan.panel.instances.forEach((instance, i) => {
      atts.push(
        attempt(plan, {
          cell: c.id,
          instance,
          outcome: i < (resolves[c.id] ?? 0) ? 'resolved' : 'unresolved',
          spend: (oc ? 0.2 : 0.1) * (1 + (i % 3)),
          requests: oc && i < 9 ? 12 : 10,
        }),
      )
    })
  }
  return { plan, atts }
}

const out = () => mkdtempSync(path.join(tmpdir(), 'hw-family-p-'))

async function run(plan: Plan, atts: AttemptRecord[]) {
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, atts),
    out: out(),
    resamples: 500,
  })
  return { ...r, md: readFileSync(r.reportPath, 'utf8'), html: readFileSync(r.htmlPath, 'utf8') }
}

/** The sign-test cell of a metric's row in the resource table under `heading` (report.md). */
function mdSignCell(md: string, heading: string, metric: string): string {
  const section = md.slice(md.indexOf('## Resources'))
  const part = section.slice(section.indexOf(heading))
  const row = part.split('\n').find((l) => l.startsWith(`| ${metric} |`))!
  return row.split(' | ').at(-1)!.replace(/ \|$/, '')
}

describe('report: the adjusted p beside each test is the family’s when there are several comparisons', () => {
  it('two models: the resource tables show the family Holm p (0.0664), not the comparison’s own (0.0313)', async () => {
    const { plan, atts } = await twoModels()
    const r = await run(plan, atts)
    const c = r.comparison
    const [onGlm, onSon] = c.comparisons
    const own = onGlm!.tests.find((t) => t.id === 'sign:proxy_requests')!
    expect(own).toMatchObject({ p: 0.00390625, p_holm: 0.03125 })
    const fam = c.multiplicity!.tests.find(
      (t) => t.comparison === 'pi-glm → oc-glm' && t.id === 'sign:proxy_requests',
    )!
    expect(fam).toMatchObject({ p: 0.00390625, p_adjusted: 0.06640625, reject: false })
    expect(c.multiplicity!.tests).toHaveLength(19)
    // comparison.json keeps the comparison's own Holm beside the family's.
    expect(onSon!.tests.find((t) => t.id === 'sign:proxy_requests')!.p_holm).toBe(0.03125)
    expect(adjustedP(c, onGlm!, 'sign:proxy_requests')).toEqual({
      p: 0.06640625,
      label: 'Holm across all 19 tests',
    })

    expect(r.md).toContain('| Sign test p (Holm across all 19 tests) |')
    expect(r.md).not.toContain('Sign test p (Holm) |')
    for (const heading of ['### `pi-glm` → `oc-glm`', '### `pi-son` → `oc-son`']) {
      expect(mdSignCell(r.md, heading, 'Proxy requests')).toBe('0.00391 (0.0664); ↑9 ↓0 =3')
      expect(mdSignCell(r.md, heading, 'Spend (USD)')).toBe('0.000488 (0.00928); ↑12 ↓0 =0')
    }
    expect(r.md).not.toContain('(0.0313)')
    // The family section shows the same family numbers (McNemar p 0.0313 → 19 tests: 0.219).
    expect(r.md).toMatch(/\| glm \| pi-glm → oc-glm \| 33\.3% \| 83\.3% \| [^\n]* \| 0\.0313 \| 0\.219 \|/)

    expect(r.html).toContain('<th>Sign test p (Holm across all 19 tests)</th>')
    expect(r.html).toContain('<td>0.00391 (0.0664); ↑9 ↓0 =3</td>')
    expect(r.html).toContain('<td>0.000488 (0.00928); ↑12 ↓0 =0</td>')
    expect(r.html).not.toContain('(0.0313)')
  })

  it('Benjamini–Hochberg: the tables show the family’s BH p and say so', async () => {
    const { plan, atts } = await twoModels({
      reporting: { bootstrap_resamples: 500, multiplicity: 'benjamini-hochberg' },
    })
    const r = await run(plan, atts)
    const fam = r.comparison.multiplicity!
    expect(fam.method).toBe('benjamini-hochberg')
    // BH: the ten 0.00391 are ranks 3–12 of 19, so each gets rank 12's bound 0.00391 × 19 / 12 = 0.00618.
    const row = fam.tests.find((t) => t.comparison === 'pi-glm → oc-glm' && t.id === 'sign:proxy_requests')!
    expect(row.p_adjusted).toBeCloseTo((0.00390625 * 19) / 12, 12)
    expect(r.md).toContain('| Sign test p (Benjamini–Hochberg across all 19 tests) |')
    expect(mdSignCell(r.md, '### `pi-glm` → `oc-glm`', 'Proxy requests')).toBe('0.00391 (0.00618); ↑9 ↓0 =3')
    expect(r.html).toContain('<td>0.00391 (0.00618); ↑9 ↓0 =3</td>')
  })

  it('one comparison: the comparison’s own Holm p is the family’s, and the table is unchanged', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) } })
    const atts: AttemptRecord[] = []
    for (const c of plan.cells)
      for (const [i, instance] of plan.panel.instances.entries())
        atts.push(
          attempt(plan, {
            cell: c.id,
            instance,
            outcome: i < (c.id === 'a' ? 4 : 10) ? 'resolved' : 'unresolved',
            spend: (c.id === 'b' ? 0.2 : 0.1) * (1 + (i % 3)),
            requests: c.id === 'b' && i < 9 ? 12 : 10,
          }),
        )
    const r = await run(plan, atts)
    const c = r.comparison
    const [only] = c.comparisons
    expect(c.comparisons).toHaveLength(1)
    // Equal: the family is this comparison's own 9 tests.
    for (const t of only!.tests) {
      const fam = c.multiplicity!.tests.find((x) => x.id === t.id)!
      expect(fam.p_adjusted).toBe(t.p_holm)
    }
    expect(only!.tests.find((t) => t.id === 'sign:proxy_requests')!.p_holm).toBe(0.03125)
    expect(adjustedP(c, only!, 'sign:proxy_requests')).toEqual({ p: 0.03125, label: 'Holm' })
    expect(r.md).toContain('| Sign test p (Holm) |')
    expect(mdSignCell(r.md, '### `a` → `b`', 'Proxy requests')).toBe('0.00391 (0.0313); ↑9 ↓0 =3')
    expect(r.html).toContain('<th>Sign test p (Holm)</th>')
    expect(r.html).toContain('<td>0.00391 (0.0313); ↑9 ↓0 =3</td>')
  })

  it('a comparison.json without the family section (an earlier version) shows each comparison’s own Holm', async () => {
    const { plan, atts } = await twoModels()
    const r = await run(plan, atts)
    const { multiplicity: _, ...older } = r.comparison
    const md = renderMarkdownReport(older)
    expect(md).toContain('| Sign test p (Holm) |')
    expect(mdSignCell(md, '### `pi-glm` → `oc-glm`', 'Proxy requests')).toBe('0.00391 (0.0313); ↑9 ↓0 =3')
    expect(renderHtmlReport(older)).toContain('<td>0.00391 (0.0313); ↑9 ↓0 =3</td>')
  })
})
