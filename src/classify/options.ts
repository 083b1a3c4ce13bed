import type { Manifest } from '../manifest/schema.js'
import { type ClassifyOptions, DEFAULT_CLASSIFY } from './classify.js'

/** Whether the manifest declares per-attempt spend or request limits (a budget stop is then the agent's). */
export function declaredLimits(manifest: Manifest | null): boolean {
  return (
    manifest !== null &&
    (manifest.budgets.max_spend_usd !== undefined || manifest.budgets.max_requests !== undefined)
  )
}

/** The classifier's options from a manifest's `classification` section (defaults without a manifest). */
export function classifyOptions(manifest: Manifest | null, declaredLimits: boolean): ClassifyOptions {
  const c = manifest?.classification
  return {
    timeoutPolicy: c?.timeout_policy ?? DEFAULT_CLASSIFY.timeoutPolicy,
    startupMaxS: c?.startup_max_s ?? DEFAULT_CLASSIFY.startupMaxS,
    minShare: c?.min_telemetry_share ?? DEFAULT_CLASSIFY.minShare,
    keepSuspectOutcome: c?.keep_suspect_outcomes ?? DEFAULT_CLASSIFY.keepSuspectOutcome,
    declaredLimits,
    timeoutS: manifest?.budgets.timeout_s ?? null,
  }
}
