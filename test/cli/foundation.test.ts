import { readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const io = captureOutput()

describe('harness-watch validate / plan', () => {
  it('validate prints a one-screen summary and exits 0', async () => {
    const code = await main(['validate', 'examples/manifests/swebench-official-harness.yml'])
    expect(code).toBe(0)
    expect(io.out).toContain('examples/manifests/swebench-official-harness.yml: valid (schema_version 1')
    expect(io.out).toContain('panel       40 instances from inline')
    expect(io.out).toContain('openhands        openhands@1.8.3')
    expect(io.out.split('\n').length).toBeLessThan(25)
  })

  it('validate exits 2 with every problem and no stack trace', async () => {
    const file = writeManifest(baseManifest({ trials: 0, baseline: 'zz' }))
    const code = await main(['validate', file])
    expect(code).toBe(2)
    expect(io.err).toContain(`${file}:`)
    expect(io.err).toContain('trials: trials (k) must be at least 1')
    expect(io.err).toContain('baseline: baseline "zz" is not a cell (cells: a, b)')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('plan writes plan.json and --matrix prints the matrix JSON', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-plan-'))
    const code = await main([
      'plan',
      'examples/manifests/swebench-official-harness.yml',
      '--out',
      dir,
      '--matrix',
    ])
    expect(code).toBe(0)
    const matrix = JSON.parse(io.out)
    expect(matrix.include).toHaveLength(16)
    expect(matrix.include[0]).toEqual({
      leg: 'openhands-s0',
      cell: 'openhands',
      shard: 0,
      artifact: 'hw-swebench-official-harness-openhands-0',
    })
    const plan = JSON.parse(readFileSync(path.join(dir, 'plan.json'), 'utf8'))
    expect(plan.panel.instances).toHaveLength(40)
    expect(plan.manifest_sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it('every command has --help', async () => {
    for (const cmd of [['--help'], ['validate', '--help'], ['plan', '--help']]) {
      io.out = ''
      expect(await main(cmd)).toBe(0)
      expect(io.out).toMatch(/Usage: harness-watch/)
    }
  })

  it('an unknown command is a usage error', async () => {
    expect(await main(['frobnicate'])).toBe(2)
    expect(io.err).toContain("unknown command 'frobnicate'")
  })
})
