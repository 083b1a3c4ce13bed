import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { aggregate, aggregationFailure } from '../../src/pipeline/aggregate.js'
import { buildPlan } from '../../src/plan/plan.js'
import { attempt, ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { captureOutput } from '../support/capture.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const io = captureOutput()
const outDir = () => mkdtempSync(path.join(tmpdir(), 'hw-cli-agg-'))

/** A Markdown table's rows (lines starting with "|") split into cells. */
function tableColumns(markdown: string, headerStart: string): { header: number; separator: number } {
  const lines = markdown.split('\n')
  const at = lines.findIndex((l) => l.startsWith(headerStart))
  const count = (l: string) => l.replace(/\\\|/g, '').split('|').length - 2
  return { header: count(lines[at]!), separator: count(lines[at + 1]!) }
}

describe('harness-watch aggregate: field cases', () => {
  it('F09: duplicate result rows are listed, never counted twice, counted as input errors, and exit 1 naming file:line', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 })
    const dup = {
      ...atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-002')!,
      outcome: 'unresolved',
    }
    const legB = plan.legs.find((l) => l.cell === 'b')!
    const dir = writeArtifacts(plan, atts, { extraLines: { [legB.leg]: [JSON.stringify(dup)] } })
    const out = outDir()
    const code = await main(['aggregate', '--plan', writePlan(plan), '--artifacts', dir, '--out', out])
    expect(code).toBe(1)
    expect(io.out).toMatch(
      /^4 blocks planned: 3 outcome-complete, 3 complete, 1 incomplete; 0 missing leg\(s\), 1 input error\(s\)/,
    )
    expect(io.err).toBe(
      `aggregation failed: 1 duplicate result row(s) in ${legB.artifact}/attempts.jsonl:5: each (cell, instance, trial, attempt) must appear once; the report lists them and counts none twice\n`,
    )
    // The outputs are still written, with the duplicate listed.
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain('`duplicate_rows`')
    expect(report).toContain(`${legB.artifact}/attempts.jsonl:5`)
    const c = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    expect(c.cells[1].intent_to_treat.attempts).toBe(4)
  })

  it('a truncated row is named with file:line, its block is incomplete, and the aggregation exits 1', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    const broken = JSON.stringify(atts.find((a) => a.cell_id === 'a')).slice(0, 120)
    const dir = writeArtifacts(plan, atts, { extraLines: { [legA.leg]: [broken] } })
    const out = outDir()
    const code = await main(['aggregate', '--plan', writePlan(plan), '--artifacts', dir, '--out', out])
    expect(code).toBe(1)
    expect(io.out).toMatch(
      /^4 blocks planned: 4 outcome-complete, 4 complete, 0 incomplete; 0 missing leg\(s\), 1 input error\(s\)/,
    )
    expect(io.err).toMatch(
      new RegExp(
        `^aggregation failed: 1 input error\\(s\\); the rows or files named are not counted:\\n  ${legA.artifact}/attempts\\.jsonl:5: not valid JSON`,
      ),
    )
  })

  it('F09: two attempts of one trial both marked final fail the aggregation too', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const atts = [
      attempt(plan, { cell: 'a', instance: 't-001', attempt: 1 }),
      attempt(plan, { cell: 'a', instance: 't-001', attempt: 2 }),
      attempt(plan, { cell: 'a', instance: 't-002' }),
      attempt(plan, { cell: 'b', instance: 't-001' }),
      attempt(plan, { cell: 'b', instance: 't-002' }),
    ]
    const r = await aggregate({ plan: writePlan(plan), artifacts: writeArtifacts(plan, atts), out: outDir() })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    expect(aggregationFailure(r.comparison)).toMatch(
      new RegExp(`^1 duplicate result row\\(s\\) in ${legA.artifact}/attempts\\.jsonl:\\d`),
    )
    // Without duplicates there is nothing to fail on.
    const clean = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, [atts[0]!, ...atts.slice(2)]),
      out: outDir(),
    })
    expect(aggregationFailure(clean.comparison)).toBeNull()
  })

  it('F11: a zero-cell plan says "no cells scheduled", never "N complete"; the instance table is well formed; detect exits 1', async () => {
    const file = writeManifest(baseManifest({ panel: { source: 'inline', instances: ids(40) } }))
    const loaded = await loadManifest(file)
    const plan = buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir), { cells: [] })
    expect(plan.legs).toHaveLength(0)
    const planFile = writePlan(plan)
    const out = outDir()
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-cli-agg-empty-'))
    expect(await main(['aggregate', '--plan', planFile, '--artifacts', dir, '--out', out])).toBe(0)
    expect(io.out).toMatch(/^no cells scheduled: 40 blocks planned, nothing was run or compared;/)
    expect(io.out).not.toMatch(/40 outcome-complete|40 complete/)
    const c = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    expect(c.blocks).toMatchObject({ planned: 40, outcome_complete: 0, complete: 0 })
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain('| Blocks | no cells scheduled: 40 planned, none run or compared |')
    expect(report).toContain('> **No cells scheduled:**')
    expect(tableColumns(report, '| Instance | Status')).toEqual({ header: 2, separator: 2 })

    io.out = ''
    const code = await main(['detect', '--comparison', path.join(out, 'comparison.json'), '--plan', planFile])
    expect(code).toBe(1)
    expect(io.out).toMatch(/^inconclusive/)
    expect(io.err).toMatch(/^evaluation failed: no cells scheduled: 40 blocks were planned/)
    const withDecision = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(withDecision).toContain('**Decision: inconclusive**')
  })

  it('a plan with legs that recorded nothing: aggregate writes its report and exits 1, detect exits 1', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const planFile = writePlan(plan)
    const out = outDir()
    const empty = mkdtempSync(path.join(tmpdir(), 'hw-cli-agg-none-'))
    expect(await main(['aggregate', '--plan', planFile, '--artifacts', empty, '--out', out])).toBe(1)
    expect(io.err).toBe(
      `aggregation failed: no attempt records were read: all ${plan.legs.length} planned legs are missing (${plan.legs.map((l) => l.artifact).join(', ')})\n`,
    )
    expect(io.out).toMatch(/a → b: no outcome-complete blocks \(W\/L\/T —, McNemar p —\)/)
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain('| `a` → `b` | 0 | — |')
    // no evaluated pair: no test, no difference — the row says why
    expect(report).toContain(
      '| `a` → `b` | 0 | — | — | — | not evaluated: cell a not evaluated: no attempt was recorded; cell b not evaluated: no attempt was recorded | — | — |',
    )
    expect(report).toContain('| Denominators | scheduled 6 · evaluated 0 (outcome) · metered 0 (cost)')
    expect(report).not.toMatch(/McNemar[^\n]*\n[^\n]*\n\| `a` → `b` \| 0 \|[^\n]*\| 1 ·/)
    io.out = ''
    io.err = ''
    expect(
      await main(['detect', '--comparison', path.join(out, 'comparison.json'), '--plan', planFile]),
    ).toBe(1)
    expect(io.err).toMatch(/^evaluation failed: 3 blocks were planned but no attempt was recorded/)
  })

  it('--resamples outside 200–100000 is a usage error before anything is read', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    for (const bad of ['0', '199', '100001', '2.5', 'many']) {
      io.err = ''
      const code = await main([
        'aggregate',
        '--plan',
        writePlan(plan),
        '--artifacts',
        '/nonexistent',
        '--resamples',
        bad,
      ])
      expect(code).toBe(2)
      expect(io.err).toMatch(/--resamples (must be|expects) a whole number from 200 to 100000/)
      expect(io.err).not.toMatch(/bootstrapRatioOfMeans|B must/)
    }
    await expect(
      aggregate({ plan: writePlan(plan), artifacts: '/nonexistent', out: outDir(), resamples: 0 }),
    ).rejects.toMatchObject({ code: 'usage' })
  })

  it('points print one way: −18.75 pp is "−18.8" in the summary line and report.md alike', async () => {
    // n = 80, b = 15, c = 0: (c − b) / n × 100 = −18.75 exactly.
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(80) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 40, bOnly: 15, cOnly: 0, neither: 25 }))
    const out = outDir()
    expect(
      await main([
        'aggregate',
        '--plan',
        writePlan(plan),
        '--artifacts',
        dir,
        '--out',
        out,
        '--resamples',
        '500',
      ]),
    ).toBe(0)
    expect(io.out).toMatch(/a → b: W\/L\/T 0\/15\/65, Δ −18\.8 pp, McNemar p 6\.10e-5,/)
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toMatch(/\| −18\.8 pp \[−\d+\.\d, −\d+\.\d\] \| 6\.10e-5 · 3\.05e-5 · /)
    expect(report).not.toContain('-18.')
    expect(report).not.toContain('−18.7')
  })

  it('the header states the per-attempt limits in words', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 2, bOnly: 0, cOnly: 0, neither: 0 }))
    const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out: outDir(), resamples: 500 })
    expect(r.markdown).toContain(
      '| Limits and budgets | per attempt: timeout 900 s, no spend cap, no request cap |',
    )
    expect(r.markdown).not.toContain('none USD')
    const capped = await makePlan({
      panel: { source: 'inline', instances: ids(2) },
      budgets: { timeout_s: 60, max_spend_usd: 5, max_requests: 200 },
    })
    const r2 = await aggregate({
      plan: writePlan(capped),
      artifacts: writeArtifacts(capped, pairedOutcomes(capped, { both: 2, bOnly: 0, cOnly: 0, neither: 0 })),
      out: outDir(),
      resamples: 500,
    })
    expect(r2.markdown).toContain(
      '| Limits and budgets | per attempt: timeout 60 s, spend cap $5, request cap 200 |',
    )
  })
})
