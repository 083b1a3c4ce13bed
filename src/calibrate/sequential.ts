import { mcnemarPOneSided } from '../compare/stats/mcnemar.js'
import { createRng, type SeededRng } from '../compare/stats/rng.js'
import { combineEvidence } from '../detect/evidence.js'

/**
 * Weeks, blocks and dollars a sequential e-value rule needs compared with a fixed-size test for the
 * same α and power, by seeded simulation. A week runs the panel's n blocks once; each block's two
 * cells resolve independently with probabilities p and p − deficit.
 * - sequential: multiply the weeks' e-values (detect/evidence.ts), stop at 1/α or after `maxWeeks`;
 *   power = share stopped by then; cost = the mean weeks run (until stopping or the cap).
 * - fixed: one exact one-sided McNemar at α on a panel of N blocks run once, N the smallest multiple
 *   of n whose simulated power reaches the sequential rule's; cost = N / n weeks of blocks.
 * Pure given the seed.
 */
export interface SequentialOptions {
  blocksPerWeek: number
  /** Baseline resolve rate p. */
  resolveRate: number
  /** True deficit of the treatment, in points (e.g. 20). */
  deficitPp: number
  alpha: number
  maxWeeks: number
  sims: number
  seed: number
  /** Dollars per block (both cells), e.g. a pilot's mean; null when unknown. */
  costPerBlock: number | null
}

export interface SequentialComparison {
  power: number
  sequential: { mean_weeks: number; mean_blocks: number; dollars: number | null }
  fixed: { weeks: number; blocks: number; dollars: number | null; power: number }
  /** 1 − sequential blocks / fixed blocks (positive: the sequential rule needs fewer). */
  saving: number
  /** A/A: share of sequences whose product ever reached 1/α within maxWeeks (≤ α by Ville). */
  false_alarm: number
}

function week(rng: SeededRng, n: number, pB: number, pT: number): { b: number; c: number } {
  let b = 0
  let c = 0
  for (let i = 0; i < n; i++) {
    const rb = rng.nextFloat() < pB
    const rt = rng.nextFloat() < pT
    if (rb && !rt) b++
    else if (rt && !rb) c++
  }
  return { b, c }
}

function runSequential(
  rng: SeededRng,
  o: SequentialOptions,
  pT: number,
): { stopped: boolean; weeks: number } {
  const runs = []
  for (let w = 1; w <= o.maxWeeks; w++) {
    runs.push({ run_id: String(w), ...week(rng, o.blocksPerWeek, o.resolveRate, pT) })
    if (combineEvidence(runs, o.alpha).sufficient) return { stopped: true, weeks: w }
  }
  return { stopped: false, weeks: o.maxWeeks }
}

export function compareSequential(o: SequentialOptions): SequentialComparison {
  const pT = o.resolveRate - o.deficitPp / 100
  if (!(pT >= 0 && pT <= 1)) throw new RangeError(`compareSequential: p − deficit = ${pT} is not a rate`)
  const rng = createRng(o.seed)
  let stopped = 0
  let weeks = 0
  for (let s = 0; s < o.sims; s++) {
    const r = runSequential(rng, o, pT)
    if (r.stopped) stopped++
    weeks += r.weeks
  }
  const power = stopped / o.sims
  let aa = 0
  for (let s = 0; s < o.sims; s++) if (runSequential(rng, o, o.resolveRate).stopped) aa++
  // Fixed: the smallest panel (in whole weeks of blocks) whose exact test reaches the same power.
  let fixedWeeks = o.maxWeeks
  let fixedPower = 0
  for (let k = 1; k <= 4 * o.maxWeeks; k++) {
    let rejects = 0
    for (let s = 0; s < o.sims; s++) {
      const { b, c } = week(rng, k * o.blocksPerWeek, o.resolveRate, pT)
      if (mcnemarPOneSided(b, c, 'treatment_worse') <= o.alpha) rejects++
    }
    fixedWeeks = k
    fixedPower = rejects / o.sims
    if (fixedPower >= power) break
  }
  const meanWeeks = weeks / o.sims
  const seqBlocks = meanWeeks * o.blocksPerWeek
  const fixedBlocks = fixedWeeks * o.blocksPerWeek
  const dollars = (blocks: number) => (o.costPerBlock === null ? null : blocks * o.costPerBlock)
  return {
    power,
    sequential: { mean_weeks: meanWeeks, mean_blocks: seqBlocks, dollars: dollars(seqBlocks) },
    fixed: { weeks: fixedWeeks, blocks: fixedBlocks, dollars: dollars(fixedBlocks), power: fixedPower },
    saving: 1 - seqBlocks / fixedBlocks,
    false_alarm: aa / o.sims,
  }
}

/** The calibrate table of the sequential comparison, one line per true deficit. */
export function formatSequential(
  rows: Array<SequentialComparison & { deficit_pp: number }>,
  n: number,
): string {
  const usd = (x: number | null) => (x === null ? 'n/a (no pilot spend)' : `$${x.toFixed(2)}`)
  const lines = [
    '',
    `weekly runs of ${n} blocks (e-values multiplied across weeks, at most 12) vs one fixed-size exact McNemar at the same power:`,
  ]
  for (const r of rows) {
    lines.push(
      `  true deficit ${r.deficit_pp} pp: power ${(100 * r.power).toFixed(1)}%; sequential ${r.sequential.mean_weeks.toFixed(2)} weeks (${r.sequential.mean_blocks.toFixed(0)} blocks, ${usd(r.sequential.dollars)}) vs fixed ${r.fixed.weeks} week(s) of blocks (${r.fixed.blocks} blocks, ${usd(r.fixed.dollars)}); ` +
        `${r.saving >= 0 ? `${(100 * r.saving).toFixed(0)}% fewer` : `${(-100 * r.saving).toFixed(0)}% more`} blocks; A/A false alarm ${(100 * r.false_alarm).toFixed(1)}%`,
    )
  }
  return `${lines.join('\n')}\n`
}
