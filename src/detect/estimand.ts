import { METRIC_RULES, type RatioMetric } from './effects.js'
import type { SignalMetric } from './schema.js'

/**
 * What a rule is about, named once so that the breach, the test, the figure and its interval cannot
 * drift apart: every place that shows or tests a rule's quantity takes its words from here.
 *  - `ratio_of_totals`: Σ treatment / Σ baseline of a resource over the blocks compared — what a user
 *    pays for the same work. The breach is its point estimate, the confirmation tests H0
 *    Σt ≤ θ·Σb (stats/totals.ts), the figure and its interval are of Σt/Σb. Per-block ratios
 *    (median, geometric mean) are descriptive only, labelled as such, never tested.
 *  - `resolve_rate_difference`: treatment − baseline resolve rate on the same instances, in points.
 */
export type Estimand =
  | { kind: 'ratio_of_totals'; metric: RatioMetric }
  | { kind: 'resolve_rate_difference'; metric: 'resolved' }

export function estimandOf(metric: SignalMetric): Estimand {
  return metric === 'resolved'
    ? { kind: 'resolve_rate_difference', metric }
    : { kind: 'ratio_of_totals', metric }
}

/** "ratio of totals Σtreatment/Σbaseline of spend" — the estimand in words. */
export function estimandName(e: Estimand): string {
  return e.kind === 'ratio_of_totals'
    ? `ratio of totals Σtreatment/Σbaseline of ${METRIC_RULES[e.metric].label}`
    : 'resolve-rate difference treatment − baseline (points)'
}

/** The one-sided null hypothesis a confirmation rejects, for threshold θ. */
export function estimandNull(e: Estimand, threshold: number): string {
  return e.kind === 'ratio_of_totals'
    ? `Σtreatment ≤ ${threshold} × Σbaseline of ${METRIC_RULES[e.metric].label} (ratio of totals at or below ${threshold}×)`
    : 'the treatment resolves no less than the baseline'
}

/**
 * What a claim about the estimand covers, for `n` blocks: the claim is about the expected totals or
 * rates of these instances under these harnesses, not about the benchmark these instances come from.
 */
export function estimandScope(e: Estimand, n: number, what = METRIC_RULES[e.metric].label): string {
  return e.kind === 'ratio_of_totals'
    ? `covers the ${what} summed over these ${n} instances (a budget statement for this panel); it says nothing of a typical single instance, nor of instances outside the panel`
    : `covers these ${n} instances (the test's null is exchangeability of the two cells on each of them), not the benchmark they were drawn from`
}
