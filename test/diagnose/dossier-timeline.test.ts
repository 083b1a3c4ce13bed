// The dossier's timeline and its counts agree: an attempt whose only edits failed, or went to files
// outside the diff, says which — counted from the timeline it shows — never "never" beside edits;
// the numbers it prints are rounded (milestone seconds to 0.1 s, metric values to 6 places).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { diffOf, jsonl, makeRunDir, opencodeEvents, piEvents, rowsEvery, type Step } from './run-dir.js'

/** The markdown row `label` of the first measure table: its cells after the label. */
function row(md: string, label: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${label} |`))
  if (!line) throw new Error(`no row ${label}`)
  return line
    .split(' | ')
    .slice(1)
    .map((c) => c.replace(/ \|$/, ''))
}

describe('dossier.md: the edit milestones agree with the timeline and the counts', () => {
  it('failed edits and edits to other files are named and counted; a material edit shows its time and requests', async () => {
    // t-2 is lost by the treatment (b): its discordant block comes first in the dossier.
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    const find = (cell: string) => run.attempts.find((a) => a.cell_id === cell && a.instance_id === 't-2')!
    const a = find('a')
    const b = find('b')
    const good: Step[] = [
      { s: 1.25, tool: 'read', args: { path: 'src/x.js' }, output: 'x' },
      { s: 2.34, tool: 'edit', args: { path: 'src/x.js', oldText: 'a', newText: 'b' }, output: 'ok' },
    ]
    // b (OpenCode): an edit of the diff's file that failed twice, then one edit to another file.
    const bad: Step[] = [
      { s: 1, tool: 'read', args: { filePath: '/attempt/work/src/x.js' }, output: 'x' },
      {
        s: 2,
        tool: 'edit',
        args: { filePath: '/attempt/work/src/x.js', oldString: 'zz', newString: 'b' },
        output: 'no match',
        error: true,
      },
      {
        s: 3,
        tool: 'edit',
        args: { filePath: '/attempt/work/src/x.js', oldString: 'zz', newString: 'b' },
        output: 'no match',
        error: true,
      },
      { s: 4, tool: 'edit', args: { filePath: '/attempt/work/notes.md' }, output: 'ok' },
    ]
    run.write(a, {
      trajectory: jsonl(piEvents(a, good)),
      patch: diffOf('src/x.js'),
      ledger: rowsEvery(a, 3, 1),
    })
    run.write(b, { trajectory: jsonl(opencodeEvents(b, bad)), patch: '', ledger: rowsEvery(b, 4, 1) })
    await run.aggregate()
    const r = await diagnoseRun({ dir: run.dir })
    const md = readFileSync(r.dossierMd, 'utf8')

    // Columns: a/t-2/0-1 (baseline), b/t-2/0-1 (treatment).
    expect(row(md, 'first material edit: s / requests')).toEqual([
      // the edit at 2.34 s, rounded; requests at 0, 1 and 2 s had started
      '2.3 / 3',
      'none material: 1 edit to other files, 2 failed edits',
    ])
    expect(row(md, 'final edit: s / requests')).toEqual([
      '2.3 / 3',
      'none material: 1 edit to other files, 2 failed edits',
    ])
    // The counts row counts the edits that succeeded: one each.
    expect(row(md, 'edits / re-edits / reversions')).toEqual(['1 / 0 / 0', '1 / 0 / 0'])
    // b's timeline holds the three edits, two of them failed.
    const timeline = md.slice(md.indexOf('### Timeline b/t-2/0-1'))
    const edits = timeline
      .split('\n')
      .filter((l) => l.includes('| edit |'))
      .map((l) => l.trim().split(' | ').at(-1))
    expect(edits).toEqual(['failed |', 'failed |', 'ok |'])
    // The first relevant read, rounded to 0.1 s.
    expect(row(md, 'first relevant read: s / requests')).toEqual(['1.3 / 2', '1.0 / 2'])
    // No unrounded float anywhere in the measure tables.
    const tables = md.slice(0, md.indexOf('## Timelines'))
    expect(tables).not.toMatch(/\d\.\d{7,}/)
  })

  it('an attempt with no edit at all says never', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    const find = (cell: string) => run.attempts.find((a) => a.cell_id === cell && a.instance_id === 't-2')!
    const a = find('a')
    const b = find('b')
    const read: Step[] = [{ s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' }]
    run.write(a, {
      trajectory: jsonl(piEvents(a, read)),
      patch: diffOf('src/x.js'),
      ledger: rowsEvery(a, 2, 1),
    })
    run.write(b, { trajectory: jsonl(opencodeEvents(b, read)), patch: '', ledger: rowsEvery(b, 2, 1) })
    await run.aggregate()
    const md = readFileSync((await diagnoseRun({ dir: run.dir })).dossierMd, 'utf8')
    expect(row(md, 'first material edit: s / requests')).toEqual(['never', 'never'])
  })
})
