import type { Comparison } from '../records/comparison.js'
import { adaptiveAlternative, deficitAlternative, discordantLikelihoodRatio } from '../stats/index.js'
import { comparisonKey } from './keys.js'
import type { Decision, Evidence } from './schema.js'

/**
 * Evidence accumulated across the weekly runs of one experiment (same panel, same cells) that the
 * treatment resolves fewer instances than the baseline. Each run contributes the one-sided
 * likelihood-ratio e-value of its own discordant pairs at the alternative θ₁ declared before that run
 * (stats/evalue.ts: E = (2θ₁)^b·(2(1 − θ₁))^c; θ₁ from thresholds.resolved_deficit_pp and the
 * earlier runs' discordance only, adaptiveAlternative — so it is fixed before the run's data). Under
 * H0 (no difference: every discordant pair is a fair coin) each run's e-value has expectation 1 given
 * the runs before, so the running product is a test martingale and, by Ville's inequality,
 * P(the product ever reaches 1/α) ≤ α — valid whenever one stops or continues. Weeks are never pooled:
 * their b and c are not added into one sample tested at a fixed α. A treatment advantage (c > b)
 * lowers the product. Pure.
 */

/** One run's share of the evidence. */
export interface RunEvidence {
  run_id: string
  /** Baseline-only (b) and treatment-only (c) resolved blocks of that run. */
  b: number
  c: number
  /** The alternative θ₁ in force when that run was made; absent in older records (then the current one). */
  theta?: number
  /** Outcome-complete blocks of that run (the discordance that sets later runs' θ₁); absent in older records. */
  blocks?: number
}

export interface EvidenceSoFar {
  runs: Array<RunEvidence & { theta: number; log_e: number }>
  /** ln of the product of the runs' e-values (finite). */
  log_e: number
  /** The product, or null beyond the double range (see log_e). */
  e: number | null
  alpha: number
  /** 1/α: the product needed to reject H0 (no resolve-rate difference) at α. */
  threshold: number
  /** The running product reached 1/α at some run (sticky: a later run never resets it). */
  sufficient: boolean
  /** The run at which the running product first reached 1/α, or null. */
  crossed_at: string | null
  /** "evidence so far: E = 12.0 over 3 runs; 20 needed at α = 0.05 — not yet sufficient". */
  statement: string
}

/**
 * Combine runs' e-values at a declared α, each at its own θ₁ (`theta`, else `theta1`). Throws a
 * RangeError when α is not in (0, 1), a θ₁ is not in (½, 1) or a run id appears twice (a run counted
 * twice would inflate the evidence).
 */
export function combineEvidence(runs: readonly RunEvidence[], alpha: number, theta1: number): EvidenceSoFar {
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`combineEvidence: alpha must be in (0, 1), got ${alpha}`)
  const seen = new Set<string>()
  const out: EvidenceSoFar['runs'] = []
  let logE = 0
  for (const r of runs) {
    if (seen.has(r.run_id)) throw new RangeError(`combineEvidence: run ${r.run_id} appears twice`)
    seen.add(r.run_id)
    const theta = r.theta ?? theta1
    const e = discordantLikelihoodRatio(r.b, r.c, theta)
    out.push({
      run_id: r.run_id,
      b: r.b,
      c: r.c,
      theta,
      ...(r.blocks === undefined ? {} : { blocks: r.blocks }),
      log_e: e.logE,
    })
    logE += e.logE
  }
  const threshold = 1 / alpha
  const e = Number.isFinite(Math.exp(logE)) ? Math.exp(logE) : null
  // Crossing the bound is a stopping event (Ville): once the running product has reached 1/α the
  // null is rejected, and a later run — a cleared week, an improvement — never resets it.
  const need = Math.log(threshold) - 1e-12
  let running = 0
  let crossedAt: string | null = null
  for (const r of out) {
    running += r.log_e
    if (crossedAt === null && running >= need) crossedAt = r.run_id
  }
  const sufficient = crossedAt !== null
  const shown = e === null ? `exp(${logE.toFixed(1)})` : e.toPrecision(3)
  const statement =
    `evidence so far: E = ${shown} over ${out.length} run${out.length === 1 ? '' : 's'}; ` +
    `${Number(threshold.toPrecision(6))} needed at α = ${alpha} — ${
      !sufficient
        ? 'not yet sufficient'
        : logE >= need
          ? 'sufficient: the treatment resolves fewer, at α'
          : `sufficient since run ${crossedAt}: the bound was crossed then (later runs never reset it); the treatment resolves fewer, at α`
    }`
  return { runs: out, log_e: logE, e, alpha, threshold, sufficient, crossed_at: crossedAt, statement }
}

/**
 * The decision's evidence so far: for each competitive comparison of `current`, the previous
 * decision's runs of that key (when given) followed by this run, counted once with the counts of
 * `current` (a recorded run of the same id is replaced, never counted twice), at the θ₁ that the
 * threshold `deficitPp` and the earlier runs give (runs without recorded blocks, or with fewer blocks
 * than discordant pairs, do not inform it). Pure.
 */
export function evidenceFor(
  current: Comparison,
  previous: Decision | null,
  alpha: number,
  deficitPp: number,
): Evidence[] {
  const floor = deficitAlternative(deficitPp)
  return current.comparisons.map((e) => {
    const key = comparisonKey(current.experiment_id, e.baseline, e.treatment)
    const recorded = previous?.evidence?.find((x) => x.key === key)?.runs ?? []
    const id = current.run_id ?? `run ${recorded.length + 1}`
    // This run's counts always come from its own comparison: a record of the same run id (the run
    // passed as its own previous run, or a forged entry) is replaced, never trusted in its place.
    const before = recorded.filter((r) => r.run_id !== id)
    // This run's θ₁ from the earlier runs' discordance only (runs that recorded their blocks).
    const known = before.filter((r) => r.blocks !== undefined && r.b + r.c <= r.blocks)
    const theta = adaptiveAlternative(deficitPp, {
      discordant: known.reduce((s, r) => s + r.b + r.c, 0),
      blocks: known.reduce((s, r) => s + r.blocks!, 0),
    })
    const runs: RunEvidence[] = [
      ...before.map(({ run_id, b, c, theta, blocks }) => ({
        run_id,
        b,
        c,
        theta,
        ...(blocks === undefined ? {} : { blocks }),
      })),
      { run_id: id, b: e.outcome.losses, c: e.outcome.wins, theta, blocks: e.outcome.n },
    ]
    return { key, ...combineEvidence(runs, alpha, floor) }
  })
}
