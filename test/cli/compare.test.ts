import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
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
  it('resolved lists over a 20-id --instances list: ids neither file resolves are ties (both unresolved)', async () => {
    const f = files()
    const ids = Array.from({ length: 20 }, (_, i) => `i${i + 1}`)
    const a = path.join(f.dir, 'a20.json')
    const b = path.join(f.dir, 'b20.json')
    writeFileSync(a, JSON.stringify({ system: 'A', resolved: ['i1', 'i2'], n_total: 20 }))
    writeFileSync(b, JSON.stringify({ system: 'B', resolved: ['i2', 'i3'], n_total: 20 }))
    const list = path.join(f.dir, 'ids.txt')
    writeFileSync(list, ids.join('\n'))
    const out = path.join(f.dir, 'out')
    const args = ['compare', '--baseline', a, '--treatment', b, '--out', out, '--resamples', '200']
    expect(await main([...args, '--instances', list])).toBe(0)
    expect(io.out).toMatch(/^20 blocks planned: 20 outcome-complete, 0 complete, 20 incomplete;/)
    expect(io.out).toMatch(/A → B: W\/L\/T 1\/1\/18, Δ ±0\.0 pp, McNemar p 1,/)
    expect(io.err).toBe('')

    // Without the list the 17 instances neither system resolved are unknown: refused, exit 2.
    io.out = ''
    expect(await main(args)).toBe(2)
    expect(io.out).toBe('')
    expect(io.err).toContain(`error: ${a} n_total is 20 but the two files name only 3 instances`)
    expect(io.err).toContain('help: pass --instances <file> listing the 20 instances of the benchmark')

    // A file of a larger benchmark (n_total 500) compared on 20 of its ids: a warning line.
    io.err = ''
    expect(
      await main(['compare', '--baseline', f.a, '--treatment', f.b, '--instances', list, '--out', out]),
    ).toBe(0)
    expect(io.err).toBe(
      "warning: A: compared on the 20 --instances ids of the file's 500 (n_total)\nwarning: B: compared on the 20 --instances ids of the file's 500 (n_total)\n",
    )
  })

  it('per-instance files: 20 ids in neither file are incomplete blocks, no "W/L/T 0/0/20"', async () => {
    const f = files()
    const oh = (name: string) => {
      const file = path.join(f.dir, name, 'instance_results', 'x.json')
      mkdirSync(path.dirname(file), { recursive: true })
      writeFileSync(
        file,
        JSON.stringify({ i1: { resolved: true, cost: 1 }, i2: { resolved: false, cost: 1 } }),
      )
      return file
    }
    const list = path.join(f.dir, 'ids.txt')
    writeFileSync(list, Array.from({ length: 20 }, (_, i) => `nowhere-${i}`).join('\n'))
    const code = await main([
      'compare',
      '--baseline',
      oh('sa'),
      '--treatment',
      oh('sb'),
      '--instances',
      list,
      '--out',
      path.join(f.dir, 'out'),
      '--resamples',
      '200',
    ])
    // Both files resolve i1, which is not on the panel: refused, naming it.
    expect(code).toBe(2)
    expect(io.err).toContain('1 resolved id(s) are not in --instances: i1')
    expect(io.err).toContain('--ignore-unknown-ids')
    io.err = ''
    io.out = ''
    const ignored = await main([
      'compare',
      '--baseline',
      oh('sa'),
      '--treatment',
      oh('sb'),
      '--instances',
      list,
      '--ignore-unknown-ids',
      '--out',
      path.join(f.dir, 'out'),
      '--resamples',
      '200',
    ])
    expect(ignored).toBe(0)
    expect(io.err).toContain(
      'warning: sa: 2 id(s) the file names are not in --instances and are ignored (1 of them resolved): i1, i2\n',
    )
    expect(io.out).not.toContain('0/0/20')
    expect(io.out).toMatch(/^20 blocks planned: 0 outcome-complete, 0 complete, 20 incomplete;/)
    expect(io.out).toMatch(/sa → sb: no outcome-complete blocks \(W\/L\/T —, McNemar p —\)/)
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
    expect(io.err).toContain(`${list}:3 duplicate instance id "i1" (first at ${list}:1)`)
  })
})
