import { describe, expect, it } from 'vitest'
import { calibrate } from '../../src/calibrate/calibrate.js'
import { PilotNoiseUnknown, pilotModel } from '../../src/calibrate/pilot.js'
import { NO_EFFECT, parametricWorld } from '../../src/calibrate/scenario.js'
import { effectOf, runScenario, simulateOnce } from '../../src/calibrate/simulate.js'
import { createRng } from '../../src/stats/rng.js'
import { makeComparison, rows } from '../detect/fixtures.js'

const thresholds = {
  resolved_deficit_pp: 10,
  cost_ratio: 1.5,
  fresh_input_ratio: 1.5,
  request_ratio: 1.5,
  min_coverage: 0.8,
}
const policy = { thresholds, maxBlocks: 50, alpha: 0.05 }
const world = (e: typeof NO_EFFECT, rng: ReturnType<typeof createRng>) => parametricWorld({ n: 40 }, e, rng)

describe('calibrate: the confirmation design measured through the detect rules (n = 40, defaults)', () => {
  // 400 simulated experiments per setting: binomial SE ≤ 2.5 points, so tolerances below are ~3 SE.
  const c = calibrate({ blocks: 40, thresholds, maxBlocks: 50, alpha: 0.05, sims: 400, seed: 20261201 })
  const rule = (m: string) => c.rules.find((r) => r.rule === m)!

  it('false confirmations ≤ 5% for every rule and overall, though single runs breach often', () => {
    for (const r of c.rules) expect(r.false_confirmation_rate).toBeLessThanOrEqual(0.05)
    expect(c.overall.false_confirmation_rate).toBeLessThanOrEqual(0.05)
    // A single run crosses the 10-point rule in roughly one A/A run in eight: the rerun test is what protects.
    expect(rule('resolved').false_alarm_rate).toBeGreaterThan(0.07)
    expect(rule('resolved').false_alarm_rate).toBeLessThan(0.2)
    expect(c.overall.false_alarm_rate).toBeGreaterThanOrEqual(rule('resolved').false_alarm_rate)
  })

  it("power for a true 2× spend ratio with the design's four rerun trials; about α at the threshold itself", () => {
    expect(rule('spend_usd')).toMatchObject({ effect: 2, effect_unit: 'ratio' })
    // Measured 90–92% at 1,000 simulations with four rerun trials (one trial: 78%; the noise floor
    // that holds the level under skew costs what the trials buy back: two-stage.ts).
    expect(rule('spend_usd').power).toBeGreaterThanOrEqual(0.85)
    expect(rule('spend_usd').power).toBeLessThan(0.96)
    expect(rule('spend_usd').power_at_threshold).toBeLessThan(0.08)
    // A breach reruns the whole 40-block panel (max_blocks 50 ≥ n).
    expect(rule('spend_usd').expected_blocks_rerun.at_effect).toBeGreaterThan(35)
  })

  it('the resolve rule’s power at its threshold is reported as measured, with the warning', () => {
    const r = rule('resolved')
    expect(r.effect).toBe(10)
    expect(r.power).toBe(r.power_at_threshold)
    // The two-stage combination (first run + the rerun's decision trials, three of four per block):
    // measured 42% here at n = 40 (version 3, half the blocks deciding: 35%); under the 50% that
    // triggers the warning.
    expect(r.power).toBeGreaterThan(0.3)
    expect(r.power).toBeLessThan(0.5)
    expect(c.warnings.join('\n')).toMatch(/resolved_deficit_pp 10 is below what 40 blocks can confirm/)
  })

  it('is deterministic for a seed, and JSON-safe', () => {
    const a = calibrate({ blocks: 12, thresholds, maxBlocks: 50, alpha: 0.05, sims: 30, seed: 9 })
    const b = calibrate({ blocks: 12, thresholds, maxBlocks: 50, alpha: 0.05, sims: 30, seed: 9 })
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    const other = calibrate({ blocks: 12, thresholds, maxBlocks: 50, alpha: 0.05, sims: 30, seed: 10 })
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(a))
    expect(JSON.stringify(a)).not.toMatch(/NaN|Infinity/)
  })
})

