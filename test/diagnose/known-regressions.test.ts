import { describe, expect, it } from 'vitest'
import { runAnalyst } from '../../src/diagnose/analyst.js'
import { scriptedAnalyst } from '../../src/model/analyst-script.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { diffOf, jsonl, makeRunDir, opencodeEvents, piEvents, rowsEvery, type Step } from './run-dir.js'

// Known changes injected into one cell (b) of an otherwise identical pair; the behaviour measures and
// the dossier must point to each, and the scripted analyst must name it.
const work: Step[] = [
  { s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'export const x = 1\n' },
  { s: 2, tool: 'edit', args: { path: 'src/x.js' }, output: 'ok' },
  { s: 3, tool: 'bash', args: { command: 'npm test' }, output: '1 passing' },
]
const rereads: Step[] = [
  work[0]!,
  { s: 2, tool: 'read', args: { path: 'src/x.js' }, output: 'export const x = 1\n' },
  { s: 3, tool: 'read', args: { path: 'src/x.js' }, output: 'export const x = 1\n' },
  { s: 4, tool: 'read', args: { path: 'src/x.js' }, output: 'export const x = 1\n' },
  { s: 5, tool: 'edit', args: { path: 'src/x.js' }, output: 'ok' },
  { s: 6, tool: 'bash', args: { command: 'npm test' }, output: '1 passing' },
]

type Injection = { steps: Step[]; rows: (a: AttemptRecord) => ReturnType<typeof rowsEvery> }
const INJECTIONS: Record<string, Injection> = {
  // a redundant extra tool schema: 8 tools offered on every request instead of 7
  extra_tool_schema: { steps: work, rows: (a) => rowsEvery(a, a.telemetry.rows, 1, { tools: 8 }) },
  // caching disabled at the model: no cache reads at all
  caching_disabled: { steps: work, rows: (a) => rowsEvery(a, a.telemetry.rows, 1, { cacheRead: 0 }) },
  // an instruction that causes repeated reads: the same file read four times, unchanged
  repeated_reads: { steps: rereads, rows: (a) => rowsEvery(a, a.telemetry.rows, 1) },
}

async function inject(kind: keyof typeof INJECTIONS) {
  // every block: both resolve, the treatment costs more (residual drivers)
  const run = await makeRunDir({ both: 3, bOnly: 0, cOnly: 0, neither: 0 })
  const inj = INJECTIONS[kind]!
  for (const a of run.attempts) {
    const isB = a.cell_id === 'b'
    const events = isB ? opencodeEvents(a, inj.steps) : piEvents(a, work)
    run.write(a, {
      trajectory: jsonl(events),
      patch: diffOf('src/x.js'),
      ledger: isB ? inj.rows(a) : rowsEvery(a, a.telemetry.rows, 1),
    })
  }
  await run.aggregate()
  const r = await diagnoseRun({ dir: run.dir })
  const inst = r.dossier.comparisons[0]!.instances[0]!
  const b = r.dossier.attempts[inst.treatment[0]!]!.measures
  const a = r.dossier.attempts[inst.baseline[0]!]!.measures
  const p = await runAnalyst({
    dossier: r.dossier,
    dir: `${r.roundDir}/diagnosis`,
    report: '',
    port: scriptedAnalyst,
  })
  return { a, b, p, dossier: r.dossier }
}

describe('known regressions injected into one cell are pointed to', () => {
  it('a redundant extra tool schema: tools per request differ, nothing else does; the analyst names tool_schema', async () => {
    const { a, b, p } = await inject('extra_tool_schema')
    expect([a.requests.max_tools, b.requests.max_tools]).toEqual([7, 8])
    expect([a.requests.cache_read_share, b.requests.cache_read_share]).toEqual([0.8, 0.8])
    expect(b.repeats.repeated_reads).toBe(0)
    expect(p.grounding.status).toBe('grounded')
    expect(p.answer?.category).toBe('tool_schema')
  })

  it('caching disabled at the model: the cache-read share drops to 0; the analyst names caching', async () => {
    const { a, b, p } = await inject('caching_disabled')
    expect([a.requests.cache_read_share, b.requests.cache_read_share]).toEqual([0.8, 0])
    expect(b.requests.max_tools).toBe(a.requests.max_tools)
    expect(p.grounding.status).toBe('grounded')
    expect(p.answer?.category).toBe('caching')
    expect(p.answer?.hypothesis).toContain('cache share of 0 ')
  })

  it('an instruction causing repeated reads: 3 repeated reads, first edit later; the analyst names the instructions', async () => {
    const { a, b, p, dossier } = await inject('repeated_reads')
    expect([a.repeats.repeated_reads, b.repeats.repeated_reads]).toEqual([0, 3])
    expect(b.milestones.first_material_edit?.t_ms).toBe(5000)
    expect(a.milestones.first_material_edit?.t_ms).toBe(2000)
    expect(p.grounding.status).toBe('grounded')
    expect(p.answer?.category).toBe('prompt_or_instructions')
    // the cited events are the repeated reads themselves
    const cited = p.answer!.supporting_evidence[0]!.event_ids
    const attempt = Object.values(dossier.attempts).find((x) => cited[0]!.startsWith(`${x.id}#`))!
    expect(cited.map((id) => attempt.trajectory.events.find((e) => e.event_id === id)?.kind)).toEqual([
      'read',
      'read',
      'read',
    ])
  })
})
