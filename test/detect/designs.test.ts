import { describe, expect, it } from 'vitest'
import { NO_EFFECT } from '../../src/calibrate/scenario.js'
import { runScenario } from '../../src/calibrate/simulate.js'
import { nullWorlds, powerWorlds } from '../../src/calibrate/worlds.js'
import { DEFAULT_DESIGN, DESIGNS, designNamed } from '../../src/detect/designs/registry.js'
import { logExcess } from '../../src/detect/designs/rerun-exact.js'
import { DEFAULT_TEST, type StageTest, twoStageWith } from '../../src/detect/designs/two-stage.js'
import { competitivePairs, type PairedBlock } from '../../src/detect/pairs.js'
import type { Signal } from '../../src/detect/schema.js'
import { ThresholdsSchema } from '../../src/manifest/schema.js'
import { createRng } from '../../src/stats/rng.js'
import { strictJson } from '../../src/util/json.js'
import { blockOf, makeComparison, rows } from './fixtures.js'

const spendSignal = (threshold = 1.5): Signal => ({
  id: 'exp/a-vs-b:spend_usd',
  key: 'exp/a-vs-b',
  kind: 'competitive',
  baseline: 'a',
  treatment: 'b',
  metric: 'spend_usd',
  direction: 'regression',
  rule: 'spend',
  threshold,
  effect: { estimate: 2, ci: null, unit: 'ratio', method: 'x', n: 10, reason: null },
  resolved_advantage: null,
  p_one_sided: null,
  instances: { driving: ['inst-01'], opposing: [], flaky: [] },
  flaky_only: false,
  state: 'unconfirmed',
  rerun: null,
})

function pairsOf(spend: Array<[number, number]>): PairedBlock[] {
  const c = makeComparison({
    cells: ['a', 'b'],
    rows: rows(spend.length, (i) => ({
      a: { o: 'r', spend: spend[i]![0] },
      b: { o: 'r', spend: spend[i]![1] },
    })),
  })
  return competitivePairs(c, 'a', 'b')
}

const EXACT = DESIGNS['rerun-exact']
const none = { first: [] as PairedBlock[], decide: new Set<string>(), estimate: new Set<string>() }

