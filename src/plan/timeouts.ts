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
  const m = ManifestSchema.parse(plan.manifest)
  const longest = Math.max(0, ...plan.legs.map((l) => l.instances.length))
  const attemptsPerTrial = 1 + m.retries.max
  const backoff = m.retries.max > 0 ? m.retries.backoff_s * (2 ** m.retries.max - 1) : 0
  const perTrial = attemptsPerTrial * (m.budgets.timeout_s + m.benchmark.verifier.timeout_s) + backoff
  const seconds = longest * plan.trials * perTrial
  return Math.min(HOSTED_JOB_LIMIT_MINUTES, Math.ceil(seconds / 60) + SETUP_MARGIN_MINUTES)
}
