import { adaptiveAlternative, createRng, discordantLikelihoodRatio, type SeededRng } from '../stats/index.js'
import { fixedMcNemarPower } from './fixed-power.js'

/**
 * Weeks, blocks and dollars the weekly e-value rule (detect/evidence.ts) needs compared with a
 * fixed-size test for the same α and power, by seeded simulation. A week runs the panel's n blocks
 * once; each block's two cells resolve independently with probabilities p and p − deficit.
 * - sequential: multiply the weeks' one-sided likelihood-ratio e-values, each at the θ₁ that the
 *   declared threshold and the earlier weeks' discordance give (adaptiveAlternative), and stop when
 *   the product reaches 1/α. For a power target P the rule is truncated at
 *   the first week K by which a share P of sequences has stopped; its cost is the mean of
 *   min(stopping week, K) — the expected sample size of a truncated sequential test.
 * - fixed: one exact one-sided McNemar at α on N weeks of blocks run once, N the smallest number of
 *   whole weeks whose exact power (fixed-power.ts, computed, not simulated) reaches P.
 * Both reject at the same declared α; the A/A share is the sequential rule's measured false alarm
 * by week K (≤ α by Ville at any K). Pure given the seed.
 */
export interface SequentialOptions {
  blocksPerWeek: number
  /** Baseline resolve rate p. */
  resolveRate: number
  /** True deficit of the treatment, in points (e.g. 20). */
  deficitPp: number
  /** The declared threshold (thresholds.resolved_deficit_pp) that sets the rule's θ₁. */
  designDeficitPp: number
  alpha: number
  /** Power targets, e.g. [0.8, 0.9, 0.95]. */
  powers: number[]
  /** Longest horizon simulated, in weeks (e.g. 52). */
  horizonWeeks: number
  sims: number
  seed: number
  /** Dollars per block (both cells), e.g. a pilot's mean; null when unknown. */
  costPerBlock: number | null
}

export interface SequentialRow {
  deficit_pp: number
  power_target: number
  /** null when the rule does not reach the power within the horizon. */
  sequential: {
    cap_weeks: number
    power: number
    mean_weeks: number
    mean_blocks: number
    dollars: number | null
  } | null
  fixed: { weeks: number; blocks: number; dollars: number | null; power: number } | null
  /** 1 − sequential blocks / fixed blocks (positive: the sequential rule needs fewer); null when either is. */
  saving: number | null
  /** A/A: share of sequences whose product reached 1/α by the cap week (≤ α by Ville). */
  false_alarm: number | null
}

/** Baseline-only (b) and treatment-only (c) counts of one week of n blocks. */
function week(rng: SeededRng, n: number, pb: number, pc: number): { b: number; c: number } {
  let b = 0
  let c = 0
  for (let i = 0; i < n; i++) {
    const u = rng.nextFloat()
    if (u < pb) b++
    else if (u < pb + pc) c++
  }
  return { b, c }
}

/** Discordant-pair probabilities of one block: b = p(1 − q), c = q(1 − p). */
function discordance(p: number, q: number): { pb: number; pc: number } {
  return { pb: p * (1 - q), pc: q * (1 - p) }
}

/** Stopping week of each simulated sequence (Infinity: not within the horizon). */
function stoppingWeeks(rng: SeededRng, o: SequentialOptions, q: number): number[] {
  const { pb, pc } = discordance(o.resolveRate, q)
  const need = Math.log(1 / o.alpha) - 1e-12
  const out: number[] = []
  for (let s = 0; s < o.sims; s++) {
    let logE = 0
    let discordant = 0
    let blocks = 0
    let stop = Number.POSITIVE_INFINITY
    for (let w = 1; w <= o.horizonWeeks; w++) {
      // The week's θ₁ from the earlier weeks only, as detect/evidence.ts sets it.
      const theta1 = adaptiveAlternative(o.designDeficitPp, { discordant, blocks })
      const { b, c } = week(rng, o.blocksPerWeek, pb, pc)
      logE += discordantLikelihoodRatio(b, c, theta1).logE
      discordant += b + c
      blocks += o.blocksPerWeek
      if (logE >= need) {
        stop = w
        break
      }
    }
    out.push(stop)
  }
  return out
}

/**
 * One row per power target. Throws a RangeError when p − deficit is not a rate or a power target is
 * not in (0, 1).
 */
