import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'

const io = captureOutput()
const dir = () => mkdtempSync(path.join(tmpdir(), 'hw-cli-edges-'))

describe('edges of the command line', () => {
  it('plan --cells "" (a filter that matched nothing) plans no cell and says so, never every cell', async () => {
    const out = dir()
    expect(await main(['plan', 'manifests/demo.yml', '--cells', '', '--out', out])).toBe(0)
    expect(io.out).toMatch(/^no cells scheduled: --cells selected none of pi, opencode;/)
    const plan = JSON.parse(readFileSync(path.join(out, 'plan.json'), 'utf8'))
    expect(plan.legs).toEqual([])
    expect(plan.matrix).toEqual({ include: [] })
  })

  it('--seed takes an integer from 0 to 2³² − 1 in plan, aggregate and compare (never taken modulo 2³²)', async () => {
    const cases: Array<[string[], string]> = [
      [['plan', 'manifests/demo.yml', '--out', dir()], '-1'],
      [['aggregate', '--plan', 'nowhere/plan.json', '--artifacts', 'nowhere', '--out', dir()], '-3'],
      [['aggregate', '--plan', 'nowhere/plan.json', '--artifacts', 'nowhere', '--out', dir()], '4294967296'],
      [['compare', '--baseline', 'nowhere/a.json', '--treatment', 'nowhere/b.json', '--out', dir()], '-3'],
    ]
    for (const [args, seed] of cases) {
      io.err = ''
      expect(await main([...args, '--seed', seed])).toBe(2)
      expect(io.err).toContain(`a seed is an integer from 0 to 4294967295, got ${seed}`)
    }
  })

  it('--out naming a file, or a path through a file, is a usage error naming the path (not a raw EEXIST)', async () => {
    const d = dir()
    const file = path.join(d, 'afile')
    writeFileSync(file, 'x')
    io.err = ''
    expect(await main(['plan', 'manifests/demo.yml', '--out', file])).toBe(2)
    expect(io.err).toBe(
      `error: cannot make the folder ${file}: a file of that name is in the way (give an output folder, not a file)\n`,
    )
    io.err = ''
    expect(await main(['plan', 'manifests/demo.yml', '--out', path.join(file, 'sub')])).toBe(2)
    expect(io.err).toContain('a part of that path is a file, not a folder')
  })

  it('aggregate --artifacts naming a file says it is not a folder, not that the folder does not exist', async () => {
    const d = dir()
    expect(await main(['plan', 'manifests/demo.yml', '--out', d])).toBe(0)
    const planFile = path.join(d, 'plan.json')
    for (const [artifacts, says] of [
      [planFile, 'the artifacts path is not a folder'],
      [path.join(d, 'nowhere'), 'the artifacts folder does not exist'],
    ] as const) {
      io.err = ''
      expect(
        await main(['aggregate', '--plan', planFile, '--artifacts', artifacts, '--out', path.join(d, 'out')]),
      ).toBe(2)
      expect(io.err).toContain(says)
    }
  })

  it('panel import bfcl on a file none of whose lines is a JSON object says so once, not once per line', async () => {
    const d = dir()
    const pretty = path.join(d, 'comparison.json')
    writeFileSync(pretty, `${JSON.stringify({ a: [1, 2, 3], b: { c: 'd' } }, null, 2)}\n`)
    io.err = ''
    io.out = ''
    expect(
      await main(['panel', 'import', 'bfcl', pretty, '--out', path.join(d, 'tasks'), '--answers', pretty]),
    ).toBe(1)
    const lines = io.err.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^nothing imported: none of the 10 lines of ${pretty.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a JSON object, where a BFCL file holds one question object per line \\(JSON Lines\\); the first: .*comparison\\.json:1 not valid JSON`,
      ),
    )
  })

  it('publish --pr takes a pull request number ≥ 1', async () => {
    for (const bad of ['0', '-3']) {
      io.err = ''
      expect(
        await main(['publish', '--comparison', 'nowhere/comparison.json', '--dry-run', '--pr', bad]),
      ).toBe(2)
      expect(io.err).toContain(`--pr is a pull request number (1 or more), got ${bad}`)
    }
  })

  it('compare --instances with an empty list is a usage error naming the file', async () => {
    const d = dir()
    const a = path.join(d, 'a.json')
    writeFileSync(a, JSON.stringify({ resolved: ['i1'], n_total: 2 }))
    const list = path.join(d, 'ids.json')
    writeFileSync(list, '[]')
    expect(
      await main([
        'compare',
        '--baseline',
        a,
        '--treatment',
        a,
        '--instances',
        list,
        '--out',
        path.join(d, 'o'),
      ]),
    ).toBe(2)
    expect(io.err).toContain(`${list} lists no instances: a comparison needs at least one`)
  })

  it('a resolved list naming one id twice is an error at its index, never folded into one', async () => {
    const d = dir()
    const a = path.join(d, 'a.json')
    const b = path.join(d, 'b.json')
    writeFileSync(a, JSON.stringify({ resolved: ['i1', 'i2', 'i1'], n_total: 3 }))
    writeFileSync(b, JSON.stringify({ resolved: ['i2'], n_total: 3 }))
    expect(await main(['compare', '--baseline', a, '--treatment', b, '--out', path.join(d, 'o')])).toBe(2)
    expect(io.err).toContain(
      `${a} does not match the schema: resolved[2]: duplicate instance id "i1" (first at [0])`,
    )
  })

  it('a resolved list with a cost for each of its n_total instances enumerates them: an unknown --instances id is incomplete', async () => {
    const d = dir()
    const a = path.join(d, 'a.json')
    const b = path.join(d, 'b.json')
    const cost = { i1: 0.5, i2: 0.25, i3: 0.75 }
    writeFileSync(a, JSON.stringify({ resolved: ['i1', 'i2'], cost_usd: cost, n_total: 3 }))
    writeFileSync(b, JSON.stringify({ resolved: ['i2'], cost_usd: cost, n_total: 3 }))
    const list = path.join(d, 'ids.txt')
    writeFileSync(list, 'i1\ni2\ni3\ni-typo\n')
    const out = path.join(d, 'o')
    await main(['compare', '--baseline', a, '--treatment', b, '--instances', list, '--out', out])
    expect(io.out).toMatch(/^4 blocks planned: 3 outcome-complete/)
    const c = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    expect(c.comparisons[0].outcome).toMatchObject({
      n: 3,
      both: 1,
      baseline_only: 1,
      treatment_only: 0,
      neither: 1,
    })
    expect(c.blocks.incomplete.map((x: { instance: string }) => x.instance)).toEqual(['i-typo'])
  })

  it('help marks the options a command cannot run without', async () => {
    expect(await main(['detect', '--help'])).toBe(0)
    expect(io.out).toMatch(/--comparison <file>\s+\(required\) comparison\.json written by/)
    expect(io.out).toMatch(/--previous <file>\s+an earlier run/)
  })
})
