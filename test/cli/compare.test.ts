import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'

const io = captureOutput()

/** Two SWE-bench style resolved lists in a fresh folder. */
function files(): { dir: string; a: string; b: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-cli-compare-'))
  const a = path.join(dir, 'a.json')
  const b = path.join(dir, 'b.json')
  writeFileSync(a, JSON.stringify({ system: 'A', resolved: ['i1', 'i2'], n_total: 500 }))
  writeFileSync(b, JSON.stringify({ system: 'B', resolved: ['i2', 'i3'], n_total: 500 }))
  return { dir, a, b }
}

describe('harness-watch compare', () => {
  it('20 ids in neither file: no "W/L/T 0/0/20", the blocks are incomplete', async () => {
    const f = files()
    const list = path.join(f.dir, 'ids.txt')
    writeFileSync(list, Array.from({ length: 20 }, (_, i) => `nowhere-${i}`).join('\n'))
    const code = await main([
      'compare',
      '--baseline',
      f.a,
      '--treatment',
      f.b,
      '--instances',
      list,
      '--out',
      path.join(f.dir, 'out'),
      '--resamples',
      '200',
    ])
    expect(code).toBe(0)
    expect(io.out).not.toContain('0/0/20')
    expect(io.out).toMatch(/^20 blocks planned: 0 outcome-complete, 0 complete, 20 incomplete;/)
    expect(io.out).toMatch(/a → b: no outcome-complete blocks \(W\/L\/T —, McNemar p —\)/)
  })

  it('usage errors are user messages (exit 2): --resamples 0, #system on a one-system file, a duplicate panel id', async () => {
    const f = files()
    const out = path.join(f.dir, 'out')
    expect(
      await main(['compare', '--baseline', f.a, '--treatment', f.b, '--out', out, '--resamples', '0']),
    ).toBe(2)
    expect(io.err).toMatch(/^error: --resamples must be a whole number from 200 to 100000, got 0/)
    expect(io.err).not.toMatch(/bootstrapRatioOfMeans|B must be/)

    io.err = ''
    expect(await main(['compare', '--baseline', `${f.a}#foo`, '--treatment', f.b, '--out', out])).toBe(2)
    expect(io.err).toMatch(/this file holds one system; drop #foo/)

    io.err = ''
    const list = path.join(f.dir, 'ids.txt')
    writeFileSync(list, 'i1\ni2\ni1\n')
    expect(
      await main(['compare', '--baseline', f.a, '--treatment', f.b, '--instances', list, '--out', out]),
    ).toBe(2)
    expect(io.err).toContain(`${list}:3 duplicate instance id "i1" (first at ${list}:1) (F09)`)
  })
})
