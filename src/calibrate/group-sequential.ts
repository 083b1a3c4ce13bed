import {
  adaptiveAlternative,
  createRng,
  discordantLikelihoodRatio,
  normalQuantile,
  type SeededRng,
} from '../stats/index.js'
import { fixedMcNemarPower } from './fixed-power.js'
import { normal } from './scenario.js'

/**
 * Weekly monitoring of the resolve rate, three designs at the same one-sided α and power, measured
 * under H0 (no deficit) and H1 (the declared threshold as the true deficit), in blocks:
 *  - fixed: one exact one-sided McNemar on N blocks, N the fewest blocks (not whole weeks) whose exact
 *    power reaches the target (fixed-power.ts, computed);
 *  - group-sequential: a look after each week of n blocks, the last look at N_max blocks (a partial
 *    week allowed), rejecting at look k when Z_k = (b − c − 1)/√(b + c) (continuity-corrected) ≥ C·√(N_max/N_k) (O'Brien &
 *    Fleming 1979). C makes the crossing probability α for a Brownian motion observed at the
 *    information fractions N_k/N_max (found by bisection on seeded paths); N_max is the fewest blocks
 *    whose simulated power reaches the target (bisection). Its measured H0 crossing rate is reported beside it;
 *  - e-value: the weekly likelihood-ratio e-values (detect/evidence.ts) multiplied, stopping at 1/α,
 *    truncated at the first week by which the target share of H1 sequences has stopped.
 * Expected blocks are means over simulated sequences of the blocks run until the design stops (H0:
 * almost always the maximum). `chosen` is the design with the fewest expected blocks under H1 among
 * those whose expected blocks under H0 stay within 10% of the fixed test's. Pure given the seed.
 */
export interface DesignsOptions {
  blocksPerWeek: number
  resolveRate: number
  deficitPp: number
  alpha: number
  power: number
  horizonWeeks: number
  sims: number
  seed: number
  costPerBlock: number | null
}

export interface DesignRow {
  design: 'fixed' | 'group-sequential' | 'e-value'
  /** Expected blocks until the decision, under H1 and under H0. */
  expected_blocks_h1: number
  expected_blocks_h0: number
  max_blocks: number
  /** Measured (fixed: computed) power under H1 and rejection rate under H0. */
  power: number
  false_alarm: number
  /** 1 − expected blocks / the fixed test's, under H1 and H0 (positive: fewer blocks). */
  saving_h1: number
  saving_h0: number
  dollars_h1: number | null
  /** Group-sequential: the OBF constant C and the looks' block counts. */
  detail: string
}

export interface DesignsComparison {
  blocks_per_week: number
  deficit_pp: number
  resolve_rate: number
  alpha: number
  power_target: number
  rows: DesignRow[]
  chosen: DesignRow['design']
  /** Whether the chosen design meets the targets: ≥ 20% fewer blocks under H1, ≤ 10% more under H0. */
  targets: { h1_saving_at_least_20pct: boolean; h0_excess_at_most_10pct: boolean }
}

function discordance(p: number, q: number): { pb: number; pc: number } {
  return { pb: p * (1 - q), pc: q * (1 - p) }
}

/** Fewest blocks whose exact McNemar power reaches `power` (null beyond `cap`). */
export function fixedBlocks(
  pb: number,
  pc: number,
  alpha: number,
  power: number,
  cap: number,
): number | null {
  let lo = 1
  let hi = cap
  if (fixedMcNemarPower(hi, pb, pc, alpha) < power) return null
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (fixedMcNemarPower(mid, pb, pc, alpha) >= power) hi = mid
    else lo = mid + 1
  }
  // Exact power is not monotone in N (discreteness): step up to the first N from which it holds.
  return lo
}

/** The looks' cumulative block counts: weekly, the last at nMax. */
function looks(nMax: number, perWeek: number): number[] {
  const out: number[] = []
  for (let k = perWeek; k < nMax; k += perWeek) out.push(k)
  out.push(nMax)
  return out
}

/** OBF constant C for one-sided α at information fractions `t` (bisection on seeded Brownian paths). */
export function obrienFlemingConstant(t: readonly number[], alpha: number, paths = 20000, seed = 1): number {
  const rng = createRng(seed)
  const maxZ: number[] = []
  // Per path, the largest Z_k/√(1/t_k) = Z_k·√t_k — rejection iff max ≥ C.
  for (let s = 0; s < paths; s++) {
    let w = 0
    let prev = 0
    let m = Number.NEGATIVE_INFINITY
    for (const tk of t) {
      w += Math.sqrt(tk - prev) * normal(rng)
      prev = tk
      // Z_k = W(t_k)/√t_k; boundary C/√t_k ⟺ W(t_k) ≥ C.
      m = Math.max(m, w)
    }
    maxZ.push(m)
  }
  maxZ.sort((a, b) => a - b)
  const idx = Math.min(paths - 1, Math.ceil((1 - alpha) * paths))
  return Math.max(maxZ[idx] as number, normalQuantile(1 - alpha))
}

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