describe('rerun-exact design (decisions recorded before two-stage-split)', () => {
  it('is registered by name and states its α in one sentence', () => {
    expect(designNamed('rerun-exact')).toBe(EXACT)
    const s = EXACT.statement(0.01)
    expect(s).toMatch(/α = 0\.01/)
    expect(s.split('. ').length).toBe(1)
  })

  it('log excess: a zero on one side is the most extreme of its sign; zero on both a tie', () => {
    const x = logExcess(
      pairsOf([
        [1, 3],
        [1, 1],
        [0, 2],
        [2, 0],
        [0, 0],
      ]),
      'spend_usd',
      1.5,
    )
    expect(x[0]).toBeCloseTo(Math.log(2), 12)
    expect(x[1]).toBeCloseTo(-Math.log(1.5), 12)
    const extreme = 2 * Math.log(2) + 1
    expect(x[2]).toBeCloseTo(extreme, 12)
    expect(x[3]).toBeCloseTo(-extreme, 12)
    expect(x[4]).toBe(0)
  })

  it('a ratio is tested on the sample only: over-threshold blocks outside it never count', () => {
    const rerun = pairsOf([
      [1, 10],
      [1, 10],
      [1, 10],
      [1, 10],
      [1, 10],
      [1, 10],
      [1, 1],
      [1, 1],
    ])
    const all = new Set(rerun.map((p) => p.instance))
    const args = {
      signal: spendSignal(),
      rerun,
      outcome: rerun,
      unstable: new Set<string>(),
      alpha: 0.05,
      ...none,
    }
    const v = EXACT.decide({ ...args, sample: all })
    expect(v.test.n).toBe(8)
    // Only the two 1× blocks were sampled: nothing above 1.5× there.
    const v2 = EXACT.decide({ ...args, sample: new Set(['inst-07', 'inst-08']) })
    expect(v2.test.n).toBe(2)
    expect(v2.holds).toBe(false)
    expect(v2.test.p_one_sided).toBe(1)
  })

  it('select: the sample is sorted-pool based, so the order of pairs does not change it', () => {
    const pairs = pairsOf(Array.from({ length: 30 }, () => [1, 2] as [number, number]))
    const input = { signals: [spendSignal()], unstable: new Set<string>(), maxBlocks: 10 }
    const a = EXACT.select({ ...input, pairs: () => pairs }, createRng(5))
    const b = EXACT.select({ ...input, pairs: () => [...pairs].reverse() }, createRng(5))
    expect(a.sample).toEqual(b.sample)
    expect(a.sample).toHaveLength(10)
    expect(new Set(a.sample).size).toBe(10)
    expect(a.capped).toBe(true)
    // The pool fits: the whole panel, not capped.
    const whole = EXACT.select({ ...input, maxBlocks: 50, pairs: () => pairs }, createRng(5))
    expect([...whole.sample].sort()).toEqual(pairs.map((p) => p.instance).sort())
    expect(whole.capped).toBe(false)
  })

  it('A/A by simulation through decide: exact size ≤ α for the ratio test at the threshold boundary', () => {
    // T = 1.5·B·exp(ε′ − ε): log excess symmetric about 0, the least favourable null. 2,000 reruns of 20 blocks.
    const rng = createRng(99)
    const norm = () => Math.sqrt(-2 * Math.log(1 - rng.nextFloat())) * Math.cos(2 * Math.PI * rng.nextFloat())
    let rejects = 0
    const sims = 2000
    for (let s = 0; s < sims; s++) {
      const spend = Array.from({ length: 20 }, () => {
        const level = Math.exp(norm())
        return [level * Math.exp(0.4 * norm()), 1.5 * level * Math.exp(0.4 * norm())] as [number, number]
      })
      const rerun = spend.map(([b, t], i) => blockOf(`inst-${i}`, b, t))
      const v = EXACT.decide({
        signal: spendSignal(),
        rerun,
        outcome: rerun,
        sample: new Set(rerun.map((p) => p.instance)),
        unstable: new Set(),
        alpha: 0.05,
        ...none,
      })
      if (v.holds) rejects++
    }
    // Exact test: ≤ 5% up to Monte Carlo error (SE 0.5 points).
    expect(rejects / sims).toBeLessThan(0.065)
    expect(rejects / sims).toBeGreaterThan(0.03)
  })
})

