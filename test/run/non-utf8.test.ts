// Bytes that are not UTF-8 in what a harness delivers are decoded with replacement for the grader,
// counted in the attempt record, and shown by every report: never dropped. The bytes travel the real
// path: a harness writes them into a git workspace, the leg takes the diff, aggregate reads the leg.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { runLeg } from '../../src/run/leg.js'
import { manifestAndPlan, readAttempts, scriptCell, useRunFixture } from './fixture.js'

const fx = useRunFixture()

describe('a diff with bytes that are not UTF-8', () => {
  it('is graded, counted per attempt and shown per cell in comparison.json, report.md and report.html', async () => {
    // Applies the fix, then writes a Latin-1 menu: "café crème" has two bytes (é, è) that are not UTF-8.
    const script = path.join(fx.scripts, 'latin1.sh')
    writeFileSync(
      script,
      [
        '#!/usr/bin/env bash',
        `id=$(grep -o 'FIX:[^ ]*' "$HW_PROMPT_FILE" | head -1 | cut -d: -f2)`,
        `cp -R "${fx.fixes}/$id/." .`,
        "printf 'caf\\351 cr\\350me\\n' > menu.txt",
        'echo "latin-1 menu written"',
        '',
      ].join('\n'),
    )
    chmodSync(script, 0o755)
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'utf8', 'solve.sh'), scriptCell(fx, 'latin', 'latin1.sh')],
      { panel: { source: 'tasks', path: './panel', instances: ['js-add', 'sh+count'] } },
      'non-utf8.yml',
    )
    const artifacts = mkdtempSync(path.join(tmpdir(), 'hw-non-utf8-'))
    for (const leg of plan.legs) {
      const r = await runLeg({
        loaded,
        plan,
        leg: leg.leg,
        outDir: path.join(artifacts, leg.artifact),
        runId: 'run-1',
        workRoot: fx.work,
      })
      expect(r.status).toBe('complete')
    }
    const latinLeg = path.join(artifacts, plan.legs.find((l) => l.cell === 'latin')!.artifact)
    const records = readAttempts(latinLeg)
    // Graded like any other fix (the menu is beside it), each record counting its two sequences.
    expect(records.map((a) => [a.instance_id, a.outcome, a.deliverable.non_utf8])).toEqual(
      expect.arrayContaining([
        ['js-add', 'resolved', 2],
        ['sh+count', 'resolved', 2],
      ]),
    )
    // The patch kept beside the attempt is the text the grader got: each bad byte a U+FFFD, none dropped.
    const patch = readFileSync(path.join(latinLeg, records[0]!.logs_dir, 'patch.diff'), 'utf8')
    expect(patch).toContain('+caf\uFFFD cr\uFFFDme')
    const clean = readAttempts(path.join(artifacts, plan.legs.find((l) => l.cell === 'utf8')!.artifact))
    expect(clean.map((a) => a.deliverable.non_utf8 ?? 0)).toEqual([0, 0])

    const out = mkdtempSync(path.join(tmpdir(), 'hw-non-utf8-out-'))
    const planFile = path.join(out, 'plan.json')
    writeFileSync(planFile, JSON.stringify(plan))
    const r = await aggregate({ plan: planFile, artifacts, out: path.join(out, 'report'), resamples: 200 })
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
    const cell = (id: string) => c.classification!.cells.find((x) => x.cell === id)!
    expect([cell('latin').non_utf8_attempts, cell('latin').non_utf8_sequences]).toEqual([2, 4])
    expect([cell('utf8').non_utf8_attempts, cell('utf8').non_utf8_sequences]).toEqual([0, 0])
    // The attempts stay evaluated: replaced bytes are reported, not a reason to drop the attempt.
    expect(cell('latin').evaluated).toBe(2)

    const md = readFileSync(path.join(path.dirname(r.comparisonPath), 'report.md'), 'utf8')
    const health = md.slice(md.indexOf('## Classification')).split('\n## ')[0]!.split('\n')
    expect(health.find((l) => l.startsWith('| Cell |'))).toMatch(/\| Bytes not UTF-8 \|$/)
    expect(health.find((l) => l.startsWith('| `latin` |'))).toMatch(
      /\| 2 attempt\(s\), 4 sequence\(s\) replaced with U\+FFFD \|$/,
    )
    expect(health.find((l) => l.startsWith('| `utf8` |'))).toMatch(/\| — \|$/)
    const html = renderHtmlReport(c)
    expect(html).toContain('<th>Bytes not UTF-8</th>')
    expect(html).toContain('<td>2 attempt(s), 4 sequence(s) replaced with U+FFFD</td></tr>')
  })
})
