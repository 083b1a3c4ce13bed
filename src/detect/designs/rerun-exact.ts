import type { SeededRng } from '../../stats/index.js'
import { mcnemarPOneSided, wilcoxonSignedRank } from '../../stats/index.js'
import { metricValue, type PairedBlock, resolvedValue } from '../pairs.js'
import type { RerunTest, Signal } from '../schema.js'
import type { ConfirmationDesign, DecideInput, SelectInput, Selection, Verdict } from './contract.js'

const NAME = 'rerun-exact'
const VERSION = 1
const ID = `${NAME}@${VERSION}`

/**
 * Confirmation on the rerun data alone with an exact one-sided test at a declared α.
 *
 * Select (first run only): a seeded uniform random sample of the breached comparisons' complete
 * blocks (cost-complete for a ratio signal, outcome-complete for a resolve-rate signal), up to
 * max_blocks — the whole panel when it fits. Inclusion does not depend on any value, so the rerun
 * estimates the panel, not the blocks that happened to cross (no winner's curse, no regression to the
 * mean). Room left is filled with the first run's discordant blocks of resolve-rate signals (driving,
 * then opposing; never unstable instances, F07). Rerunning the sample rather than only the discordant
 * blocks is what gives the resolve rule its power (calibrate: 13% → 2% at a true 10-point deficit,
 * n = 40, had only the discordant blocks been rerun).
 * Decide (rerun only, fresh workspaces and draws, so independent of the selection given the blocks):
 *  - resolve rate: exact one-sided McNemar on the rerun's discordant pairs, H0 "the treatment resolves
 *    no less than the baseline"; under H0 (cells exchangeable per instance) b′ | n′_d ~ Bin(n′_d, ½)
 *    whatever blocks were chosen, so P(confirm) ≤ α. Rerun losses only on unstable instances never
 *    confirm;
 *  - ratio with threshold t: exact one-sided Wilcoxon signed-rank test of x = ln(T/B) − ln t over the
 *    sampled rerun blocks, H0 "per-block log ratios are centred at or below ln t" (a zero on one side
 *    ranks as the most extreme difference of its sign; zero on both sides is a tie). A resolved
 *    advantage excuses the cost only when the exact one-sided McNemar of the same rerun rejects
 *    "no advantage" at the same α — the same test as the outcome rule.
 * The first run never enters the test (it only chose the blocks), so selection cannot bias it.
 */
export const rerunExact: ConfirmationDesign = {
  name: NAME,
  version: VERSION,
  trials: 1,
  statement: (alpha) =>
    `Confirmation reruns a seeded random sample of the panel (up to max_blocks) plus the first run's discordant blocks, and confirms a signal only when an exact one-sided test on the rerun data alone rejects at α = ${alpha}: McNemar on the rerun's discordant pairs for the resolve rate, the Wilcoxon signed-rank test of log(treatment/baseline) against log(threshold) on the sampled blocks for a ratio.`,
  select,
  decide,
}

/** The rerun's blocks: a seeded uniform sample of the complete blocks, then the resolve signals' discordant ones. */
export function select(input: SelectInput, rng: SeededRng): Selection {
  const pool: string[] = []
  const inPool = new Set<string>()
  for (const s of input.signals) {
    const ratio = s.metric !== 'resolved'
    for (const p of input.pairs(s)) {
      if ((ratio ? p.cost : p.outcome) && !inPool.has(p.instance)) {
        inPool.add(p.instance)
        pool.push(p.instance)
      }
    }
  }
  // Sort first, so the sample depends on the seed and the set of blocks only, never on their order.
  pool.sort()
  const sample = shuffledPrefix(pool, Math.min(pool.length, input.maxBlocks), rng)
  const chosen = new Set(sample)
  const instances = [...sample]
  let capped = pool.length > input.maxBlocks
  for (const s of input.signals) {
    if (s.metric !== 'resolved') continue
    for (const id of [...s.instances.driving, ...s.instances.opposing]) {
      if (input.unstable.has(id) || chosen.has(id)) continue
      if (instances.length >= input.maxBlocks) {
        capped = true
        break
      }
      chosen.add(id)
      instances.push(id)
    }
  }
  return { instances, sample, estimate: [], capped }
}

/** The first k of a uniform random permutation (partial Fisher–Yates with pure-rand's uniform ints). */
function shuffledPrefix(items: readonly string[], k: number, rng: SeededRng): string[] {
  const a = [...items]
  for (let i = 0; i < k; i++) {
    const j = i + rng.nextInt(a.length - i)
    const t = a[i] as string
    a[i] = a[j] as string
    a[j] = t
  }
  return a.slice(0, k)
}