describe('two-stage-split design (the default)', () => {
  const design = DEFAULT_DESIGN
  it('is the default; an unknown or missing name falls back to it', () => {
    expect(design.name).toBe('two-stage-split')
    expect(designNamed(undefined)).toBe(design)
    expect(designNamed('no-such-design')).toBe(design)
    expect(design.statement(0.05)).toMatch(/ratio of totals/)
    expect(design.statement(0.05)).toMatch(/estimation trials of the sampled blocks/)
  })

  it('select (version 4): every sampled block decides, none is held out by block; four rerun trials, split in two halves', () => {
    expect(design.version).toBe(4)
    expect(design.trials).toBe(4)
    expect(design.splitTrials).toBe(true)
    const pairs = pairsOf(Array.from({ length: 40 }, (_, i) => [1, 1.5 + 0.1 * i] as [number, number]))
    const sel = design.select(
      { signals: [spendSignal()], unstable: new Set(), maxBlocks: 30, pairs: () => pairs },
      createRng(8),
    )
    expect(sel.sample).toHaveLength(30)
    expect(sel.estimate).toEqual([])
    expect(sel.instances).toEqual(expect.arrayContaining(sel.sample))
  })

  // Version 3's block split, still selectable (twoStageWith) and measured in bench/totals-tests.ts.
  const v3 = twoStageWith({ ...DEFAULT_TEST, splitTrials: false })

  it('select (block split): a random half of the sample is held out for the estimate, disjoint from the decision half', () => {
    const design = v3
    const pairs = pairsOf(Array.from({ length: 40 }, () => [1, 2] as [number, number]))
    const sel = design.select(
      { signals: [spendSignal()], unstable: new Set(), maxBlocks: 50, pairs: () => pairs },
      createRng(8),
    )
    expect(sel.sample).toHaveLength(40)
    expect(sel.estimate).toHaveLength(20)
    const held = new Set(sel.estimate)
    for (const i of sel.estimate) expect(sel.sample).toContain(i)
    expect(sel.instances.filter((i) => !held.has(i))).toHaveLength(20)
    // Another seed holds out another half.
    const other = design.select(
      { signals: [spendSignal()], unstable: new Set(), maxBlocks: 50, pairs: () => pairs },
      createRng(9),
    )
    expect(other.estimate).not.toEqual(sel.estimate)
  })

  it('select (block split, version 3): halves matched in pairs on the first run’s D, one of each pair to each half', () => {
    const design = v3
    expect(design.splitTrials).toBeUndefined()
    // D = t − 1.5·b rises with i: sorted pairs are (0, 1), (2, 3), …
    const pairs = pairsOf(Array.from({ length: 40 }, (_, i) => [1, 1.5 + 0.1 * i] as [number, number]))
    const byD = pairs.map((p) => p.instance)
    const held = new Set(
      design.select(
        { signals: [spendSignal()], unstable: new Set(), maxBlocks: 50, pairs: () => pairs },
        createRng(8),
      ).estimate,
    )
    expect(held.size).toBe(20)
    for (let i = 0; i < 40; i += 2) {
      const inHalf = [byD[i], byD[i + 1]].filter((id) => held.has(id as string))
      expect(inHalf).toHaveLength(1)
    }
    // The coin differs by seed; the pairing does not.
    const other = new Set(
      design.select(
        { signals: [spendSignal()], unstable: new Set(), maxBlocks: 50, pairs: () => pairs },
        createRng(9),
      ).estimate,
    )
    expect([...other].sort()).not.toEqual([...held].sort())
  })

  it('decide: combines the first run and the decision half, never reads the estimation half', () => {
    const first = pairsOf(
      Array.from(
        { length: 12 },
        (_, i) => [1 + (i % 3), (1 + (i % 3)) * (2 + 0.1 * (i % 4))] as [number, number],
      ),
    )
    const rerun = first
    const ids = rerun.map((p) => p.instance)
    const estimate = new Set(ids.slice(6))
    const args = {
      signal: spendSignal(),
      rerun,
      outcome: rerun,
      sample: new Set(ids),
      unstable: new Set<string>(),
      alpha: 0.05,
      first,
      decide: new Set(ids),
      estimate,
    }
    const v = design.decide(args)
    expect(v.holds).toBe(true)
    expect(v.test.stages?.map((s) => s.n)).toEqual([12, 6])
    expect(v.test.stages?.map((s) => s.weight)).toEqual([Math.sqrt(12), Math.sqrt(6)])
    expect(v.test.estimand).toMatch(/ratio of totals/)
    expect(v.test.hypothesis).toMatch(/Σtreatment ≤ 1\.5 × Σbaseline/)
    // Changing the held-out blocks' rerun values changes nothing in the decision.
    const altered = rerun.map((p) => (estimate.has(p.instance) ? blockOf(p.instance, 1, 0.1) : p))
    const v2 = design.decide({ ...args, rerun: altered, outcome: altered })
    expect(v2.test.p_one_sided).toBe(v.test.p_one_sided)
  })

  it('a steady 3.6× breach confirms when the rerun blocks hold means over four trials, as comparison.json does', () => {
    // Fresh input tokens of a real run (16 blocks, one trial), and its rerun of 6 blocks (four trials,
    // each block the mean over its trials): a ratio of 3.6× with little run noise.
    const b1 = [
      2613, 2419, 2453, 2166, 2328, 2820, 2145, 2800, 1945, 2573, 2122, 2166, 2295, 2437, 2174, 2600,
    ]
    const t1 = [
      8964, 8494, 8567, 8522, 8574, 9093, 8408, 9068, 8216, 8523, 8344, 8496, 8645, 8360, 8478, 8897,
    ]
    const first = b1.map((b, i) => blockOf(`inst-${String(i + 1).padStart(2, '0')}`, b, t1[i]!))
    const rerunValues: Array<[number, number, number]> = [
      [1, 2370.25, 8610],
      [2, 2411, 8693.5],
      [6, 2268.5, 8462],
      [8, 2599, 8957.5],
      [11, 2119, 8355],
      [13, 2170.5, 8452.5],
    ]
    const rerun = rerunValues.map(([i, b, t]) => blockOf(`inst-${String(i).padStart(2, '0')}`, b, t, 4))
    const ids = rerun.map((p) => p.instance)
    const v = design.decide({
      signal: spendSignal(),
      rerun,
      outcome: rerun,
      sample: new Set(ids),
      unstable: new Set<string>(),
      alpha: 0.05,
      first,
      decide: new Set(ids),
      estimate: new Set(ids.slice(3)),
    })
    expect(v.holds, v.reason).toBe(true)
    expect(v.test.stages?.map((s) => s.n)).toEqual([16, 3])
    for (const stage of v.test.stages ?? []) expect(stage.p).toBeLessThan(1e-3)
    expect(v.test.p_one_sided).toBeLessThan(1e-6)
  })

  it('a forged stage (costs or trial counts too large to sum) is not tested: no throw, no non-finite number', () => {
    const first = Array.from({ length: 12 }, (_, i) => blockOf(`inst-${i}`, 1 + (i % 3), (1 + (i % 3)) * 2.2))
    const decideWith = (firstBlocks: PairedBlock[], rerun: PairedBlock[]) => {
      const ids = rerun.map((p) => p.instance)
      return design.decide({
        signal: spendSignal(),
        rerun,
        outcome: rerun,
        sample: new Set(ids),
        unstable: new Set<string>(),
        alpha: 0.05,
        first: firstBlocks,
        decide: new Set(ids),
        estimate: new Set(ids.slice(3)),
      })
    }
    const cases: Array<[string, PairedBlock[], PairedBlock[], RegExp]> = [
      [
        'costs too large to sum',
        first,
        first.slice(0, 6).map((p) => blockOf(p.instance, 1e300, 1e308, 4)),
        /the rerun's block inst-0 holds a negative spend_usd or totals too large to sum/,
      ],
      [
        'a huge trial count',
        first,
        first.slice(0, 6).map((p) => blockOf(p.instance, 1e10, 3e10, 1e300)),
        /the rerun's block inst-0 holds/,
      ],
      [
        'first-run costs too large to sum',
        first.map((p, i) => (i >= 2 ? blockOf(p.instance, 1e307, 1e308) : p)),
        first.slice(0, 6).map((p, i) => blockOf(p.instance, 1.5 + 0.1 * i, 3.5, 4)),
        /the first run's block inst-3 holds/,
      ],
    ]
    for (const [name, firstBlocks, rerun, why] of cases) {
      const v = decideWith(firstBlocks, rerun)
      expect(v.holds, `${name}: ${v.reason}`).toBe(false)
      expect(v.reason, name).toMatch(why)
      expect(() => strictJson(v), name).not.toThrow()
      // The first stage's weight is fixed by its 12 blocks, tested or not.
      expect(v.test.stages?.[0]?.weight, name).toBe(Math.sqrt(12))
    }
  })

  it('A/A by simulation through decide: size at the boundary with symmetric D (2,000 runs of 20 + 10 blocks)', () => {
    const rng = createRng(99)
    const norm = () => Math.sqrt(-2 * Math.log(1 - rng.nextFloat())) * Math.cos(2 * Math.PI * rng.nextFloat())
    // The rerun draws the same blocks again (the design reads each arm's run-to-run noise from them).
    const draw = (levels: number[]) =>
      levels.map((level, i) =>
        blockOf(
          `inst-${i}`,
          level * Math.exp(0.4 * norm() - 0.08),
          1.5 * level * Math.exp(0.4 * norm() - 0.08),
        ),
      )
    let rejects = 0
    const sims = 2000
    for (let s = 0; s < sims; s++) {
      const levels = Array.from({ length: 20 }, () => Math.exp(norm()))
      const first = draw(levels)
      const rerun = draw(levels)
      const ids = rerun.map((p) => p.instance)
      const v = design.decide({
        signal: spendSignal(),
        rerun,
        outcome: rerun,
        sample: new Set(ids),
        unstable: new Set(),
        alpha: 0.05,
        first,
        decide: new Set(ids),
        estimate: new Set(ids.slice(10)),
      })
      if (v.holds) rejects++
    }
    // Seeded: 2,000 runs give this count exactly; ≤ α up to Monte Carlo error (SE 0.5 points).
    expect(rejects).toBe(EXPECTED_TWO_STAGE_REJECTS)
    expect(rejects / sims).toBeLessThan(0.06)
  })

  it('left-skewed D (baseline run noise σ 1.0, treatment 0.35) at the boundary: the floored, skew-corrected test holds its level where Student’s t does not', () => {
    const rng = createRng(7)
    const norm = () => Math.sqrt(-2 * Math.log(1 - rng.nextFloat())) * Math.cos(2 * Math.PI * rng.nextFloat())
    const draw = (levels: number[]) =>
      levels.map((level, i) =>
        blockOf(`inst-${i}`, level * Math.exp(norm() - 0.5), 1.5 * level * Math.exp(0.35 * norm() - 0.06125)),
      )
    const student = twoStageWith({ method: 'student', pooledSd: false })
    const counts = { student: 0, chosen: 0 }
    const sims = 2000
    for (let s = 0; s < sims; s++) {
      const levels = Array.from({ length: 40 }, () => Math.exp(norm()))
      const first = draw(levels)
      const rerun = draw(levels)
      const ids = rerun.map((p) => p.instance)
      const input = {
        signal: spendSignal(),
        rerun,
        outcome: rerun,
        sample: new Set(ids),
        unstable: new Set<string>(),
        alpha: 0.05,
        first,
        decide: new Set(ids),
        estimate: new Set(ids.slice(20)),
      }
      // Only runs whose first-run ratio crossed the threshold reach a confirmation.
      if (
        first.reduce((a, p) => a + (p.treat?.spend_usd ?? 0), 0) <=
        1.5 * first.reduce((a, p) => a + (p.base?.spend_usd ?? 0), 0)
      )
        continue
      if (student.decide(input).holds) counts.student++
      if (design.decide(input).holds) counts.chosen++
    }
    // Seeded counts of 2,000 simulated experiments: Student 17.0%, version 3 2.55% (s.e. ≈ 0.35
    // points; version 2, each stage's s floored at the other's: 9.25%) — within α in this, the
    // hardest null world (see two-stage.ts), with one rerun trial.
    expect(counts).toEqual(EXPECTED_SKEWED)
    expect(counts.student / sims).toBeGreaterThan(0.1)
    expect(counts.chosen / sims).toBeLessThan(0.05)
    expect(counts.chosen / sims).toBeLessThan(counts.student / sims)
  })
})
const EXPECTED_TWO_STAGE_REJECTS = 33
const EXPECTED_SKEWED = { student: 340, chosen: 51 }

