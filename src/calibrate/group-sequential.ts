import { cyclePlan, MAX_LOOKS } from '../detect/evidence.js'
import {
  adaptiveAlternative,
  createRng,
  discordantLikelihoodRatio,
  type ObfPlan,
  obfLook,
  type SeededRng,
} from '../stats/index.js'
import { fixedMcNemarPower } from './fixed-power.js'

/**
 * Weekly monitoring of the resolve rate, three designs at the same one-sided α and power, measured
 * under H0 (no deficit) and H1 (the declared threshold as the true deficit), in blocks:
 *  - fixed: one exact one-sided McNemar on N blocks, N the fewest blocks (not whole weeks) whose exact
 *    power reaches the target (fixed-power.ts, computed);
 *  - group-sequential: the rule the weekly evidence decides with (detect/evidence.ts), through the
 *    same calls: a look after each week of n blocks, K looks planned from the first week's discordant
 *    share for the threshold deficit at the target power (whole weeks), rejecting at look k when
 *    Z_k = (b − c − 1)/√(b + c) (continuity-corrected) ≥ C·√(K/k) (O'Brien & Fleming 1979);
 *    its power and H0 crossing rate are measured;
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

/**
 * The weekly group-sequential rule of detect/evidence.ts on one simulated sequence: the plan from the
 * first week's counts (`plans` caches it by discordant total), then one look a week.
 */
function gsRun(
  rng: SeededRng,
  o: DesignsOptions,
  pb: number,
  pc: number,
  plans: Map<number, ObfPlan>,
): { blocks: number; reject: boolean; looks: number } {
  const n = o.blocksPerWeek
  let b = 0
  let c = 0
  let plan: ObfPlan | null = null
  for (let k = 1; ; k++) {
    const d = week(rng, n, pb, pc)
    b += d.b
    c += d.c
    if (!plan) {
      const key = d.b + d.c
      plan = plans.get(key) ?? cyclePlan({ run_id: 'w1', b: d.b, c: d.c, blocks: n }, o.alpha, o.deficitPp)
      plans.set(key, plan)
    }
    if (obfLook(b, c, k, plan).crosses) return { blocks: k * n, reject: true, looks: plan.looks }
    if (k >= plan.looks) return { blocks: k * n, reject: false, looks: plan.looks }
  }
}

function gsMeasure(o: DesignsOptions, pb: number, pc: number, p0: { pb: number; pc: number }, seed: number) {
  const rng = createRng(seed)
  const plans = new Map<number, ObfPlan>()
  let blocks1 = 0
  let rej1 = 0
  let blocks0 = 0
  let rej0 = 0
  let max = 0
  let looks = 0
  for (let s = 0; s < o.sims; s++) {
    const h1 = gsRun(rng, o, pb, pc, plans)
    blocks1 += h1.blocks
    if (h1.reject) rej1++
    const h0 = gsRun(rng, o, p0.pb, p0.pc, plans)
    blocks0 += h0.blocks
    if (h0.reject) rej0++
    max = Math.max(max, h0.looks * o.blocksPerWeek, h1.looks * o.blocksPerWeek)
    looks += h0.looks
  }
  return {
    power: rej1 / o.sims,
    fa: rej0 / o.sims,
    e1: blocks1 / o.sims,
    e0: blocks0 / o.sims,
    max,
    meanLooks: looks / o.sims,
  }
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
  // Group-sequential: the weekly evidence's own rule, planned from each sequence's first week.
  const gs = gsMeasure(o, pb, pc, h0, o.seed + 17)
  rows.push({
    design: 'group-sequential',
    expected_blocks_h1: gs.e1,
    expected_blocks_h0: gs.e0,
    max_blocks: Math.round(gs.meanLooks * o.blocksPerWeek),
    power: gs.power,
    false_alarm: gs.fa,
    saving_h1: 1 - gs.e1 / fixedN,
    saving_h0: 1 - gs.e0 / fixedN,
    dollars_h1: usd(gs.e1),
    detail: `O'Brien–Fleming, one look a week, ${gs.meanLooks.toFixed(1)} weekly looks planned on average from the first week's discordance (max shown: the mean planned maximum; largest ${gs.max} blocks; at most ${MAX_LOOKS} looks)`,
  })
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
    `  used: ${d.chosen} (fewest expected blocks under H1 with at most 10% more than fixed under H0); targets ≥ 20% fewer under H1: ${d.targets.h1_saving_at_least_20pct ? 'met' : 'not met'}, ≤ 10% more under H0: ${d.targets.h0_excess_at_most_10pct ? 'met' : 'not met'}${d.chosen === 'group-sequential' ? '; the weekly evidence in decision.json decides with it' : '; the weekly evidence in decision.json decides with group-sequential, which this world does not favour'}`,
  )
  return `${lines.join('\n')}\n`
}
