import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { comparePublished } from '../../src/pipeline/published.js'
import { AtifTrajectorySchema } from '../../src/trajectory/atif-schema.js'

// A Harbor job in Harbor's own layout (<job>/<trial>/result.json, agent/trajectory.json,
// verifier/test-stdout.txt), compared by `compare`, then diagnosed from the job folder itself.
const FIXTURE = path.join(import.meta.dirname, '../compare/fixtures/harbor-job')
const CLAUDE = 'claude-code__claude-sonnet-4-5'
const CODEX = 'codex__claude-sonnet-4-5'

let tmp: string
let job: string
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'hw-harbor-diag-'))
  job = path.join(tmp, '2026-06-01__10-00-00')
  cpSync(FIXTURE, job, { recursive: true })
  // The codex side of fix-git leaves its own ATIF trajectory, as Harbor's codex agent writes it.
  mkdirSync(path.join(job, 'fix-git__co09xQz', 'agent'), { recursive: true })
  writeFileSync(
    path.join(job, 'fix-git__co09xQz', 'agent', 'trajectory.json'),
    JSON.stringify({
      schema_version: 'ATIF-v1.7',
      session_id: 'co09',
      agent: { name: 'codex', version: '0.46.0', model_name: 'claude-sonnet-4-5' },
      steps: [
        { step_id: 1, timestamp: '2026-06-01T10:00:05Z', source: 'user', message: 'Fix the repository.' },
        {
          step_id: 2,
          timestamp: '2026-06-01T10:00:15Z',
          source: 'agent',
          message: 'Checking.',
          tool_calls: [{ tool_call_id: 'c1', function_name: 'shell', arguments: { command: 'git log -1' } }],
          observation: { results: [{ source_call_id: 'c1', content: 'commit 1' }] },
          metrics: { prompt_tokens: 900, completion_tokens: 20, cached_tokens: 0 },
        },
        { step_id: 3, timestamp: '2026-06-01T10:00:25Z', source: 'agent', message: 'I could not fix it.' },
      ],
    }),
  )
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

describe('diagnose reads a Harbor job', () => {
  it("maps each driving trial's agent/trajectory.json, lists the broken trial folders, and writes ATIF copies", async () => {
    const out = path.join(tmp, 'out')
    await comparePublished({
      baseline: `${job}#${CLAUDE}`,
      treatment: `${job}#${CODEX}`,
      out,
      resamples: 200,
    })
    const cmp = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    const drivers = cmp.comparisons[0].drivers.map((d: { instance: string }) => d.instance)
    expect(drivers).toContain('fix-git')
    const r = await diagnoseRun({ dir: out, artifacts: job })
    const ids = Object.keys(r.dossier.attempts).sort()
    const claude = cmp.cells.find((c: { label: string }) => c.label === CLAUDE).id
    const codex = cmp.cells.find((c: { label: string }) => c.label === CODEX).id
    expect(ids).toContain(`${claude}/fix-git/0-1`)
    expect(ids).toContain(`${codex}/fix-git/0-1`)
    const c = r.dossier.attempts[`${claude}/fix-git/0-1`]!
    expect(c.harness).toBe('claude-code')
    expect(c.outcome).toBe('resolved')
    expect(c.trajectory.issues).toEqual([])
    expect(c.trajectory.events.map((e) => [e.kind, e.tool])).toEqual([
      ['other', 'atif_user'],
      ['message', null],
      ['search', 'Bash'],
      ['edit', 'Edit'],
      ['test', 'Bash'],
      ['message', null],
    ])
    expect(c.verifier.log_tail).toBeTruthy()
    const x = r.dossier.attempts[`${codex}/fix-git/0-1`]!
    expect(x.outcome).toBe('unresolved')
    expect(x.trajectory.events.filter((e) => e.command === 'git log -1')).toHaveLength(1)
    // A trial without a trajectory is still an attempt, its trajectory flagged missing.
    const cl04 = r.dossier.attempts[`${claude}/fix-git/1-1`]!
    expect(cl04.trajectory.issues[0]?.code).toBe('missing')
    // Broken trial folders are listed; nothing is silently dropped.
    const notes = r.dossier.notes.join('\n')
    expect(notes).toMatch(/fix-git__cl98xQz: no result\.json/)
    expect(notes).toMatch(/sqlite-db__co99xQz: result\.json is not valid JSON/)
    expect(notes).toMatch(/no proxy ledger/)
    // Each diagnosed trial is also written as ATIF v1.7 and validates.
    const atifDir = path.join(path.dirname(r.dossierJson), 'atif')
    const files = readdirSync(atifDir)
    expect(files.length).toBe(ids.length)
    for (const f of files)
      expect(
        AtifTrajectorySchema.safeParse(JSON.parse(readFileSync(path.join(atifDir, f), 'utf8'))).success,
      ).toBe(true)
  })
})
