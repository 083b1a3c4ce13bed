import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import type { Dossier } from '../../src/diagnose/schema.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { HwError } from '../../src/util/errors.js'
import { captureOutput } from '../support/capture.js'
import { diffOf, jsonl, makeRunDir, piEvents, type Step } from './run-dir.js'

// Where diagnose finds a round's files: the comparison, plan.json and artifacts/ may lie apart from the
// decision and the reports (`confirm --out` elsewhere), and a missing artifacts folder is an error that
// names it, never a dossier without a single attempt.

const io = captureOutput()
const steps: Step[] = [{ s: 1, tool: 'bash', args: { command: 'npm test' }, output: '1 passing' }]

async function run() {
  const r = await makeRunDir({ both: 1, bOnly: 2, cOnly: 0, neither: 1 })
  for (const a of r.attempts) r.write(a, { trajectory: jsonl(piEvents(a, steps)), patch: diffOf('src/x.js') })
  await r.aggregate()
  return r
}

describe('diagnose: the round folders', () => {
  it('with the comparison elsewhere, reads it, its artifacts and plan there and writes the dossier beside the reports', async () => {
    const r = await run()
    const out = mkdtempSync(path.join(tmpdir(), 'hw-diag-out-'))
    for (const f of ['report.md', 'report.html']) cpSync(path.join(r.dir, f), path.join(out, f))
    const d = await diagnoseRun({ dir: out, comparison: path.join(r.dir, 'comparison.json') })
    expect(d.dossierJson).toBe(path.join(out, 'diagnosis', 'dossier.json'))
    const dossier = JSON.parse(readFileSync(d.dossierJson, 'utf8')) as Dossier
    // Every attempt of the driving instances was found in the comparison's artifacts/.
    const drivers = dossier.comparisons[0]!.instances.length
    expect(drivers).toBeGreaterThan(0)
    expect(Object.keys(dossier.attempts)).toHaveLength(2 * drivers)
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain('diagnosis/dossier.md')
    expect(existsSync(path.join(r.dir, 'diagnosis'))).toBe(false)
  })

  it('a missing artifacts folder is an error naming it (the CLI exits 2), and no dossier is written', async () => {
    const r = await run()
    renameSync(path.join(r.dir, 'artifacts'), path.join(r.dir, 'artifacts.moved'))
    const err = await diagnoseRun({ dir: r.dir }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toContain(`no artifacts folder at ${path.join(r.dir, 'artifacts')}`)
    io.err = ''
    expect(await main(['diagnose', r.dir, '--artifacts', path.join(r.dir, 'nowhere')])).toBe(2)
    expect(io.err).toContain('no artifacts folder at')
    expect(io.err).toContain('pass --artifacts <dir>')
    // A file where the folder should be is refused alike.
    expect(await main(['diagnose', r.dir, '--artifacts', path.join(r.dir, 'plan.json')])).toBe(2)
    expect(existsSync(path.join(r.dir, 'diagnosis'))).toBe(false)
    // The folder given where it is: the dossier is written.
    expect(await main(['diagnose', r.dir, '--artifacts', path.join(r.dir, 'artifacts.moved')])).toBe(0)
    expect(existsSync(path.join(r.dir, 'diagnosis', 'dossier.json'))).toBe(true)
  })
})