export function compareSequential(o: SequentialOptions): SequentialRow[] {
  const q = o.resolveRate - o.deficitPp / 100
  if (!(q >= 0 && q <= 1)) throw new RangeError(`compareSequential: p − deficit = ${q} is not a rate`)
  for (const p of o.powers)
    if (!(p > 0 && p < 1)) throw new RangeError(`compareSequential: power target ${p} is not in (0, 1)`)
  const rng = createRng(o.seed)
  const h1 = stoppingWeeks(rng, o, q)
  const h0 = stoppingWeeks(rng, o, o.resolveRate)
  const share = (xs: number[], k: number) => xs.filter((t) => t <= k).length / xs.length
  const dollars = (blocks: number) => (o.costPerBlock === null ? null : blocks * o.costPerBlock)
  // Fixed: powers of 1, 2, … weeks until every target is reached (or the horizon).
  const { pb, pc } = discordance(o.resolveRate, q)
  const fixed: number[] = []
  const highest = Math.max(...o.powers)
  for (let k = 1; k <= o.horizonWeeks; k++) {
    fixed.push(fixedMcNemarPower(k * o.blocksPerWeek, pb, pc, o.alpha))
    if (fixed[k - 1]! >= highest) break
  }
  return o.powers.map((target) => {
    let cap = 0
    for (let k = 1; k <= o.horizonWeeks && cap === 0; k++) if (share(h1, k) >= target) cap = k
    const sequential =
      cap === 0
        ? null
        : (() => {
            const meanWeeks = h1.reduce((s, t) => s + Math.min(t, cap), 0) / h1.length
            const blocks = meanWeeks * o.blocksPerWeek
            return {
              cap_weeks: cap,
              power: share(h1, cap),
              mean_weeks: meanWeeks,
              mean_blocks: blocks,
              dollars: dollars(blocks),
            }
          })()
    const k = fixed.findIndex((p) => p >= target) + 1
    const fixedRow =
      k === 0
        ? null
        : {
            weeks: k,
            blocks: k * o.blocksPerWeek,
            dollars: dollars(k * o.blocksPerWeek),
            power: fixed[k - 1]!,
          }
    return {
      deficit_pp: o.deficitPp,
      power_target: target,
      sequential,
      fixed: fixedRow,
      saving: sequential && fixedRow ? 1 - sequential.mean_blocks / fixedRow.blocks : null,
      false_alarm: sequential ? share(h0, sequential.cap_weeks) : null,
    }
  })
}

/** The calibrate table of the sequential comparison, one line per true deficit and power target. */
export function formatSequential(
  rows: SequentialRow[],
  n: number,
  designDeficitPp: number,
  horizon: number,
): string {
  // Dollars only with a pilot's spend; otherwise one line at the end says how to get them.
  const usd = (x: number | null) => (x === null ? '' : `, $${x.toFixed(2)}`)
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`
  const lines = [
    '',
    `weekly runs of ${n} blocks: one-sided likelihood-ratio e-values at the ${designDeficitPp}-point threshold multiplied across weeks (stop at 1/α) vs one fixed-size exact McNemar, same α and power:`,
  ]
  for (const r of rows) {
    const head = `  true deficit ${r.deficit_pp} pp, power ${Math.round(100 * r.power_target)}%: `
    if (!r.sequential || !r.fixed) {
      lines.push(
        `${head}not reached within ${horizon} weeks${r.sequential ? ' by the fixed test' : r.fixed ? ' by the sequential rule' : ''}`,
      )
      continue
    }
    const s = r.sequential
    const saving = r.saving ?? 0
    lines.push(
      `${head}sequential ${s.mean_weeks.toFixed(2)} weeks on average (${s.mean_blocks.toFixed(0)} blocks${usd(s.dollars)}; stop by week ${s.cap_weeks}, power ${pct(s.power)}, A/A ${pct(r.false_alarm ?? 0)}) vs fixed ${r.fixed.weeks} weeks (${r.fixed.blocks} blocks${usd(r.fixed.dollars)}; power ${pct(r.fixed.power)}): ` +
        `${saving >= 0 ? `${(100 * saving).toFixed(0)}% fewer` : `${(-100 * saving).toFixed(0)}% more`} blocks`,
    )
  }
  if (rows.some((r) => r.sequential?.dollars === null || r.fixed?.dollars === null))
    lines.push('  (dollars need a pilot: --pilot <comparison.json> gives its mean spend per block)')
  return `${lines.join('\n')}\n`
}
