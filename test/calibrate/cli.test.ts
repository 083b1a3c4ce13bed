import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { strictJson } from '../../src/util/json.js'
import { makeComparison, rows } from '../detect/fixtures.js'
import { captureOutput } from '../support/capture.js'

const root = path.resolve(import.meta.dirname, '..', '..')
const demo = path.join(root, 'manifests', 'demo.yml')
const io = captureOutput()

describe('harness-watch calibrate', () => {
  it('--json prints one row per rule with the documented fields', async () => {
    expect(await main(['calibrate', demo, '--sims', '20', '--json'])).toBe(0)
    const out = JSON.parse(io.out)
    expect(out.rules.map((r: { rule: string }) => r.rule)).toEqual([
      'resolved',
      'spend_usd',
      'input_fresh_tokens',
      'proxy_requests',
    ])
    for (const r of out.rules) {
      for (const k of ['false_alarm_rate', 'false_confirmation_rate', 'power', 'effect']) {
        expect(typeof r[k]).toBe('number')
      }
    }
    expect(out.blocks).toBe(16)
    expect(out.design.statement).toMatch(/α = 0\.05/)
    // weekly runs: the threshold and twice it as true deficits, the sequential rule vs a fixed test
    expect(out.sequential.map((r: { deficit_pp: number }) => r.deficit_pp)).toEqual([10, 20])
    for (const r of out.sequential) {
      expect(r.fixed.power).toBeGreaterThanOrEqual(r.power)
      expect(r.false_alarm).toBeLessThanOrEqual(0.05 + 1e-12)
      expect(r.sequential.dollars).toBeNull() // no pilot: no cost per block
      expect(r.fixed.blocks % 16).toBe(0)
    }
  })

  it('prints a table with the design and the targets; --pilot resamples a comparison.json', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-calibrate-'))
    const pilot = path.join(dir, 'comparison.json')
    await writeFile(
      pilot,
      strictJson(
        makeComparison({
          cells: ['a', 'b'],
          rows: rows(10, (i) => ({ a: { o: 'r' }, b: { o: i % 2 ? 'r' : 'u' } })),
        }),
      ),
    )
    expect(await main(['calibrate', demo, '--sims', '20', '--pilot', pilot])).toBe(0)
    expect(io.out).toMatch(/^calibration: 20 simulated experiments per setting, n = 16 blocks/)
    expect(io.out).toMatch(/model: pilot b vs a: 10 blocks resampled to 16/)
    expect(io.out).toMatch(/design rerun-exact@1: /)
    expect(io.out).toMatch(/overall \(A\/A, any rule\): false alarm .* false confirmation .*target ≤ 5%/)
    expect(io.out).toMatch(
      /weekly runs of 16 blocks \(e-values multiplied across weeks, at most 12\) vs one fixed-size exact McNemar at the same power:\n {2}true deficit 10 pp: power \d+\.\d%; sequential \d+\.\d\d weeks \(\d+ blocks, \$\d+\.\d\d\) vs fixed \d+ week\(s\) of blocks \(\d+ blocks, \$\d+\.\d\d\); \d+% (fewer|more) blocks/,
    )
  })

  it('a pilot that is not a comparison.json, or too few sims, is a usage error (exit 2) naming the file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-calibrate-'))
    const bad = path.join(dir, 'bad.json')
    await writeFile(bad, '{"rules": []}')
    expect(await main(['calibrate', demo, '--sims', '20', '--pilot', bad])).toBe(2)
    expect(io.err).toMatch(/the pilot does not match the comparison\.json schema/)
    expect(io.err).toContain(bad)
    await writeFile(bad, 'not json')
    expect(await main(['calibrate', demo, '--pilot', bad])).toBe(2)
    expect(io.err).toMatch(/not JSON/)
    expect(await main(['calibrate', demo, '--sims', '3'])).toBe(2)
    expect(io.err).toMatch(/--sims is an integer in \[10, 1000000\]/)
  })
})
