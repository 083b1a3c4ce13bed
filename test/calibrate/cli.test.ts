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

const PANEL = [
  'js-feature-lru-cache',
  'js-feature-wc-json',
  'js-fix-csv-quotes',
  'js-fix-map-limit-order',
  'js-fix-paginate',
  'js-fix-parse-date',
  'js-fix-slugify',
  'js-refactor-email-validator',
  'py-feature-config-interpolate',
  'py-feature-lru-cache',
  'py-fix-mutable-default',
  'py-fix-parse-timestamp',
  'py-fix-price-rounding',
  'py-fix-table-width',
  'py-fix-word-wrap',
  'py-refactor-extract-summary',
]

async function worldFile(lines: string[]): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hw-world-'))
  const file = path.join(dir, 'world.jsonl')
  await writeFile(file, `${lines.join('\n')}\n`)
  return file
}

describe('harness-watch calibrate', () => {
  it('--json prints the rules, the worlds, the worst world, the rerun sizes and the weekly designs', async () => {
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
    expect(out.design.name).toBe('two-stage-split')
    expect(out.design.statement).toMatch(/α = 0\.05/)
    const names = out.worlds.map((w: { name: string }) => w.name)
    for (const n of [
      'overhead-just-below-threshold',
      'runaway-instances-2x',
      'unequal-noise-base-at-threshold',
      'heterogeneous-2x',
      'uniform-2x-very-noisy',
    ])
      expect(names).toContain(n)
    expect(out.worst_null.confirmation_rate).toBeGreaterThanOrEqual(0)
    expect(out.rerun_sizes.length).toBeGreaterThan(4)
    expect(out.weekly.rows.map((r: { design: string }) => r.design)).toEqual([
      'fixed',
      'group-sequential',
      'e-value',
    ])
    for (const r of out.weekly.rows) {
      expect(r.expected_blocks_h0).toBeGreaterThan(0)
      expect(r.max_blocks).toBeGreaterThanOrEqual(r.expected_blocks_h1)
    }
  })

  it('prints a table with the estimands, the worst world beside the default, the rerun sizes and weekly designs', async () => {
    expect(await main(['calibrate', demo, '--sims', '20', '--noise', '0.5'])).toBe(0)
    expect(io.out).toMatch(/^calibration: 20 simulated experiments per setting, n = 16 blocks/)
    expect(io.out).toMatch(/run-to-run noise σ = 0\.5 on log cost/)
    expect(io.out).toMatch(/design two-stage-split@4: /)
    expect(io.out).toMatch(/ratio of totals Σtreatment\/Σbaseline/)
    expect(io.out).toMatch(/false confirmations, default world vs worst world: \d+\.\d% .* · \d+\.\d% \(/)
    expect(io.out).toMatch(/worlds at or below the threshold/)
    expect(io.out).toMatch(/fixed overhead, 1\.49×/)
    expect(io.out).toMatch(/rerun size at a true uniform 2× spend/)
    expect(io.out).toMatch(/weekly monitoring of the resolve rate .*expected blocks until a decision/)
    expect(io.out).toMatch(/ {2}group-sequential +H1 \d+ blocks/)
  })

  it('--pilot with --pilot-rerun measures the noise; a single pilot run says which setting to pass', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-calibrate-'))
    const pilot = path.join(dir, 'comparison.json')
    const rerun = path.join(dir, 'rerun.json')
    const spec = (f: number) =>
      makeComparison({
        cells: ['a', 'b'],
        rows: rows(10, (i) => ({
          a: { o: 'r', spend: (1 + i) * (i % 2 ? f : 1) },
          b: { o: i % 2 ? 'r' : 'u', spend: (1 + i) * (i % 3 ? f : 1 / f) },
        })),
      })
    await writeFile(pilot, strictJson(spec(1)))
    await writeFile(rerun, strictJson(spec(1.4)))
    expect(await main(['calibrate', demo, '--sims', '20', '--pilot', pilot, '--pilot-rerun', rerun])).toBe(0)
    expect(io.out).toMatch(
      /model: pilot b vs a: 10 blocks resampled to 16, .*noise from rerun pairs \(10 blocks\)/,
    )
    io.err = ''
    expect(await main(['calibrate', demo, '--sims', '20', '--pilot', pilot])).toBe(2)
    expect(io.err).toContain(pilot)
    expect(io.err).toMatch(
      /cannot estimate the run-to-run noise: the pilot has one run of each block and cell/,
    )
    expect(io.err).toMatch(/help: pass --pilot-rerun <comparison\.json> .* or --noise <σ>/)
    expect(io.err).not.toMatch(/\bat .*\.ts:\d+/)
  })

  it('--world: one row per rule, the truths computed from the file', async () => {
    const lines = PANEL.map((id, i) =>
      JSON.stringify({ instance: id, p: [0.6, 0.6], spend_usd: [1 + i, 2 * (1 + i)], requests: [10, 10] }),
    )
    const file = await worldFile(lines)
    expect(await main(['calibrate', demo, '--world', file, '--sims', '40', '--json'])).toBe(0)
    const out = JSON.parse(io.out)
    expect(out.rules.map((r: { rule: string }) => r.rule)).toEqual([
      'resolved',
      'spend_usd',
      'proxy_requests',
    ])
    expect(Object.keys(out.rules[0]).sort()).toEqual(['confirmation_rate', 'rule', 'true_deficit_pp'])
    expect(Object.keys(out.rules[1]).sort()).toEqual(['confirmation_rate', 'rule', 'true_ratio_of_means'])
    expect(out.rules[0].true_deficit_pp).toBeCloseTo(0, 12)
    expect(out.rules[1].true_ratio_of_means).toBeCloseTo(2, 12)
    expect(out.rules[2].true_ratio_of_means).toBeCloseTo(1, 12)
    expect(out.rules[2].confirmation_rate).toBe(0)
    io.out = ''
    expect(await main(['calibrate', demo, '--world', file, '--sims', '20', '--noise', '1.0'])).toBe(0)
    expect(io.out).toMatch(/run noise σ 1 baseline \/ 1 treatment/)
    expect(io.out).toMatch(
      /spend_usd > 1\.5× +ratio of means 2\.000×: confirmed in \d+\.\d% of runs \(power\)/,
    )
  })

  it('a bad world file is a located error (file:line, field), never a stack trace', async () => {
    const ok = (id: string) => JSON.stringify({ instance: id, p: [0.5, 0.5], spend_usd: [1, 1] })
    const cases: Array<[string[], RegExp]> = [
      [
        [ok(PANEL[0]!), JSON.stringify({ instance: PANEL[1], p: [0.5, 0.5], spend_usd: [-1, 1] })],
        /:2 spend_usd\[0\]: the baseline value -1 must be a mean cost > 0/,
      ],
      [
        [JSON.stringify({ instance: PANEL[1], p: [0.5, 0.5], spend_usd: [1, 0] })],
        /:1 spend_usd\[1\]: the treatment value 0 must be a mean cost > 0/,
      ],
      [
        [ok(PANEL[0]!), JSON.stringify({ instance: PANEL[1], p: [1.2, 0.5], spend_usd: [1, 1] })],
        /:2 p\[0\]: the baseline value 1\.2 is not a probability in \[0, 1\]/,
      ],
      [[ok('not-in-panel')], /:1 instance: "not-in-panel" is not in the manifest's panel/],
      [
        [ok(PANEL[0]!), '', ok(PANEL[0]!)],
        /:3 instance: "js-feature-lru-cache" appears twice \(first on line 1\)/,
      ],
      [[ok(PANEL[0]!), '{"instance": "x", p: }'], /:2 not a JSON object/],
      [
        [ok(PANEL[0]!), JSON.stringify({ instance: PANEL[1], p: [0.5, 0.5] })],
        /:2 spend_usd: missing here but given on line 1/,
      ],
      [[JSON.stringify({ instance: PANEL[1], p: [0.5, 0.5], spend: [1, 1] })], /:1 spend: unknown field/],
    ]
    for (const [lines, message] of cases) {
      const file = await worldFile(lines)
      io.err = ''
      expect(await main(['calibrate', demo, '--world', file, '--sims', '10'])).toBe(2)
      expect(io.err).toContain(`${file}:`)
      expect(io.err).toMatch(message)
      expect(io.err).not.toMatch(/\bat .*\.ts:\d+/)
    }
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
    expect(await main(['calibrate', demo, '--noise', '-1'])).toBe(2)
    expect(io.err).toMatch(/--noise is a run-to-run σ/)
  })
})