/** Group-sequential: blocks used and whether it rejected, per simulated sequence. */
function gsRun(
  rng: SeededRng,
  at: number[],
  nMax: number,
  cConst: number,
  pb: number,
  pc: number,
): { blocks: number; reject: boolean } {
  let b = 0
  let c = 0
  let prev = 0
  for (const k of at) {
    const d = week(rng, k - prev, pb, pc)
    prev = k
    b += d.b
    c += d.c
    // Continuity-corrected: the normal boundary on a discrete count would otherwise overshoot α.
    const z = b + c > 0 ? (b - c - 1) / Math.sqrt(b + c) : 0
    if (z >= cConst * Math.sqrt(nMax / k)) return { blocks: k, reject: true }
  }
  return { blocks: nMax, reject: false }
}

function gsMeasure(
  o: DesignsOptions,
  nMax: number,
  pb: number,
  pc: number,
  p0: { pb: number; pc: number },
  seed: number,
) {
  const at = looks(nMax, o.blocksPerWeek)
  const cConst = obrienFlemingConstant(
    at.map((k) => k / nMax),
    o.alpha,
    20000,
    o.seed,
  )
  const rng = createRng(seed)
  let blocks1 = 0
  let rej1 = 0
  let blocks0 = 0
  let rej0 = 0
  for (let s = 0; s < o.sims; s++) {
    const h1 = gsRun(rng, at, nMax, cConst, pb, pc)
    blocks1 += h1.blocks
    if (h1.reject) rej1++
    const h0 = gsRun(rng, at, nMax, cConst, p0.pb, p0.pc)
    blocks0 += h0.blocks
    if (h0.reject) rej0++
  }
  return { at, cConst, power: rej1 / o.sims, fa: rej0 / o.sims, e1: blocks1 / o.sims, e0: blocks0 / o.sims }
}

