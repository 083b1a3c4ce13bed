import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { detectStep } from '../../src/pipeline/detect.js'
import { writeReportFiles } from '../../src/report/write.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

// The run stage names each attempt's ATIF file in its record (relative to logs_dir); the comparison
// and both reports link it as a path inside the artifacts folder.
describe("the reports link each attempt's ATIF trajectory", () => {
  it('markdown and HTML link every attempt that has one; a record whose path leaves the artifact links none', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const records = pairedOutcomes(plan, { both: 2, bOnly: 0, cOnly: 0, neither: 0 })
    for (const r of records) r.atif = 'trajectory.atif.json'
    const forged = records.find((r) => r.cell_id === 'b' && r.instance_id === 't-002')!
    forged.logs_dir = '../../outside'
    const noFile = records.find((r) => r.cell_id === 'b' && r.instance_id === 't-001')!
    delete noFile.atif
    const dir = writeArtifacts(plan, records)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-atif-links-'))
    const planPath = writePlan(plan)
    const r = await aggregate({ plan: planPath, artifacts: dir, out, resamples: 200 })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    const want = (i: string) => `${legA.artifact}/logs/${i}/0-1/trajectory.atif.json`
    const row = (i: string) => r.comparison.instances.find((x) => x.instance === i)!
    expect(row('t-001').cells.a?.atif).toEqual([want('t-001')])
    expect(row('t-002').cells.a?.atif).toEqual([want('t-002')])
    expect(row('t-001').cells.b?.atif).toBeUndefined()
    expect(row('t-002').cells.b?.atif).toBeUndefined()
    // Links resolve from the report's folder to the file inside the artifacts folder.
    const rel = path.relative(out, dir).split(path.sep).join('/')
    const href = (i: string) => `${rel}/${want(i)}`
    mkdirSync(path.dirname(path.join(dir, want('t-001'))), { recursive: true })
    writeFileSync(path.join(dir, want('t-001')), '{}')
    expect(existsSync(path.resolve(out, href('t-001')))).toBe(true)
    expect(r.markdown).toContain(`[ATIF](${href('t-001')})`)
    expect(r.markdown).toContain(`[ATIF](${href('t-002')})`)
    expect(r.markdown).toMatch(
      /ATIF: each attempt's trajectory as ATIF v1\.7, a file inside its leg's artifact/,
    )
    expect(r.markdown).not.toContain('outside')
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).toContain(`<a class="atif" href="${href('t-001')}"`)
    expect(html.match(/<a class="atif"/g)).toHaveLength(2)
    expect(html).not.toContain('../../outside')

    // detect writes both reports again with its decision: the links still resolve the same way
    expect(r.comparison.artifacts_href).toBe(rel)
    await detectStep({ comparison: r.comparisonPath, plan: planPath })
    const md2 = readFileSync(r.reportPath, 'utf8')
    expect(md2).toContain('## Decision')
    expect(md2).toContain(`[ATIF](${href('t-001')})`)
    const html2 = readFileSync(r.htmlPath, 'utf8')
    expect(html2).toContain(`<a class="atif" href="${href('t-001')}"`)
    expect(html2.match(/<a class="atif"/g)).toHaveLength(2)
  })

  it("a forged artifacts_href in comparison.json never makes an ATIF link leave the reports' folder or break out", async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const records = pairedOutcomes(plan, { both: 2, bOnly: 0, cOnly: 0, neither: 0 })
    for (const r of records) r.atif = 'trajectory.atif.json'
    const dir = writeArtifacts(plan, records)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-atif-forged-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 200 })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    const file = `${legA.artifact}/logs/t-001/0-1/trajectory.atif.json`
    const refused = ['//evil.test', '/etc', '///evil.test', 'a//b', 'x/']
    for (const forged of refused) {
      const c = { ...r.comparison, artifacts_href: forged }
      await writeReportFiles(c, out, null)
      const md = readFileSync(r.reportPath, 'utf8')
      const html = readFileSync(r.htmlPath, 'utf8')
      expect(md, forged).not.toContain('[ATIF](')
      expect(md, forged).toContain(`ATIF \`${file}\``)
      expect(html, forged).not.toContain('<a class="atif"')
      expect(html, forged).not.toMatch(/href="\//)
    }
    // A relative prefix with odd characters is percent-encoded: no scheme, no early `)`, no quote.
    const encoded: Array<[string, string]> = [
      ['javascript:alert(1)', 'javascript%3Aalert%281%29'],
      ['x)](evil.test', 'x%29%5D%28evil.test'],
      ['a"onmouseover="b', 'a%22onmouseover%3D%22b'],
      ["it's", 'it%27s'],
      ['../..', '../..'],
    ]
    for (const [forged, want] of encoded) {
      const c = { ...r.comparison, artifacts_href: forged }
      await writeReportFiles(c, out, null)
      const md = readFileSync(r.reportPath, 'utf8')
      const html = readFileSync(r.htmlPath, 'utf8')
      expect(md, forged).toContain(`[ATIF](${want}`)
      expect(md, forged).not.toMatch(/\]\([a-z]+:/i)
      expect(html, forged).toContain(`<a class="atif" href="${want}`)
      expect(html, forged).not.toContain('"onmouseover')
    }
  })

  it('a forged artifacts_href in comparison.json is percent-encoded: it never ends the link or opens another', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(1) } })
    const records = pairedOutcomes(plan, { both: 1, bOnly: 0, cOnly: 0, neither: 0 })
    for (const r of records) r.atif = 'trajectory.atif.json'
    const dir = writeArtifacts(plan, records)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-atif-forged-'))
    const planPath = writePlan(plan)
    const r = await aggregate({ plan: planPath, artifacts: dir, out, resamples: 200 })
    const forged = { ...r.comparison, artifacts_href: 'x)[click](javascript:alert(1)"><script>/y' }
    writeFileSync(r.comparisonPath, JSON.stringify(forged))
    await detectStep({ comparison: r.comparisonPath, plan: planPath })
    const md = readFileSync(r.reportPath, 'utf8')
    const links = [...md.matchAll(/\[ATIF\]\(([^)\s]*)\)/g)].map((m) => m[1])
    expect(links).toHaveLength(2)
    for (const l of links)
      expect(l).toMatch(/^x%29%5Bclick%5D%28javascript%3Aalert%281%29%22%3E%3Cscript%3E\/y\//)
    expect(md).not.toContain('](javascript')
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).not.toContain('<script>/y')
    expect(html).toContain('href="x%29%5Bclick%5D%28javascript%3Aalert%281%29%22%3E%3Cscript%3E/y/')
  })
})
