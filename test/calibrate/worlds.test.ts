import { describe, expect, it } from 'vitest'
import { NO_EFFECT, trueRatio } from '../../src/calibrate/scenario.js'
import { runScenario } from '../../src/calibrate/simulate.js'
import { nullWorlds, powerWorlds, resolveWorlds, type WorldSpec } from '../../src/calibrate/worlds.js'
import { DEFAULT_TEST, twoStageWith } from '../../src/detect/designs/two-stage.js'
import { createRng, obfConstant } from '../../src/stats/index.js'

const RATIOS = ['spend_usd', 'input_fresh_tokens', 'proxy_requests'] as const

const thresholds = {
  resolved_deficit_pp: 10,
  cost_ratio: 1.5,
  fresh_input_ratio: 1.5,
  request_ratio: 1.5,
  min_coverage: 0.8,
}
const policy = { thresholds, maxBlocks: 50, alpha: 0.05 }
const all: WorldSpec[] = [
  ...nullWorlds({ spend_usd: 1.5, input_fresh_tokens: 1.5, proxy_requests: 1.5 }),
  ...powerWorlds(),
  ...resolveWorlds(),
]
const named = (name: string) => all.find((w) => w.name === name) as WorldSpec

describe('the family of worlds: truths exact by construction', () => {
  it('every world has the ratio of means it names, per simulated panel', () => {
    const rng = createRng(5)
    for (const w of all.filter((x) => x.ratio !== null)) {
      for (let i = 0; i < 3; i++) {
        const world = w.make(40, rng)
        for (const m of ['spend_usd', 'input_fresh_tokens', 'proxy_requests'] as const)
          expect(trueRatio(world, m)).toBeCloseTo(w.ratio as number, 10)
      }
    }
  })

  it('fixed overhead: per-block ratios sit above the ratio of means on cheap blocks', () => {
    const world = named('overhead-just-below-threshold').make(40, createRng(6))
    const ratios = world.instances.map((x) => x.mean.spend_usd[1] / x.mean.spend_usd[0]).sort((a, b) => a - b)
    const median = ((ratios[19] as number) + (ratios[20] as number)) / 2
    expect(trueRatio(world, 'spend_usd')).toBeCloseTo(1.49, 12)
    expect(median).toBeGreaterThan(1.5)
  })

  it('runaway instances: 5% of the panel carries the whole excess', () => {
    const world = named('runaway-instances-2x').make(40, createRng(7))
    const over = world.instances.filter((x) => x.mean.spend_usd[1] > x.mean.spend_usd[0] * 1.0000001)
    expect(over).toHaveLength(2)
  })
})

// Seeded expected values: 100 simulated experiments of 40 blocks per world, seed 2025, defaults
// (the design's four rerun trials). Counts out of 100: breaches of the first run, confirmations, and runs whose
// first-run ratio was named as concentrated on a few blocks. The 1,000-simulation table is in
// `npm run bench -- calibrate`.
const SEEDED: Array<[string, { breach: number; confirmed: number; concentrated: number }]> = [
  ['overhead-just-below-threshold', { breach: 44, confirmed: 2, concentrated: 0 }],
  ['runaway-attempts-at-threshold', { breach: 40, confirmed: 0, concentrated: 40 }],
  ['heterogeneous-at-threshold', { breach: 50, confirmed: 0, concentrated: 30 }],
  ['unequal-noise-base-at-threshold', { breach: 54, confirmed: 2, concentrated: 12 }],
  ['overhead-2x', { breach: 95, confirmed: 86, concentrated: 0 }],
  ['runaway-instances-2x', { breach: 90, confirmed: 0, concentrated: 90 }],
  ['heterogeneous-2x', { breach: 94, confirmed: 67, concentrated: 16 }],
  ['unequal-noise-2x', { breach: 86, confirmed: 30, concentrated: 4 }],
  ['resolve-deficit-20', { breach: 87, confirmed: 87, concentrated: 0 }],
]

describe('the non-uniform worlds through detect and the two-stage design (seeded)', () => {
  for (const [name, want] of SEEDED) {
    it(name, () => {
      const w = named(name)
      const r = runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, policy, 100, 2025)
      const m = w.ratio === null ? 'resolved' : 'spend_usd'
      expect({
        breach: Math.round(100 * r.breach[m]),
        confirmed: Math.round(100 * r.confirmed[m]),
        concentrated: Math.round(100 * r.concentrated[m]),
      }).toEqual(want)
    })
  }

  it('heterogeneous 2×: the ratio shown comes from held-out trials of every block, within 2% of the truth; a block split shows it low', () => {
    const w = named('heterogeneous-2x')
    const shown = (design: ReturnType<typeof twoStageWith>) => {
      const r = runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, { ...policy, design }, 400, 77)
      return { r, over: RATIOS.map((m) => r.meanShownOverTruth[m] as number) }
    }
    const v4 = shown(twoStageWith(DEFAULT_TEST))
    expect(Math.round(400 * v4.r.confirmed.spend_usd)).toBe(283)
    for (const x of v4.over) expect(Math.abs(x - 1)).toBeLessThan(0.02)
    // Version 3's complementary halves: a decision half that drew the dear instances leaves the
    // estimation half without them (measured −4.1%, −3.6%, −6.8% over the three rules).
    const v3 = shown(twoStageWith({ ...DEFAULT_TEST, splitTrials: false }))
    for (const x of v3.over) expect(x).toBeLessThan(0.97)
  })

  it('runaway instances: the ratio is named as concentrated whenever it breaches, not read as cleared', () => {
    const w = named('runaway-instances-2x')
    const r = runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, policy, 100, 2025)
    expect(r.concentrated.spend_usd).toBe(r.breach.spend_usd)
  })
})

describe("O'Brien–Fleming constant (reference: scipy multivariate normal, one-sided α = 0.05)", () => {
  it('matches 1.6449 (one look), 1.6780 (two), 1.7096 (three equally spaced) to Monte Carlo precision', () => {
    expect(obfConstant(1, 0.05)).toBeCloseTo(1.6448536269514789, 10)
    expect(Math.abs(obfConstant(2, 0.05) - 1.6779527404685983)).toBeLessThan(0.015)
    expect(Math.abs(obfConstant(3, 0.05) - 1.7096236031665437)).toBeLessThan(0.015)
  })
})
