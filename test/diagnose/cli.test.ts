import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'
import { diffOf, jsonl, makeRunDir, piEvents } from './run-dir.js'

const io = captureOutput()

describe('harness-watch diagnose <run dir>', () => {
  it('writes dossier.json, dossier.md and, with --analyst scripted, a grounded proposal.json', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    for (const a of run.attempts)
      run.write(a, {
        trajectory: jsonl(piEvents(a, [{ s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' }])),
        patch: diffOf('src/x.js'),
      })
    await run.aggregate()
    expect(await main(['diagnose', run.dir, '--analyst', 'scripted'])).toBe(0)
    const dir = path.join(run.dir, 'diagnosis')
    expect(existsSync(path.join(dir, 'dossier.md'))).toBe(true)
    const proposal = JSON.parse(readFileSync(path.join(dir, 'proposal.json'), 'utf8'))
    expect(proposal.grounding.status).toBe('grounded')
    expect(io.out).toContain(`wrote ${path.join(dir, 'dossier.json')}`)
  })

  it('refuses a bad --max-instances and an unknown analyst with a clear message, no stack trace', async () => {
    expect(await main(['diagnose', '/tmp', '--max-instances', '0'])).not.toBe(0)
    expect(io.err).toContain('--max-instances must be a whole number ≥ 1, got 0')
    expect(await main(['diagnose', '/tmp', '--analyst', 'gpt'])).not.toBe(0)
    expect(io.err).toContain('--analyst must be "harness" or "scripted", got "gpt"')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('--analyst harness runs the analyst in the run’s Pi cell harness on its manifest', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    for (const a of run.attempts)
      run.write(a, {
        trajectory: jsonl(piEvents(a, [{ s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' }])),
        patch: diffOf('src/x.js'),
      })
    await run.aggregate()
    expect(await main(['diagnose', run.dir, '--analyst', 'harness'])).toBe(0)
    const proposal = JSON.parse(readFileSync(path.join(run.dir, 'diagnosis', 'proposal.json'), 'utf8'))
    expect(proposal.grounding.status).toBe('grounded')
    expect(proposal.analyst).toMatchObject({ route: 'harness:pi', harness: 'pi@0.73.1' })
    expect(proposal.analyst.requests).toBeGreaterThan(0)
    expect(proposal.analyst.fallback).toBeUndefined()
  })

  it('--analyst harness without the run’s plan.json names what is missing, writing no proposal', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    await run.aggregate()
    rmSync(path.join(run.dir, 'plan.json'))
    expect(await main(['diagnose', run.dir, '--analyst', 'harness'])).not.toBe(0)
    expect(io.err).toContain('no valid manifest in')
    expect(io.err).not.toMatch(/\n\s+at /)
    expect(existsSync(path.join(run.dir, 'diagnosis', 'proposal.json'))).toBe(false)
  })

  it('a folder without a comparison names what is missing', async () => {
    expect(await main(['diagnose', '/nonexistent/run'])).not.toBe(0)
    expect(io.err).toContain('no readable comparison.json at')
  })
})
