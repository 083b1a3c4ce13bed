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
    // at power targets 80%, 90% and 95%
    const seq = out.sequential as Array<{
      deficit_pp: number
      power_target: number
      sequential: { power: number; dollars: number | null } | null
      fixed: { power: number; blocks: number } | null
      false_alarm: number | null
    }>
    expect(seq.map((r) => [r.deficit_pp, r.power_target])).toEqual([
      [10, 0.8],
      [10, 0.9],
      [10, 0.95],
      [20, 0.8],
      [20, 0.9],
      [20, 0.95],
    ])
    for (const r of seq) {
      expect(r.fixed!.power).toBeGreaterThanOrEqual(r.power_target)
      expect(r.sequential!.power).toBeGreaterThanOrEqual(r.power_target)
      expect(r.false_alarm!).toBeLessThanOrEqual(0.05 + 1e-12)
      expect(r.sequential!.dollars).toBeNull() // no pilot: no cost per block
      expect(r.fixed!.blocks % 16).toBe(0)
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
      /weekly runs of 16 blocks: one-sided likelihood-ratio e-values at the 10-point threshold multiplied across weeks \(stop at 1\/α\) vs one fixed-size exact McNemar, same α and power:\n {2}true deficit 10 pp, power 80%: sequential \d+\.\d\d weeks on average \(\d+ blocks, \$\d+\.\d\d; stop by week \d+, power \d+\.\d%, A\/A \d+\.\d%\) vs fixed \d+ weeks \(\d+ blocks, \$\d+\.\d\d; power \d+\.\d%\): \d+% (fewer|more) blocks/,
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
