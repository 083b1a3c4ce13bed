import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Dossier } from '../../src/diagnose/schema.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { diffOf, jsonl, makeRunDir, piEvents, type Step } from './run-dir.js'

// `diagnose` reads files named by attempt records (logs_dir): a forged record must not lead it out of
// the leg folder, through `..` or through a symbolic link (issue 27 point 8).

const SECRET = 'hw-sentinel-diag-51c2'
const steps: Step[] = [{ s: 1, tool: 'bash', args: { command: 'npm test' }, output: '1 passing' }]

describe('diagnose keeps every path from a record inside the leg folder', () => {
  it('a logs_dir with .. and a trajectory that is a symbolic link are refused with notes', async () => {
    const run = await makeRunDir({ both: 0, bOnly: 2, cOnly: 0, neither: 0 })
    const outside = mkdtempSync(path.join(tmpdir(), 'hw-outside-'))
    writeFileSync(path.join(outside, 'patch.diff'), `${SECRET} patch\n`)
    writeFileSync(path.join(outside, 'verifier.log'), `${SECRET} log\n`)
    writeFileSync(path.join(outside, 'trajectory.jsonl'), `{"type":"${SECRET}"}\n`)
    const b2 = run.attempts.find((a) => a.cell_id === 'b' && a.instance_id === 't-2')!
    for (const a of run.attempts)
      run.write(a, { trajectory: jsonl(piEvents(a, steps)), patch: diffOf('src/x.js') })
    const leg = run.plan.legs.find((l) => l.cell === 'b')!
    const legDir = path.join(run.dir, 'artifacts', leg.artifact)
    // b/t-1: its record's logs_dir climbs out of the leg folder to `outside`.
    const forged = path.relative(legDir, outside)
    const file = path.join(legDir, 'attempts.jsonl')
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .map((r) => (r.instance_id === 't-1' ? { ...r, logs_dir: forged } : r))
    writeFileSync(file, `${lines.map((r) => JSON.stringify(r)).join('\n')}\n`)
    // b/t-2: its trajectory.jsonl is a symbolic link out.
    const traj = path.join(legDir, b2.logs_dir, 'trajectory.jsonl')
    rmSync(traj)
    symlinkSync(path.join(outside, 'trajectory.jsonl'), traj)
    await run.aggregate()
    const r = await diagnoseRun({ dir: run.dir })
    const json = readFileSync(r.dossierJson, 'utf8')
    const md = readFileSync(r.dossierMd, 'utf8')
    expect(json).not.toContain(SECRET)
    expect(md).not.toContain(SECRET)
    const d = JSON.parse(json) as Dossier
    expect(d.notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/b\/t-1 trial 0 attempt 1 logs_dir: .* leads out of the leg folder: refused/),
        expect.stringMatching(/trajectory\.jsonl is a symbolic link: not followed out of the folder/),
      ]),
    )
  })
})
