import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Dossier } from '../../src/diagnose/schema.js'
import { detectStep } from '../../src/pipeline/detect.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { diffOf, jsonl, makeRunDir, opencodeEvents, piEvents, rowsEvery, type Step } from './run-dir.js'

// t-1, t-2: both resolve; t-3: only the baseline (a, Pi) resolves; t-4: neither.
async function scenario() {
  const run = await makeRunDir({ both: 2, bOnly: 1, cOnly: 0, neither: 1 })
  const find = (cell: string, inst: string) =>
    run.attempts.find((a) => a.cell_id === cell && a.instance_id === inst)!
  const a3 = find('a', 't-3')
  const b3 = find('b', 't-3')
  const good: Step[] = [
    { s: 2, tool: 'read', args: { path: 'src/x.js' }, output: 'export const x = 1\n' },
    { s: 4, tool: 'edit', args: { path: 'src/x.js', oldText: 'old', newText: 'new' }, output: 'ok' },
    { s: 6, tool: 'bash', args: { command: 'npm test' }, output: '1 passing' },
  ]
  const looping: Step[] = [
    { s: 1, tool: 'read', args: { filePath: '/attempt/work/src/x.js' }, output: 'export const x = 1\n' },
    { s: 2, tool: 'read', args: { filePath: '/attempt/work/src/x.js' }, output: 'export const x = 1\n' },
    { s: 3, tool: 'read', args: { filePath: '/attempt/work/src/x.js' }, output: 'export const x = 1\n' },
    { s: 5, tool: 'edit', args: { filePath: '/attempt/work/src/y.js' }, output: 'edited' },
    { s: 7, tool: 'bash', args: { command: 'npm test' }, output: '1 failing', error: true },
    { s: 8, tool: 'bash', args: { command: 'npm test' }, output: '1 failing', error: true },
    { s: 9, tool: 'bash', args: { command: 'npm test' }, output: '1 failing', error: true },
  ]
  run.write(a3, {
    trajectory: jsonl(piEvents(a3, good)),
    patch: diffOf('src/x.js'),
    ledger: rowsEvery(a3, 5, 1),
  })
  run.write(b3, {
    trajectory: jsonl(opencodeEvents(b3, looping, 'I could not make <b>@team</b> tests pass')),
    patch: diffOf('src/y.js'),
    ledger: rowsEvery(b3, 10, 1, { cacheRead: 0, tools: 9 }),
  })
  // t-4: the baseline's trajectory is cut off mid-line; the treatment's is missing.
  const a4 = find('a', 't-4')
  run.write(a4, { trajectory: `${jsonl(piEvents(a4, good)).slice(0, -40)}`, patch: '' })
  await run.aggregate()
  return { run, a3, b3, a4 }
}

