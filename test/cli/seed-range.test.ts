import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ActionInputsSchema } from '../../src/action/inputs.js'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'

// The bootstrap takes a 32-bit seed: a larger one would be taken modulo 2³² (4294967297 would run as
// 1). Every way a seed comes in refuses it: the manifest, plan.json and the action's input (the CLI's
// --seed is in edges.test.ts).

const io = captureOutput()
const dir = () => mkdtempSync(path.join(tmpdir(), 'hw-seed-'))

describe('a seed above 2³² − 1 is refused wherever it comes in', () => {
  it('in the manifest: validate names the field', async () => {
    const d = dir()
    const file = path.join(d, 'demo.yml')
    const text = readFileSync('manifests/demo.yml', 'utf8')
    expect(text).toMatch(/^seed: 1$/m)
    writeFileSync(file, text.replace(/^seed: 1$/m, 'seed: 4294967296'))
    io.err = ''
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toMatch(/seed: .*4294967295/)
    writeFileSync(file, text.replace(/^seed: 1$/m, 'seed: 4294967295'))
    expect(await main(['validate', file])).toBe(0)
  })

  it('in plan.json: aggregate refuses the plan', async () => {
    const d = dir()
    expect(await main(['plan', 'manifests/demo.yml', '--out', d])).toBe(0)
    const planFile = path.join(d, 'plan.json')
    const plan = JSON.parse(readFileSync(planFile, 'utf8'))
    writeFileSync(planFile, JSON.stringify({ ...plan, seed: 4294967297 }))
    io.err = ''
    expect(
      await main(['aggregate', '--plan', planFile, '--artifacts', d, '--out', path.join(d, 'out')]),
    ).toBe(2)
    expect(io.err).toMatch(/seed/)
  })

  it('in the action’s seed input', () => {
    const base = {
      ...Object.fromEntries(Object.keys(ActionInputsSchema.shape).map((k) => [k, ''])),
      out: 'hw-out',
    }
    const ok = ActionInputsSchema.safeParse({ ...base, command: 'aggregate', seed: '4294967295' })
    expect(ok.success).toBe(true)
    const bad = ActionInputsSchema.safeParse({ ...base, command: 'aggregate', seed: '4294967296' })
    expect(bad.success).toBe(false)
    expect(bad.error?.issues[0]?.message).toBe('a seed is an integer from 0 to 4294967295')
  })
})
