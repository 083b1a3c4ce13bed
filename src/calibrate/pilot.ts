import type { RatioMetric } from '../detect/effects.js'
import { competitivePairs, metricValue, type PairedBlock, resolvedValue } from '../detect/pairs.js'
import type { Comparison } from '../records/comparison.js'
import type { SeededRng } from '../stats/index.js'
import { applyEffects, RATIO_KEYS, simId, type TrueEffects, type World } from './scenario.js'

/** One pilot block as calibration resamples it: a resolve propensity and a cost level per resource. */
export interface PilotBlock {
  p: number
  level: Record<RatioMetric, number>
}

/** What calibration takes from a pilot comparison.json: its blocks as instances, and its noise. */
export interface PilotModel {
  /** The comparison the blocks come from: "<treatment> vs <baseline>". */
  source: string
  instances: PilotBlock[]
  rate: number
  /** Run-to-run noise σ on log spend, [baseline, treatment]. */
  noise: [number, number]
  /** Where the noise comes from, in words. */
  noiseSource: string
  /** Mean spend per block, both cells together (USD), or null when unmeasured. */
  spendPerBlock: number | null
}

/** The pilot cannot say how noisy a run is: it has one run of each block and cell. */
export class PilotNoiseUnknown extends Error {}

/**
 * The pilot's complete blocks of its first comparison as instances of a world: the resolve propensity
 * of block i is (resolved_base + resolved_treat + r̄)/3 (the pilot's two outcomes shrunk toward its mean
 * rate r̄, so a block solved by one cell is neither certain nor impossible); its cost level per resource
 * is the geometric mean of the two cells (the arithmetic mean when one is 0). The pilot's own
 * treatment effect is not carried over: calibration imposes A/A and the declared effects.
 *
 * Run-to-run noise is measured, never assumed: from `rerun`, a second run of the same panel and cells
 * (each cell's log spend on the same block in the two runs differs by noise alone: σ̂ = sd/√2, one per
 * arm), else `noise` when the caller gives one. Neither: PilotNoiseUnknown (a single run mixes noise
 * with real per-instance differences and cannot tell them apart). Null when nothing is cost-complete.
 */
export function pilotModel(c: Comparison, rerun: Comparison | null, noise: number | null): PilotModel | null {
  const entry = c.comparisons[0]
  if (!entry) return null
  const pairs = competitivePairs(c, entry.baseline, entry.treatment).filter(
    (p) => p.cost && p.base && p.treat,
  )
  if (pairs.length === 0) return null
  const rate = mean(pairs.map((p) => (resolvedValue(p.base!) + resolvedValue(p.treat!)) / 2))
  let spend = 0
  let spendN = 0
  const instances = pairs.map((p) => {
    const level = {} as Record<RatioMetric, number>
    for (const m of RATIO_KEYS) level[m] = levelOf(p, m)
    const b = metricValue(p.base, 'spend_usd')
    const t = metricValue(p.treat, 'spend_usd')
    if (b !== null && t !== null) {
      spend += b + t
      spendN++
    }
    return { p: (resolvedValue(p.base!) + resolvedValue(p.treat!) + rate) / 3, level }
  })
  const source = `${entry.treatment} vs ${entry.baseline}`
  const spendPerBlock = spendN > 0 ? spend / spendN : null
  if (rerun) {
    const again = new Map(
      competitivePairs(rerun, entry.baseline, entry.treatment)
        .filter((p) => p.cost)
        .map((p) => [p.instance, p]),
    )
    const arms: [number[], number[]] = [[], []]
    for (const p of pairs) {
      const q = again.get(p.instance)
      if (!q) continue
      const sides: Array<[PairedBlock['base'], PairedBlock['base']]> = [
        [p.base, q.base],
        [p.treat, q.treat],
      ]
      sides.forEach(([x, y], arm) => {
        const a = metricValue(x, 'spend_usd')
        const b = metricValue(y, 'spend_usd')
        if (a !== null && b !== null && a > 0 && b > 0) arms[arm as 0 | 1].push(Math.log(b / a))
      })
    }
    if (arms[0].length < 3 || arms[1].length < 3) {
      throw new PilotNoiseUnknown(
        `the pilot's second run shares ${Math.min(arms[0].length, arms[1].length)} cost-complete block(s) with the first (at least 3 per cell are needed to estimate run-to-run noise)`,
      )
    }
    const est = arms.map((xs) => clampNoise(sd(xs) / Math.SQRT2)) as [number, number]
    return {
      source,
      instances,
      rate,
      noise: est,
      noiseSource: `rerun pairs (${arms[0].length} blocks): σ ${est[0].toFixed(3)} baseline, ${est[1].toFixed(3)} treatment`,
      spendPerBlock,
    }
  }
  if (noise === null) {
    throw new PilotNoiseUnknown(
      'the pilot has one run of each block and cell, so it cannot estimate run-to-run noise (it mixes noise with real per-instance differences)',
    )
  }
  return {
    source,
    instances,
    rate,
    noise: [noise, noise],
    noiseSource: `σ ${noise} given with --noise`,
    spendPerBlock,
  }
}

function clampNoise(x: number): number {
  return Math.min(3, Math.max(0, x))
}

function sd(xs: number[]): number {
  const m = mean(xs)
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1))
}

function levelOf(p: PairedBlock, m: RatioMetric): number {
  const b = metricValue(p.base, m) ?? 0
  const t = metricValue(p.treat, m) ?? 0
  return b > 0 && t > 0 ? Math.sqrt(b * t) : (b + t) / 2
}

function mean(xs: number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length
}

/**
 * A world of n instances resampled with replacement from the pilot's blocks. A resource the pilot
 * never spent (level 0) gets a tiny positive level so its ratio stays defined.
 */
export function pilotWorld(model: PilotModel, n: number, effects: TrueEffects, rng: SeededRng): World {
  const instances = []
  for (let i = 0; i < n; i++) {
    const x = model.instances[rng.nextInt(model.instances.length)] as PilotBlock
    const level = {} as Record<RatioMetric, number>
    for (const m of RATIO_KEYS) level[m] = x.level[m] > 0 ? x.level[m] : 1e-9
    instances.push({ id: simId(i), ...applyEffects({ p: x.p, mean: level }, model.rate, effects) })
  }
  return { instances, noise: model.noise }
}
