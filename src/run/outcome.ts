import type { ExitClass, Outcome } from '../records/attempt.js'
import type { LedgerRow } from '../records/ledger.js'

/** The verifier's verdict as the attempt record keeps it. */
export type VerifierStatus = 'pass' | 'fail' | 'error' | 'timeout' | 'skipped'

/** What is known about the harness's run when its exit class is decided. */
export interface ExitFacts {
  /** The attempt failed on our side before or around the harness (workspace, install, capture, spawn). */
  infraError: string | null
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  /** The adapter's reading: the harness failed before doing any work. */
  startupError: string | null
  /** The telemetry summary says the proxy refused requests for budget. */
  budgetExceeded: boolean
  /** The harness stopped itself on its own budget (adapter's reading), with its reason. */
  harnessBudgetStop?: string | null
  /** The attempt's ledger rows (failed upstream requests are read from them). */
  rows: readonly LedgerRow[]
  /** The deliverable's size in bytes. */
  deliverableBytes: number
}

export interface ExitDecision {
  class: ExitClass
  reason: string | null
}

/**
 * Ledger error classes that mean the model route failed, not the harness: the budget was exhausted,
 * the key was refused, or the upstream did not answer usefully.
 */
export function upstreamFailureClass(row: LedgerRow): string | null {
  if (row.status !== 'failure') return null
  const cls = row.error?.class ?? ''
  if (cls === 'budget_exceeded') return 'budget_exceeded'
  if (
    /auth|unauthori[sz]ed|forbidden|invalid_api_key/i.test(cls) ||
    row.http_status === 401 ||
    row.http_status === 403
  ) {
    return 'auth_failed'
  }
  if (/unreachable|upstream_5xx|rate_limited|overloaded/.test(cls)) return cls
  if (row.http_status !== null && (row.http_status >= 500 || row.http_status === 429))
    return cls || `http_${row.http_status}`
  return null
}

/**
 * The exit class of an attempt (pure):
 * - `infra` when our side failed (workspace, install, capture, spawn), or when the harness ended
 *   non-clean with an empty deliverable because the route failed: auth refused, or its last request
 *   failed upstream (5xx, 429, unreachable) — field case F06;
 * - `budget` when the proxy refused requests for budget (whatever the harness's own exit code said:
 *   a harness may take the refusal for success, F06);
 * - `timeout` when the wall-clock limit killed it;
 * - `error` when it exited non-zero, was killed by a signal, or reported a startup error;
 * - `clean` otherwise.
 */
export function classifyExit(f: ExitFacts): ExitDecision {
  if (f.infraError) return { class: 'infra', reason: f.infraError }
  if (f.budgetExceeded) return { class: 'budget', reason: 'budget_exceeded' }
  if (f.harnessBudgetStop) return { class: 'budget', reason: f.harnessBudgetStop }
  const nonClean = f.timedOut || f.exitCode !== 0 || f.signal !== null || f.startupError !== null
  if (nonClean && f.deliverableBytes === 0) {
    const route = routeFailure(f.rows)
    if (route) return { class: 'infra', reason: route }
  }
  if (f.timedOut) return { class: 'timeout', reason: 'wall-clock limit reached' }
  if (f.startupError) return { class: 'error', reason: `startup: ${f.startupError}` }
  if (f.signal) return { class: 'error', reason: `ended by ${f.signal}` }
  if (f.exitCode !== 0) return { class: 'error', reason: `exit code ${f.exitCode}` }
  return { class: 'clean', reason: null }
}

/** auth_failed when any request was refused for its key; else the class of a failed last request. */
function routeFailure(rows: readonly LedgerRow[]): string | null {
  if (rows.some((r) => upstreamFailureClass(r) === 'auth_failed')) return 'auth_failed'
  const last = rows.at(-1)
  return last ? upstreamFailureClass(last) : null
}

export interface OutcomeFacts {
  exit: ExitDecision
  verifier: VerifierStatus
  deliverableBytes: number
}

export interface OutcomeDecision {
  outcome: Outcome
  /** Why the outcome is infra_error or ungraded; null for graded outcomes. */
  reason: string | null
}

/**
 * The attempt's outcome (pure):
 * - `infra_error` when our side failed (exit class infra, except a verifier crash, which is
 *   `ungraded`), and when a budget stop left an empty deliverable — never `unresolved` (F06);
 * - `ungraded` when the verifier errored, timed out or was skipped;
 * - otherwise the verifier's verdict: pass → `resolved`, fail → `unresolved`. The verdict stands even
 *   when the harness timed out or hit its budget after producing work.
 */
export function decideOutcome(f: OutcomeFacts): OutcomeDecision {
  if (f.exit.class === 'infra' && !f.exit.reason?.startsWith('verifier')) {
    return { outcome: 'infra_error', reason: f.exit.reason ?? 'infra' }
  }
  // Only the proxy's refusal hides the task from the harness; a harness that stopped on its own budget
  // is graded on what it left.
  if (f.exit.class === 'budget' && f.exit.reason === 'budget_exceeded' && f.deliverableBytes === 0) {
    return { outcome: 'infra_error', reason: 'budget_exceeded' }
  }
  if (f.verifier === 'error' || f.verifier === 'timeout' || f.verifier === 'skipped') {
    return { outcome: 'ungraded', reason: `verifier ${f.verifier}` }
  }
  return { outcome: f.verifier === 'pass' ? 'resolved' : 'unresolved', reason: null }
}

/**
 * Whether a finished attempt is retried: its exit class is one the manifest names in `retries.on` and
 * fewer than `retries.max` retries were made for this (instance, trial). A verifier crash counts as
 * `infra`. Pure.
 */
export function shouldRetry(
  exitClass: ExitClass,
  retriesMade: number,
  retries: { max: number; on: readonly ExitClass[] },
): boolean {
  return retriesMade < retries.max && retries.on.includes(exitClass)
}

/** Seconds to wait before retry number `n` (1-based): backoff_s × 2^(n−1). */
export function backoffSeconds(n: number, backoffS: number): number {
  return backoffS * 2 ** Math.max(0, n - 1)
}