describe('calibrate: the selection cannot bias the rerun', () => {
  it('a 1.3× panel (20% of instances at 2.5×) breaches often but is not confirmed as over 1.5×', () => {
    // The over-threshold blocks of run 1 are mostly the 2.5× instances: a rerun of those alone
    // confirmed 10.7% of such panels (issue 13). The random sample tests the panel instead.
    const rng = createRng(4)
    let breaches = 0
    let confirmed = 0
    for (let s = 0; s < 300; s++) {
      const w = parametricWorld({ n: 40 }, NO_EFFECT, rng)
      w.instances.forEach((x, i) => {
        if (i % 5 === 0) x.mean.spend_usd[1] = 2.5 * x.mean.spend_usd[0]
      })
      const r = simulateOnce(w, policy, rng)
      if (r.breach.has('spend_usd')) breaches++
      if (r.confirmed.has('spend_usd')) confirmed++
    }
    expect(breaches).toBeGreaterThan(15)
    expect(confirmed / 300).toBeLessThanOrEqual(0.02)
  })

  it('A/A resolve: breaches near 12%, confirmations at most α', () => {
    const r = runScenario(world, NO_EFFECT, policy, 300, 77)
    expect(r.breach.resolved).toBeGreaterThan(0.05)
    expect(r.confirmed.resolved).toBeLessThanOrEqual(0.05)
    const d20 = runScenario(world, effectOf('resolved', 20), policy, 300, 78)
    // A true 20-point deficit at n = 40: the two-stage design with four rerun trials confirms about
    // 85% (one trial: 71%; the rerun alone: 57%).
    expect(d20.confirmed.resolved).toBeGreaterThan(0.75)
    expect(d20.confirmed.resolved).toBeLessThan(0.95)
    // The figure shown is estimated on the held-out half: unbiased by the decision (seeded value).
    expect(d20.meanShown.resolved).toBeGreaterThan(-23.5)
    expect(d20.meanShown.resolved).toBeLessThan(-16.5)
  })
})

describe('calibrate: a pilot comparison.json', () => {
  const first = makeComparison({
    cells: ['a', 'b'],
    rows: rows(20, (i) => ({
      a: { o: i % 2 ? 'r' : 'u', spend: 1 + (i % 4) },
      b: { o: i % 3 ? 'r' : 'u', spend: (1 + (i % 4)) * (i % 2 ? 1.2 : 0.8) },
    })),
  })
  // A second run of the same panel: the baseline ×1.1 or ÷1.1, the treatment ×1.3 or ÷1.3.
  const again = makeComparison({
    cells: ['a', 'b'],
    rows: rows(20, (i) => ({
      a: { o: 'r', spend: (1 + (i % 4)) * (i % 2 ? 1.1 : 1 / 1.1) },
      b: { o: 'r', spend: (1 + (i % 4)) * (i % 2 ? 1.2 : 0.8) * (i % 3 ? 1.3 : 1 / 1.3) },
    })),
  })
  const sdOf = (xs: number[]) => {
    const m = xs.reduce((s, x) => s + x, 0) / xs.length
    return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1))
  }

  it("measures each cell's run-to-run noise from rerun pairs, resamples its blocks, and prices the rerun", () => {
    const model = pilotModel(first, again, null)!
    expect(model.instances).toHaveLength(20)
    expect(model.source).toBe('b vs a')
    const base = Array.from({ length: 20 }, (_, i) => Math.log(i % 2 ? 1.1 : 1 / 1.1))
    const treat = Array.from({ length: 20 }, (_, i) => Math.log(i % 3 ? 1.3 : 1 / 1.3))
    expect(model.noise[0]).toBeCloseTo(sdOf(base) / Math.SQRT2, 12)
    expect(model.noise[1]).toBeCloseTo(sdOf(treat) / Math.SQRT2, 12)
    expect(model.noiseSource).toMatch(/^rerun pairs \(20 blocks\)/)
    expect(model.spendPerBlock).toBeCloseTo(
      Array.from({ length: 20 }, (_, i) => (1 + (i % 4)) * (1 + (i % 2 ? 1.2 : 0.8))).reduce(
        (s, x) => s + x,
        0,
      ) / 20,
      12,
    )
    const c = calibrate({
      blocks: 30,
      thresholds,
      maxBlocks: 50,
      alpha: 0.05,
      sims: 100,
      seed: 3,
      pilot: model,
    })
    expect(c.model).toMatch(/^pilot b vs a: 20 blocks resampled to 30/)
    expect(c.model).toMatch(/noise from rerun pairs/)
    expect(c.expected_rerun_usd).not.toBeNull()
    for (const r of c.rules) expect(r.false_confirmation_rate).toBeLessThanOrEqual(0.05)
  })

  it('a single pilot run cannot estimate the noise: it says so unless a σ is given', () => {
    expect(() => pilotModel(first, null, null)).toThrow(PilotNoiseUnknown)
    expect(() => pilotModel(first, null, null)).toThrow(/one run of each block/)
    const given = pilotModel(first, null, 0.5)!
    expect(given.noise).toEqual([0.5, 0.5])
    expect(given.noiseSource).toMatch(/--noise/)
  })

  it('a pilot without a cost-complete block gives no model', () => {
    const empty = makeComparison({
      cells: ['a', 'b'],
      rows: rows(3, () => ({ a: { o: 'i' }, b: { o: 'r' } })),
    })
    expect(pilotModel(empty, null, 0.35)).toBeNull()
  })
})
