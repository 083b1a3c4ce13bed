import { canonicalJson, sha256 } from '../util/json.js'

/** sha256 of a plan's canonical JSON: the run identity a leg records as `plan_sha256`, the same wherever the plan is read. */
export function planIdentity(plan: unknown): string {
  return sha256(canonicalJson(plan))
}