describe('two-stage candidates with three rerun trials, seeded, in the non-uniform worlds (200 runs each)', () => {
  const theta = { spend_usd: 1.5, input_fresh_tokens: 1.5, proxy_requests: 1.5 }
  const worlds = [...nullWorlds(theta), ...powerWorlds()]
  const run = (name: string, test: StageTest) => {
    const w = worlds.find((x) => x.name === name)!
    const policy = {
      thresholds: ThresholdsSchema.parse({}),
      maxBlocks: 50,
      alpha: 0.05,
      design: twoStageWith(test),
      rerunTrials: 3,
    }
    return runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, policy, 200, 11)
  }
  const v2: StageTest = { method: 'johnson-down', pooledSd: true }
  const sqrtAw: StageTest = { ...v2, attemptWeights: true, floorScale: 'sqrt-trials' }

  it('a √k floor with attempt weights buys power at a uniform 2× but not the level of the noisier-baseline world', () => {
    // Seeded expected values; at 1,000 runs per world (bench/totals-tests.ts) the same ordering holds:
    // uniform 2× 84.7% → 87.9%, σ 1.0 baseline / 0.35 treatment 9.3% → 8.7%.
    expect(run('uniform-2x', v2).confirmed.spend_usd).toBe(0.78)
    expect(run('uniform-2x', sqrtAw).confirmed.spend_usd).toBe(0.845)
    expect(run('unequal-noise-base-at-threshold', v2).confirmed.spend_usd).toBe(0.105)
    expect(run('unequal-noise-base-at-threshold', sqrtAw).confirmed.spend_usd).toBe(0.105)
    // the estimate shown is still the estimation half's: within a few percent of the truth
    const het = run('heterogeneous-2x', sqrtAw)
    expect(het.confirmed.spend_usd).toBe(0.32)
    expect(het.meanShownOverTruth.spend_usd!).toBeCloseTo(0.9642, 4)
  })
})
