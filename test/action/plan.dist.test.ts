import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { baseManifest, writeManifest } from '../support/manifests.js'
import { runBundle } from '../support/run-bundle.js'

describe('the bundled action (dist/index.js) run as the runner runs it', () => {
  it('plan sets matrix, has-work, plan-path and legs, and writes the job summary', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'hw-act-'))
    const r = runBundle({
      command: 'plan',
      manifest: 'examples/manifests/swebench-official-harness.yml',
      out,
    })
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.outputs['has-work']).toBe('true')
    expect(r.outputs.legs).toBe('16')
    expect(r.outputs['plan-path']).toBe(path.join(out, 'plan.json'))
    const matrix = JSON.parse(r.outputs.matrix ?? '')
    expect(matrix.include).toHaveLength(16)
    expect(new Set(matrix.include.map((e: { artifact: string }) => e.artifact)).size).toBe(16)
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true)
    expect(JSON.parse(readFileSync(path.join(out, 'plan.json'), 'utf8')).experiment_id).toBe(
      'swebench-official-harness',
    )
    expect(r.summary).toContain('Harness Watch plan: swebench-official-harness')
  })

  it('an empty cell selection gives has-work=false and an empty matrix', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'hw-act-'))
    // Runnable as planned: the built-in panel's task folders carry their own tests.
    const file = writeManifest({
      ...baseManifest(),
      benchmark: { family: 'builtin', revision: 'core' },
      panel: { source: 'builtin', name: 'core' },
    })
    const r = runBundle({ command: 'plan', manifest: file, out, cells: ',' })
    expect(r.status).toBe(0)
    expect(r.outputs['has-work']).toBe('false')
    expect(r.outputs.matrix).toBe('{"include":[]}')
    expect(r.summary).toContain('No cells scheduled')
  })

  it('a bad manifest fails the step with the located error', () => {
    const file = writeManifest(baseManifest({ trials: 0 }))
    const r = runBundle({ command: 'plan', manifest: file })
    expect(r.status).toBe(1)
    expect(r.stdout).toContain('::error::')
    expect(r.stdout).toContain('trials: trials (k) must be at least 1')
  })

  it('a bad command is refused', () => {
    const r = runBundle({ command: 'bogus' })
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/::error::invalid action inputs/)
  })
})