/** b′ (baseline-only wins) and c′ (treatment-only wins) of rerun blocks, and the instances of b′. */
export function discordantCounts(blocks: readonly PairedBlock[]): { b: number; c: number; losses: string[] } {
  let b = 0
  let c = 0
  const losses: string[] = []
  for (const p of blocks) {
    if (!p.outcome || !p.base || !p.treat) continue
    const d = resolvedValue(p.treat) - resolvedValue(p.base)
    if (d < 0) {
      b++
      losses.push(p.instance)
    } else if (d > 0) c++
  }
  return { b, c, losses }
}

function decide(input: DecideInput): Verdict {
  const s = input.signal
  if (s.metric === 'resolved') return decideResolved(input)
  return decideRatio(input, s as Signal & { metric: Exclude<Signal['metric'], 'resolved'> })
}

function decideResolved(input: DecideInput): Verdict {
  const { b, c, losses } = discordantCounts(input.rerun)
  const p = mcnemarPOneSided(b, c, 'treatment_worse')
  const rejects = p <= input.alpha
  const flakyOnly = losses.length > 0 && losses.every((i) => input.unstable.has(i))
  const test: RerunTest = {
    design: ID,
    method: 'exact one-sided McNemar (binomial on the rerun discordant pairs)',
    hypothesis: 'the treatment resolves no less than the baseline',
    n: b + c,
    statistic: b,
    p_one_sided: p,
    alpha: input.alpha,
    rejects,
    advantage_p: null,
  }
  const holds = rejects && !flakyOnly
  const pText = `b′ = ${b}, c′ = ${c}, exact one-sided McNemar p = ${fmtP(p)}`
  const reason = holds
    ? `${pText} ≤ α = ${input.alpha} on the rerun data`
    : rejects
      ? `the rerun losses fall only on unstable instances (${losses.join(', ')}): not confirmed`
      : `${pText} > α = ${input.alpha}: did not hold`
  return { holds, test, reason }
}

function decideRatio(
  input: DecideInput,
  s: Signal & { metric: Exclude<Signal['metric'], 'resolved'> },
): Verdict {
  const x = logExcess(
    input.rerun.filter((p) => input.sample.has(p.instance)),
    s.metric,
    s.threshold,
  )
  const w = wilcoxonSignedRank(x)
  const adv = discordantCounts(input.outcome)
  const advantageP = mcnemarPOneSided(adv.b, adv.c, 'treatment_better')
  const excused = advantageP <= input.alpha
  const rejects = w.pGreater <= input.alpha
  const test: RerunTest = {
    design: ID,
    method: `exact one-sided Wilcoxon signed-rank on ln(T/B) − ln ${s.threshold}${w.method === 'exact' ? '' : ' (normal approximation, n > 50)'}`,
    hypothesis: `the per-block ${s.metric} ratio is centred at or below ${s.threshold}×`,
    n: w.n,
    statistic: w.wPlus,
    p_one_sided: w.pGreater,
    alpha: input.alpha,
    rejects,
    advantage_p: advantageP,
  }
  const holds = rejects && !excused
  const pText = `W+ = ${w.wPlus} over ${w.n} sampled rerun blocks, one-sided p = ${fmtP(w.pGreater)}`
  const reason = excused
    ? `the rerun shows a resolved advantage (b′ = ${adv.b}, c′ = ${adv.c}, exact one-sided McNemar p = ${fmtP(advantageP)} ≤ α = ${input.alpha}): not a regression`
    : rejects
      ? `${pText} ≤ α = ${input.alpha}: above ${s.threshold}× on the rerun data, without a resolved advantage (McNemar p = ${fmtP(advantageP)})`
      : `${pText} > α = ${input.alpha}: did not hold`
  return { holds, test, reason }
}

/**
 * ln(T/B) − ln t per block with the metric on both sides; a zero on one side is the most extreme
 * difference of its sign (ranked above every finite one), zero on both sides a tie (0).
 */
export function logExcess(
  blocks: readonly PairedBlock[],
  metric: Exclude<Signal['metric'], 'resolved'>,
  threshold: number,
): number[] {
  const out: number[] = []
  let extreme = 0
  const infinite: number[] = []
  const lt = Math.log(threshold)
  for (const p of blocks) {
    const b = metricValue(p.base, metric)
    const t = metricValue(p.treat, metric)
    if (b === null || t === null) continue
    if (b === 0 && t === 0) out.push(0)
    else if (b === 0 || t === 0) infinite.push(out.push(t === 0 ? -1 : 1) - 1)
    else {
      const v = Math.log(t / b) - lt
      out.push(v)
      extreme = Math.max(extreme, Math.abs(v))
    }
  }
  for (const i of infinite) out[i] = (out[i] as number) * (2 * extreme + 1)
  return out
}

function fmtP(p: number): string {
  return p < 0.0001 ? p.toExponential(2) : p.toPrecision(3)
}
