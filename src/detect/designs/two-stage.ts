import {
  inverseNormalCombination,
  mcnemarPOneSided,
  ratioOfTotalsTest,
  type SeededRng,
} from '../../stats/index.js'
import type { RatioMetric } from '../effects.js'
import { estimandName, estimandNull, estimandOf } from '../estimand.js'
import { metricColumns, type PairedBlock } from '../pairs.js'
import type { RerunTest } from '../schema.js'
import type { ConfirmationDesign, DecideInput, SelectInput, Selection, Verdict } from './contract.js'
import { discordantCounts, select as selectRerun } from './rerun-exact.js'

const NAME = 'two-stage-split'
const VERSION = 1
const ID = `${NAME}@${VERSION}`

/**
 * Confirmation in two stages, combined with weights fixed in advance, with the figure shown estimated
 * on blocks the decision never saw.
 *
 * Select (first run only): a seeded uniform random sample of the breached comparisons' complete
 * blocks, up to max_blocks (the whole panel when it fits), split at random into two halves: the
 * *decision half* and the *estimation half*. Room left under max_blocks is filled with the first
 * run's discordant blocks of resolve-rate signals (never unstable instances, F07); they join the
 * decision half. Inclusion in either half depends on no value.
 * Decide: an inverse-normal combination (stats/totals.ts) of two independent one-sided
 * p-values of the same null, with weights √n₁ and √n₂ fixed by the first run's complete blocks n₁ and
 * the planned decision half n₂ before the rerun:
 *  - stage 1, the first run (whole panel): exact one-sided McNemar for the resolve rate; for a ratio,
 *    the studentized test of totals H0 Σt ≤ θ·Σb;
 *  - stage 2, the rerun's decision half (fresh draws): the same test.
 * The two stages are independent given the instances, so P(combined p ≤ α) ≤ α under H0 however the
 * first run led to the rerun (it crossed a threshold). A ratio is excused by a resolved advantage only
 * when the exact one-sided McNemar of the rerun rejects "no advantage" at α. Rerun losses only on
 * unstable instances never confirm a resolve-rate deficit.
 * Estimate: the estimation half's figure (confirm.ts) — unbiased by the decision, which never used it.
 */
export const twoStageSplit: ConfirmationDesign = {
  name: NAME,
  version: VERSION,
  statement: (alpha) =>
    `Confirmation reruns a seeded random sample of the panel (up to max_blocks) split at random into a decision half and an estimation half. A signal is confirmed when the inverse-normal combination (weights √n fixed before the rerun) of the first run's one-sided p and the decision half's rejects at α = ${alpha}: exact McNemar for the resolve rate; for a ratio, Student's t test of the ratio of totals, H0 Σtreatment ≤ threshold × Σbaseline. The figure shown after a confirmation is estimated on the estimation half alone, which the decision never used.`,
  select,
  decide,
}

function select(input: SelectInput, rng: SeededRng): Selection {
  const chosen = selectRerun(input, rng)
  const { sample } = chosen
  // The permutation is uniform, so its second half is a uniform random half of the sample.
  const estimate = sample.length >= 4 ? sample.slice(Math.ceil(sample.length / 2)) : []
  return { ...chosen, estimate }
}

function fmtP(p: number): string {
  return p < 0.0001 ? p.toExponential(2) : p.toPrecision(3)
}

/** Weights fixed before the rerun: √(first run's complete blocks), √(planned decision half). */
function weights(n1: number, n2: number): [number, number] {
  return [Math.sqrt(Math.max(1, n1)), Math.sqrt(Math.max(1, n2))]
}

function decide(input: DecideInput): Verdict {
  return input.signal.metric === 'resolved'
    ? decideResolved(input)
    : decideRatio(input, input.signal.metric as RatioMetric)
}

function decisionBlocks(input: DecideInput, blocks: readonly PairedBlock[]): PairedBlock[] {
  return blocks.filter((p) => input.decide.has(p.instance) && !input.estimate.has(p.instance))
}