/** The e-value rule: stopping weeks (Infinity: not within the horizon). */
function eStops(rng: SeededRng, o: DesignsOptions, pb: number, pc: number): number[] {
  const need = Math.log(1 / o.alpha) - 1e-12
  const out: number[] = []
  for (let s = 0; s < o.sims; s++) {
    let logE = 0
    let discordant = 0
    let blocks = 0
    let stop = Number.POSITIVE_INFINITY
    for (let w = 1; w <= o.horizonWeeks; w++) {
      const theta1 = adaptiveAlternative(o.deficitPp, { discordant, blocks })
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

/** The three designs side by side. Throws a RangeError when p − deficit is not a rate. */
export function compareDesigns(o: DesignsOptions): DesignsComparison {
  const q = o.resolveRate - o.deficitPp / 100
  if (!(q >= 0 && q <= 1)) throw new RangeError(`compareDesigns: p − deficit = ${q} is not a rate`)
  const { pb, pc } = discordance(o.resolveRate, q)
  const h0 = discordance(o.resolveRate, o.resolveRate)
  const cap = o.horizonWeeks * o.blocksPerWeek
  const usd = (x: number) => (o.costPerBlock === null ? null : x * o.costPerBlock)
  const rows: DesignRow[] = []
  const nFixed = fixedBlocks(pb, pc, o.alpha, o.power, cap)
  const fixedPower = nFixed === null ? 0 : fixedMcNemarPower(nFixed, pb, pc, o.alpha)
  const fixedN = nFixed ?? cap
  rows.push({
    design: 'fixed',
    expected_blocks_h1: fixedN,
    expected_blocks_h0: fixedN,
    max_blocks: fixedN,
    power: fixedPower,
    false_alarm: nFixed === null ? 0 : fixedMcNemarPower(fixedN, h0.pb, h0.pc, o.alpha),
    saving_h1: 0,
    saving_h0: 0,
    dollars_h1: usd(fixedN),
    detail:
      nFixed === null
        ? `power ${o.power} not reached within ${cap} blocks`
        : `one exact McNemar on ${fixedN} blocks`,
  })
  // Group-sequential: the fewest N_max whose simulated power reaches the target (bisection between
  // the fixed N and 1.4 N; power grows with N_max up to simulation noise).
  let gs: ReturnType<typeof gsMeasure> | null = null
  let lo = fixedN
  let hi = Math.min(cap, Math.ceil(fixedN * 1.4))
  const top = gsMeasure(o, hi, pb, pc, h0, o.seed + 17)
  if (top.power >= o.power) {
    gs = top
    while (hi - lo > 2) {
      const mid = (lo + hi) >> 1
      const m = gsMeasure(o, mid, pb, pc, h0, o.seed + 17)
      if (m.power >= o.power) {
        hi = mid
        gs = m
      } else lo = mid
    }
  }
  if (gs) {
    const nMax = gs.at[gs.at.length - 1] as number
    rows.push({
      design: 'group-sequential',
      expected_blocks_h1: gs.e1,
      expected_blocks_h0: gs.e0,
      max_blocks: nMax,
      power: gs.power,
      false_alarm: gs.fa,
      saving_h1: 1 - gs.e1 / fixedN,
      saving_h0: 1 - gs.e0 / fixedN,
      dollars_h1: usd(gs.e1),
      detail: `O'Brien–Fleming, ${gs.at.length} looks at ${gs.at.join(', ')} blocks, C = ${gs.cConst.toFixed(3)}`,
    })
  }
  const rng = createRng(o.seed + 29)
  const s1 = eStops(rng, o, pb, pc)
  const s0 = eStops(rng, o, h0.pb, h0.pc)
  let capWeeks = 0
  for (let k = 1; k <= o.horizonWeeks && capWeeks === 0; k++)
    if (s1.filter((t) => t <= k).length / s1.length >= o.power) capWeeks = k
  if (capWeeks > 0) {
    const mean = (xs: number[]) =>
      (xs.reduce((s, t) => s + Math.min(t, capWeeks), 0) / xs.length) * o.blocksPerWeek
    const e1 = mean(s1)
    const e0 = mean(s0)
    rows.push({
      design: 'e-value',
      expected_blocks_h1: e1,
      expected_blocks_h0: e0,
      max_blocks: capWeeks * o.blocksPerWeek,
      power: s1.filter((t) => t <= capWeeks).length / s1.length,
      false_alarm: s0.filter((t) => t <= capWeeks).length / s0.length,
      saving_h1: 1 - e1 / fixedN,
      saving_h0: 1 - e0 / fixedN,
      dollars_h1: usd(e1),
      detail: `likelihood-ratio e-values multiplied weekly, stop at 1/α, at most ${capWeeks} weeks`,
    })
  }
  const eligible = rows.filter((r) => r.expected_blocks_h0 <= 1.1 * fixedN + 1e-9)
  const best = eligible.reduce(
    (a, r) => (r.expected_blocks_h1 < a.expected_blocks_h1 ? r : a),
    rows[0] as DesignRow,
  )
  return {
    blocks_per_week: o.blocksPerWeek,
    deficit_pp: o.deficitPp,
    resolve_rate: o.resolveRate,
    alpha: o.alpha,
    power_target: o.power,
    rows,
    chosen: best.design,
    targets: {
      h1_saving_at_least_20pct: best.saving_h1 >= 0.2,
      h0_excess_at_most_10pct: best.saving_h0 >= -0.1,
    },
  }
}

/** The weekly designs as a person reads them. */
export function formatDesigns(d: DesignsComparison): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`
  const lines = [
    '',
    `weekly monitoring of the resolve rate (${d.blocks_per_week} blocks a week, true deficit ${d.deficit_pp} pp at resolve rate ${d.resolve_rate.toFixed(2)}, one-sided α ${d.alpha}, power ${pct(d.power_target)}) — expected blocks until a decision:`,
  ]
  for (const r of d.rows) {
    const usd = r.dollars_h1 === null ? '' : `, $${r.dollars_h1.toFixed(2)} under H1`
    lines.push(
      `  ${r.design.padEnd(17)} H1 ${r.expected_blocks_h1.toFixed(0)} blocks (${r.saving_h1 >= 0 ? `${pct(r.saving_h1)} fewer` : `${pct(-r.saving_h1)} more`} than fixed), H0 ${r.expected_blocks_h0.toFixed(0)} (${r.saving_h0 >= 0 ? `${pct(r.saving_h0)} fewer` : `${pct(-r.saving_h0)} more`}), max ${r.max_blocks}; power ${pct(r.power)}, H0 rejections ${pct(r.false_alarm)}${usd} — ${r.detail}`,
    )
  }
  lines.push(
    `  used: ${d.chosen} (fewest expected blocks under H1 with at most 10% more than fixed under H0); targets ≥ 20% fewer under H1: ${d.targets.h1_saving_at_least_20pct ? 'met' : 'not met'}, ≤ 10% more under H0: ${d.targets.h0_excess_at_most_10pct ? 'met' : 'not met'}`,
  )
  return `${lines.join('\n')}\n`
}