describe('diagnose: the dossier of a compared run', () => {
  it('lists the discordant block first with both cells side by side, and every measure is counted', async () => {
    const { run, a3, b3 } = await scenario()
    const r = await diagnoseRun({ dir: run.dir })
    const d = JSON.parse(readFileSync(r.dossierJson, 'utf8')) as Dossier
    expect(r.roundDir).toBe(run.dir)
    const [cmp] = d.comparisons
    expect(cmp!.id).toBe('cmp:a..b')
    expect(cmp!.instances[0]).toMatchObject({
      id: 'cmp:a..b/t-3',
      instance: 't-3',
      reason: 'treatment_loss',
      baseline: ['a/t-3/0-1'],
      treatment: ['b/t-3/0-1'],
    })
    // residual instances follow, each once
    const names = cmp!.instances.map((i) => i.instance)
    expect(new Set(names).size).toBe(names.length)
    expect(cmp!.instances.slice(1).every((i) => i.reason === 'residual')).toBe(true)

    const base = d.attempts['a/t-3/0-1']!
    const treat = d.attempts['b/t-3/0-1']!
    expect(base.harness).toBe('pi')
    // the read at 2 s: requests at 0, 1 and 2 s had started, 3 × 0.01 USD
    expect(base.measures.milestones.first_relevant_read).toEqual({
      event_id: 'a/t-3/0-1#0',
      t_ms: 2000,
      requests: 3,
      spend_usd: 0.03,
    })
    expect(base.measures.milestones.first_passing_test?.event_id).toBe('a/t-3/0-1#2')
    expect(base.measures.verification).toEqual({
      test_runs: 1,
      tested_after_final_edit: true,
      stopped_with_known_failures: false,
    })
    expect(base.measures.requests).toMatchObject({ count: 5, cache_read_share: 0.8, max_tools: 7 })

    // the treatment re-read src/x.js twice with unchanged output, edited another file, and looped on a failing test
    expect(treat.measures.repeats).toMatchObject({ repeated_reads: 2, unchanged_commands: 2 })
    expect(treat.measures.failing_loops).toMatchObject({ loops: 1, longest: 3, failed_calls: 3 })
    // src/y.js is in its own final patch, so the edit counts as material (relevant = either final patch)
    expect(treat.measures.milestones.first_material_edit).toMatchObject({
      event_id: 'b/t-3/0-1#3',
      t_ms: 5000,
      requests: 6,
    })
    expect(treat.measures.milestones.first_passing_test).toBeNull()
    expect(treat.measures.verification.stopped_with_known_failures).toBe(true)
    expect(treat.measures.requests).toMatchObject({ count: 10, cache_read_share: 0, max_tools: 9 })
    expect(treat.measures.composition.counts).toMatchObject({ read: 3, edit: 1, test: 3 })
    // request curve joined to the trajectory by time
    expect(treat.curve).toHaveLength(10)
    expect(treat.curve[0]!.after_event).toBeNull()
    expect(treat.curve[4]!).toMatchObject({ t_ms: 4000, after_event: 'b/t-3/0-1#2' })
    expect(base.patch.files).toEqual(['src/x.js'])
    expect(base.logs_dir).toBe(path.join('..', 'artifacts', 'hw-exp-a-a-0', a3.logs_dir))
    expect(treat.instance).toBe(b3.instance_id)
  })

  it('a truncated or missing trajectory is named and the dossier is still written', async () => {
    const { run } = await scenario()
    const r = await diagnoseRun({ dir: run.dir })
    const t4 = r.dossier.comparisons[0]!.instances.find((i) => i.instance === 't-4')
    expect(t4).toBeDefined()
    expect(t4!.notes).toEqual([
      expect.stringMatching(/^a\/t-4\/0-1: trajectory truncated \(line \d+\)/),
      'b/t-4/0-1: trajectory missing: trajectory.jsonl is missing',
    ])
    expect(r.dossier.attempts['a/t-4/0-1']!.trajectory.events.length).toBeGreaterThan(2)
  })

  it('dossier.md escapes text from runs and links each attempt to its timeline anchor', async () => {
    const { run } = await scenario()
    const r = await diagnoseRun({ dir: run.dir })
    const md = readFileSync(r.dossierMd, 'utf8')
    expect(md).toContain('[b/t-3/0-1](#timeline-b-t-3-0-1)')
    expect(md).toContain('<a id="timeline-b-t-3-0-1"></a>')
    // text from the run only appears inside a code span (shown verbatim, no HTML, no mention)
    expect(md).toContain('| `I could not make <b>@team</b> tests pass` |')
    expect(md.replace(/`[^`\n]*`/g, '')).not.toMatch(/<b>|@team/)
    expect(md).toContain('| stopped with known failures | no | yes |')
  })

  it('report.html links each driving instance to both timelines, once, however often diagnose runs', async () => {
    const { run } = await scenario()
    await diagnoseRun({ dir: run.dir })
    await diagnoseRun({ dir: run.dir })
    const html = readFileSync(path.join(run.dir, 'report.html'), 'utf8')
    expect(html.split('<!-- diagnosis:start -->')).toHaveLength(2)
    expect(html).toContain('<a href="diagnosis/dossier.md#timeline-b-t-3-0-1">b/t-3/0-1</a>')
    expect(html).toContain('<tr id="driver-cmp-a-b-t-3"><td>b vs a</td><td>t-3</td><td>treatment loss</td>')
    expect(html.indexOf('<!-- diagnosis:end -->')).toBeLessThan(html.lastIndexOf('</body>'))
  })

  it('the cap keeps the discordant blocks first and counts what it left out', async () => {
    const { run } = await scenario()
    const r = await diagnoseRun({ dir: run.dir, maxInstances: 1 })
    expect(r.dossier.comparisons[0]!.instances.map((i) => i.instance)).toEqual(['t-3'])
    expect(r.dossier.comparisons[0]!.capped).toBeGreaterThan(0)
  })

  it("the manifest's reporting.dossier_instances, as decision.json records it, caps the dossier", async () => {
    const run = await makeRunDir({ both: 2, bOnly: 1, cOnly: 0, neither: 1 }, undefined, {
      reporting: { bootstrap_resamples: 200, dossier_instances: 2 },
    })
    await run.aggregate()
    await detectStep({
      comparison: path.join(run.dir, 'comparison.json'),
      plan: path.join(run.dir, 'plan.json'),
    })
    const r = await diagnoseRun({ dir: run.dir })
    expect(r.dossier.max_instances).toBe(2)
    expect(r.dossier.comparisons[0]!.instances).toHaveLength(2)
    expect(r.dossier.decision_status).not.toBeNull()
  })

  it('a folder without comparison.json is a clear error', async () => {
    await expect(diagnoseRun({ dir: '/nonexistent/run' })).rejects.toMatchObject({
      code: 'diagnose_input_invalid',
    })
  })
})
