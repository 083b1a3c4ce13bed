import { ManifestSchema } from '../manifest/schema.js'
import type { Plan } from './schema.js'

/** GitHub-hosted runners stop a job after 6 hours (docs.github.com/en/actions/reference/limits). */
export const HOSTED_JOB_LIMIT_MINUTES = 360

/**
 * Minutes a leg job needs besides its attempts: checkouts, Node set-up, installing the harness CLI
 * and the verifier's dependencies, starting the proxy, uploading the artifact.
 */
export const SETUP_MARGIN_MINUTES = 20

/**
 * `timeout-minutes` for the leg jobs of a plan, from the manifest's budgets: the longest leg's
 * attempts run one after another, each at most `budgets.timeout_s` for the harness plus
 * `benchmark.verifier.timeout_s` for grading, every (instance, trial) up to `1 + retries.max` times
 * with the retry backoff (doubling) in between; plus SETUP_MARGIN_MINUTES. Capped at the hosted
 * runner's 360 minutes (a plan that needs more should use more shards). Minutes, integer ≥ 1. Pure.
 */
export function legTimeoutMinutes(plan: Plan): number {
  return legTimeoutNeed(plan).minutes
}

/** What the longest leg of a plan needs, against the hosted runner's limit. */
export interface LegTimeoutNeed {
  /** `timeout-minutes` given to the leg jobs (capped at HOSTED_JOB_LIMIT_MINUTES). */
  minutes: number
  /** Minutes the longest leg may need, uncapped. */
  neededMinutes: number
  /** Shards (legs per cell) at which the longest leg fits the limit; null when one instance alone cannot. */
  shardsToFit: number | null
}

/** The leg timeout before and after the cap, and the shard count that would fit the cap. Pure. */
export function legTimeoutNeed(plan: Plan): LegTimeoutNeed {
  const m = ManifestSchema.parse(plan.manifest)
  const longest = Math.max(0, ...plan.legs.map((l) => l.instances.length))
  const attemptsPerTrial = 1 + m.retries.max
  const backoff = m.retries.max > 0 ? m.retries.backoff_s * (2 ** m.retries.max - 1) : 0
  const perTrial = attemptsPerTrial * (m.budgets.timeout_s + m.benchmark.verifier.timeout_s) + backoff
  const perInstance = plan.trials * perTrial
  const neededMinutes = Math.ceil((longest * perInstance) / 60) + SETUP_MARGIN_MINUTES
  const fitPerLeg = Math.floor(((HOSTED_JOB_LIMIT_MINUTES - SETUP_MARGIN_MINUTES) * 60) / perInstance)
  const instances = plan.panel.instances.length
  return {
    minutes: Math.min(HOSTED_JOB_LIMIT_MINUTES, neededMinutes),
    neededMinutes,
    shardsToFit: fitPerLeg >= 1 ? Math.max(1, Math.ceil(instances / fitPerLeg)) : null,
  }
}

/**
 * A warning when the longest leg may need more than GitHub-hosted runners allow (the job is stopped
 * at 360 minutes, whatever the budgets say): the need, and how many shards would fit. Null otherwise.
 */
export function legTimeoutWarning(plan: Plan): string | null {
  const n = legTimeoutNeed(plan)
  if (n.neededMinutes <= HOSTED_JOB_LIMIT_MINUTES) return null
  const fit =
    n.shardsToFit === null
      ? 'even one instance per leg does not fit: lower budgets.timeout_s, benchmark.verifier.timeout_s, trials or retries.max'
      : `set shards.count to ${n.shardsToFit} or more (now ${plan.shards.count}) so each leg fits`
  return (
    `a leg may need ${n.neededMinutes} minutes (longest leg's attempts × (budgets.timeout_s + verifier timeout), retries, ` +
    `${SETUP_MARGIN_MINUTES} min set-up) but GitHub-hosted runners stop a job at ${HOSTED_JOB_LIMIT_MINUTES}: ` +
    `its timeout-minutes is capped at ${HOSTED_JOB_LIMIT_MINUTES}; ${fit} (self-hosted runners allow 5 days)`
  )
}
