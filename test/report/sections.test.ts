import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Comparison } from '../../src/records/comparison.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { fmtP } from '../../src/util/format.js'
import { attempt, ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

/** report.md's sections: level-2 headings and the collapsed per-instance table's summary. */
function markdownSectionList(md: string): string[] {
  const out: string[] = []
  for (const line of md.split('\n')) {
    const h = /^## (.+)$/.exec(line)
    if (h) out.push(h[1]!.trim())
    const s = /^<details><summary>(.+)<\/summary>/.exec(line)
    if (s) out.push(s[1]!.trim())
  }
  return out
}

/** report.html's sections: its level-2 headings. */
function htmlSectionList(html: string): string[] {
  return [...html.matchAll(/<h2>(.*?)<\/h2>/g)].map((m) => m[1]!.trim())
}

async function realComparison(k: number): Promise<Comparison> {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) }, trials: k })
  const atts = pairedOutcomes(plan, { both: 5, bOnly: 2, cOnly: 3, neither: 2 })
  // one infra error, so one block is incomplete and listed in both reports
  const x = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-012')!
  Object.assign(
    x,
    attempt(plan, { cell: 'b', instance: 't-012', outcome: 'infra_error', exit: { class: 'infra' } }),
  )
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, atts),
    out: mkdtempSync(path.join(tmpdir(), 'hw-sections-')),
    resamples: 200,
  })
  return r.comparison
}

describe('report.html carries every section report.md carries', () => {
  it('has the same section list as report.md for a real comparison', async () => {
    const c = await realComparison(1)
    const md = renderMarkdownReport(c)
    const html = renderHtmlReport(c)
    const mdList = markdownSectionList(md)
    expect(mdList).toEqual(
      expect.arrayContaining([
        'Outcome',
        'Resources',
        'Request shape at the proxy',
        'Instances driving the difference',
        'Incomplete blocks',
        'Per-instance results',
        'Scope',
      ]),
    )
    expect(htmlSectionList(html).sort()).toEqual([...mdList].sort())
  })

  it('keeps the lists equal when missing legs, unreadable input and notes are present (forged text escaped)', async () => {
    const c = await realComparison(1)
    c.missing_legs.push({
      leg: 'leg-<x>',
      cell: 'b',
      shard: 0,
      artifact: 'hw-leg-b-0',
      reason: 'artifact <script>alert(1)</script> not found',
    } as Comparison['missing_legs'][number])
    c.input_errors.push({
      file: 'legs/<b>.json',
      line: 3,
      message: 'bad row <img src=x>',
    } as Comparison['input_errors'][number])
    c.notes.push('note with <h2>Forged</h2> heading')
    const md = renderMarkdownReport(c)
    const html = renderHtmlReport(c)
    const mdList = markdownSectionList(md)
    expect(mdList).toEqual(expect.arrayContaining(['Missing legs', 'Unreadable input', 'Notes']))
    // The forged heading is escaped, so it is not a section of either report.
    expect(htmlSectionList(html)).not.toContain('Forged')
    expect(html).not.toContain('<script>alert(1)')
    expect(htmlSectionList(html).sort()).toEqual([...mdList].sort())
  })

  it('shows the same figures: Holm-adjusted p, paired differences, per-cell counts, manifest hash', async () => {
    for (const k of [1, 3]) {
      const c = await realComparison(k)
      const md = renderMarkdownReport(c)
      const html = renderHtmlReport(c)
      for (const token of [
        'Sign test p (Holm)',
        'Paired Δ mean',
        'First-request bytes',
        'Treatment losses',
      ]) {
        expect(md).toContain(token)
        expect(html).toContain(token)
      }
      const x = c.comparisons[0]!
      // every Holm-adjusted sign-test p shown in report.md is shown in report.html
      const holm = x.tests.filter((t) => t.id.startsWith('sign:') && typeof t.p_holm === 'number')
      // k = 1: spend differs on all 11 complete blocks, so every metric has a sign test
      if (k === 1) expect(holm.map((t) => t.id)).toContain('sign:spend_usd')
      for (const t of holm) {
        const text = `(${fmtP(t.p_holm)})`
        expect(md).toContain(text)
        expect(html).toContain(text)
      }
      // per-cell counts: k = 1 lists final outcomes; k > 1 lists pass@k and pass^k
      const cell = c.cells.find((y) => y.id === 'b')!
      if (k === 1) {
        expect(cell.final_outcomes.infra_error).toBe(1)
        expect(html).toContain('<th>Infra error</th>')
        expect(html).toContain(`<td>b</td><td class="n">${(cell.resolve_rate.value! * 100).toFixed(1)}`)
      } else {
        expect(md).toContain('pass^3')
        expect(html).toContain('<th>pass^3</th>')
      }
      if (c.stamp.manifest_sha256) {
        expect(md).toContain(c.stamp.manifest_sha256.slice(0, 12))
        expect(html).toContain(`sha256 ${c.stamp.manifest_sha256.slice(0, 12)}`)
      } else {
        throw new Error('the fixture comparison carries no manifest hash')
      }
    }
  })
})