function decideResolved(input: DecideInput): Verdict {
  const s = input.signal
  const first = discordantCounts(input.first)
  const n1 = input.first.filter((p) => p.outcome).length
  const half = decisionBlocks(input, input.rerun)
  const second = discordantCounts(half)
  const p1 = mcnemarPOneSided(first.b, first.c, 'treatment_worse')
  const p2 = mcnemarPOneSided(second.b, second.c, 'treatment_worse')
  const w = weights(n1, input.decide.size)
  const combined = inverseNormalCombination([p1, p2], w)
  const rejects = combined.p <= input.alpha
  const flakyOnly = second.losses.length > 0 && second.losses.every((i) => input.unstable.has(i))
  const e = estimandOf(s.metric)
  const test: RerunTest = {
    design: ID,
    method: 'inverse-normal combination of exact one-sided McNemar tests (first run; rerun decision half)',
    hypothesis: estimandNull(e, s.threshold),
    estimand: estimandName(e),
    n: second.b + second.c,
    statistic: combined.z,
    p_one_sided: combined.p,
    alpha: input.alpha,
    rejects,
    advantage_p: null,
    stages: [
      { stage: 'first run', n: n1, p: p1, weight: w[0] },
      { stage: 'rerun decision half', n: half.length, p: p2, weight: w[1] },
    ],
  }
  const holds = rejects && !flakyOnly
  const text = `first run b = ${first.b}, c = ${first.c} (p = ${fmtP(p1)}); rerun decision half b′ = ${second.b}, c′ = ${second.c} (p = ${fmtP(p2)}); combined p = ${fmtP(combined.p)}`
  const reason = holds
    ? `${text} ≤ α = ${input.alpha}`
    : rejects
      ? `the rerun losses fall only on unstable instances (${second.losses.join(', ')}): not confirmed`
      : `${text} > α = ${input.alpha}: did not hold`
  return { holds, test, reason }
}

function decideRatio(input: DecideInput, metric: RatioMetric): Verdict {
  const s = input.signal
  const firstCols = metricColumns([...input.first], metric)
  const half = decisionBlocks(input, input.rerun).filter((p) => input.sample.has(p.instance))
  const halfCols = metricColumns(half, metric)
  const t1 = ratioOfTotalsTest(firstCols.base, firstCols.treat, s.threshold)
  const t2 = ratioOfTotalsTest(halfCols.base, halfCols.treat, s.threshold)
  // An undefined stage (no spread, no baseline total) carries no evidence: p = 1.
  const p1 = t1?.p ?? 1
  const p2 = t2?.p ?? 1
  const planned = [...input.decide].filter((i) => input.sample.has(i) && !input.estimate.has(i)).length
  const w = weights(firstCols.base.length, planned)
  const combined = inverseNormalCombination([p1, p2], w)
  const adv = discordantCounts(input.outcome)
  const advantageP = mcnemarPOneSided(adv.b, adv.c, 'treatment_better')
  const excused = advantageP <= input.alpha
  const rejects = combined.p <= input.alpha
  const e = estimandOf(metric)
  const test: RerunTest = {
    design: ID,
    method:
      'inverse-normal combination of studentized one-sided tests of the ratio of totals (first run; rerun decision half)',
    hypothesis: estimandNull(e, s.threshold),
    estimand: estimandName(e),
    n: halfCols.base.length,
    statistic: combined.z,
    p_one_sided: combined.p,
    alpha: input.alpha,
    rejects,
    advantage_p: advantageP,
    stages: [
      { stage: 'first run', n: firstCols.base.length, p: p1, weight: w[0] },
      { stage: 'rerun decision half', n: halfCols.base.length, p: p2, weight: w[1] },
    ],
  }
  const holds = rejects && !excused
  const ratio = (t: typeof t1) => (t?.estimate != null ? `${t.estimate.toFixed(2)}×` : 'undefined')
  const text = `ratio of totals ${ratio(t1)} on the first run (p = ${fmtP(p1)}), ${ratio(t2)} on the rerun decision half (n = ${halfCols.base.length}, p = ${fmtP(p2)}); combined p = ${fmtP(combined.p)}`
  const reason = excused
    ? `the rerun shows a resolved advantage (b′ = ${adv.b}, c′ = ${adv.c}, exact one-sided McNemar p = ${fmtP(advantageP)} ≤ α = ${input.alpha}): not a regression`
    : rejects
      ? `${text} ≤ α = ${input.alpha}: the ratio of totals exceeds ${s.threshold}×, without a resolved advantage`
      : `${text} > α = ${input.alpha}: did not hold`
  return { holds, test, reason }
}
