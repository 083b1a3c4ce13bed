import type { Manifest } from '../manifest/schema.js'

/** How the classifier reads a run (from the manifest's `classification` section and budgets). */
export interface ClassifyOptions {
  timeoutPolicy: TimeoutPolicy
  /** A pre-agent failure lasts at most this long (harness seconds) unless its signature is shared. */
  startupMaxS: number
  /** Rows below this share of the reference count make telemetry suspect. */
  minShare: number
  /** Keep the outcome of a telemetry-suspect attempt (its resources are dropped either way). */
  keepSuspectOutcome: boolean
  /** Whether the manifest declares per-attempt spend/request limits (a budget stop is then the agent's). */
  declaredLimits: boolean
  /** The manifest's per-attempt timeout (s), named when timeouts cluster below it. */
  timeoutS: number | null
  /** `benchmark.gradeable_without_diff`: a resolved attempt with an empty or test-only diff is not flagged. */
  gradeableWithoutDiff?: boolean
}

export type TimeoutPolicy = 'verifier_decides' | 'infra' | 'failure'

export const DEFAULT_CLASSIFY: ClassifyOptions = {
  timeoutPolicy: 'verifier_decides',
  startupMaxS: 60,
  minShare: 0.25,
  keepSuspectOutcome: true,
  declaredLimits: false,
  timeoutS: null,
}

/** Whether the manifest declares per-attempt spend or request limits (a budget stop is then the agent's). */
export function declaredLimits(manifest: Manifest | null): boolean {
  return (
    manifest !== null &&
    (manifest.budgets.max_spend_usd !== undefined || manifest.budgets.max_requests !== undefined)
  )
}

/** The classifier's options from a manifest's `classification` section (defaults without a manifest). */
export function classifyOptions(manifest: Manifest | null, limits: boolean): ClassifyOptions {
  const c = manifest?.classification
  return {
    timeoutPolicy: c?.timeout_policy ?? DEFAULT_CLASSIFY.timeoutPolicy,
    startupMaxS: c?.startup_max_s ?? DEFAULT_CLASSIFY.startupMaxS,
    minShare: c?.min_telemetry_share ?? DEFAULT_CLASSIFY.minShare,
    keepSuspectOutcome: c?.keep_suspect_outcomes ?? DEFAULT_CLASSIFY.keepSuspectOutcome,
    declaredLimits: limits,
    timeoutS: manifest?.budgets.timeout_s ?? null,
    gradeableWithoutDiff: manifest?.benchmark.gradeable_without_diff ?? false,
  }
}
