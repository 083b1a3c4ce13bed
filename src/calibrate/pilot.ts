import type { RatioMetric } from '../detect/effects.js'
import { competitivePairs, metricValue, type PairedBlock, resolvedValue } from '../detect/pairs.js'
import type { Comparison } from '../records/comparison.js'
import type { SeededRng } from '../stats/index.js'
import { RATIO_KEYS, type TrueEffects, type World, type WorldInstance } from './scenario.js'

/** What calibration takes from a pilot comparison.json: its blocks as instances, and its noise. */
export interface PilotModel {
  /** The comparison the blocks come from: "<treatment> vs <baseline>". */
  source: string
  instances: Omit<WorldInstance, 'id'>[]
  rate: number
  noise: number
  /** Mean spend per block, both cells together (USD), or null when unmeasured. */
  spendPerBlock: number | null
}

/**
 * The pilot's complete blocks of its first comparison as instances of a world: the resolve propensity
 * of block i is (resolved_base + resolved_treat + r̄)/3 (the pilot's two outcomes shrunk toward its mean
 * rate r̄, so a block solved by one cell is neither certain nor impossible); its cost level per resource
 * is the geometric mean of the two cells (the arithmetic mean when one is 0). The run-to-run noise σ
 * is the spread of the centred log spend ratios divided by √2 — an upper bound, since it counts real
 * per-instance differences as noise, so power is not overstated. The pilot's own treatment effect is
 * not carried over: calibration imposes A/A and the declared effects. Null when nothing is complete.
 */
export function pilotModel(c: Comparison): PilotModel | null {
  const entry = c.comparisons[0]
  if (!entry) return null
  const pairs = competitivePairs(c, entry.baseline, entry.treatment).filter(
    (p) => p.cost && p.base && p.treat,
  )
  if (pairs.length === 0) return null
  const rate = mean(pairs.map((p) => (resolvedValue(p.base!) + resolvedValue(p.treat!)) / 2))
  const logs: number[] = []
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
      if (b > 0 && t > 0) logs.push(Math.log(t / b))
    }
    return { p: (resolvedValue(p.base!) + resolvedValue(p.treat!) + rate) / 3, level }
  })
  const centre = logs.length > 0 ? mean(logs) : 0
  const sd =
    logs.length > 1 ? Math.sqrt(logs.reduce((s, x) => s + (x - centre) ** 2, 0) / (logs.length - 1)) : 0.35
  return {
    source: `${entry.treatment} vs ${entry.baseline}`,
    instances,
    rate,
    noise: Math.min(2, Math.max(0.05, sd / Math.SQRT2)),
    spendPerBlock: spendN > 0 ? spend / spendN : null,
  }
}

function levelOf(p: PairedBlock, m: RatioMetric): number {
  const b = metricValue(p.base, m) ?? 0
  const t = metricValue(p.treat, m) ?? 0
  return b > 0 && t > 0 ? Math.sqrt(b * t) : (b + t) / 2
}

function mean(xs: number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length
}

/** A world of n instances resampled with replacement from the pilot's blocks. */
export function pilotWorld(model: PilotModel, n: number, effects: TrueEffects, rng: SeededRng): World {
  const instances: WorldInstance[] = []
  for (let i = 0; i < n; i++) {
    const x = model.instances[rng.nextInt(model.instances.length)] as Omit<WorldInstance, 'id'>
    instances.push({ id: `sim-${String(i + 1).padStart(4, '0')}`, p: x.p, level: x.level })
  }
  return { instances, rate: model.rate, noise: model.noise, effects }
}
