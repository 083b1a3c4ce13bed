import type { Comparison } from '../compare/schema.js'
import { discordantEValue } from '../compare/stats/evalue.js'
import { comparisonKey } from './keys.js'
import type { Decision, Evidence } from './schema.js'

/**
 * Evidence accumulated across the weekly runs of one experiment (same panel, same cells): each run's
 * e-value (the Beta(1,1)-mixture e-value on that run's own discordant pairs, compare/stats/evalue.ts)
 * is multiplied with the others'. Under H0 (θ = ½ every week) each week's e-value has expectation ≤ 1
 * given the weeks before, so the running product is a test supermartingale and, by Ville's
 * inequality, P(the product ever reaches 1/α) ≤ α — valid whenever one stops or continues. Weeks are
 * never pooled: their b and c are not added into one sample (a week is new data of the same panel,
 * not new blocks). Pure.
 */

/** One run's share of the evidence. */
export interface RunEvidence {
  run_id: string
  /** Baseline-only (b) and treatment-only (c) resolved blocks of that run. */
  b: number
  c: number
}

export interface EvidenceSoFar {
  runs: Array<RunEvidence & { log_e: number }>
  /** ln of the product of the runs' e-values (finite). */
  log_e: number
  /** The product, or null beyond the double range (see log_e). */
  e: number | null
  alpha: number
  /** 1/α: the product needed to reject H0 (no resolve-rate difference) at α. */
  threshold: number
  sufficient: boolean
  /** "evidence so far: E = 12.0 over 3 runs; 20 needed at α = 0.05 — not yet sufficient". */
  statement: string
}

/**
 * Combine runs' e-values at a declared α. Throws a RangeError when α is not in (0, 1) or a run id
 * appears twice (a run counted twice would inflate the evidence).
 */
export function combineEvidence(runs: readonly RunEvidence[], alpha: number): EvidenceSoFar {
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`combineEvidence: alpha must be in (0, 1), got ${alpha}`)
  const seen = new Set<string>()
  const out: EvidenceSoFar['runs'] = []
  let logE = 0
  for (const r of runs) {
    if (seen.has(r.run_id)) throw new RangeError(`combineEvidence: run ${r.run_id} appears twice`)
    seen.add(r.run_id)
    const e = discordantEValue(r.b, r.c)
    out.push({ ...r, log_e: e.logE })
    logE += e.logE
  }
  const threshold = 1 / alpha
  const e = Number.isFinite(Math.exp(logE)) ? Math.exp(logE) : null
  const sufficient = logE >= Math.log(threshold) - 1e-12
  const shown = e === null ? `exp(${logE.toFixed(1)})` : e.toPrecision(3)
  const statement =
    `evidence so far: E = ${shown} over ${out.length} run${out.length === 1 ? '' : 's'}; ` +
    `${Number(threshold.toPrecision(6))} needed at α = ${alpha} — ${sufficient ? 'sufficient: a resolve-rate difference at α' : 'not yet sufficient'}`
  return { runs: out, log_e: logE, e, alpha, threshold, sufficient, statement }
}

/**
 * The decision's evidence so far: for each competitive comparison of `current`, the previous
 * decision's runs of that key (when given) followed by this run. A run already counted (same run id)
 * is not counted again. Pure.
 */
export function evidenceFor(current: Comparison, previous: Decision | null, alpha: number): Evidence[] {
  return current.comparisons.map((e) => {
    const key = comparisonKey(current.experiment_id, e.baseline, e.treatment)
    const before = previous?.evidence?.find((x) => x.key === key)?.runs ?? []
    const id = current.run_id ?? `run ${before.length + 1}`
    const runs = [
      ...before.map(({ run_id, b, c }) => ({ run_id, b, c })),
      ...(before.some((r) => r.run_id === id)
        ? []
        : [{ run_id: id, b: e.outcome.losses, c: e.outcome.wins }]),
    ]
    return { key, ...combineEvidence(runs, alpha) }
  })
}
