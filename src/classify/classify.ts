import type { AttemptRecord } from '../records/attempt.js'
import type { LedgerCheck } from '../records/ledger-check.js'
import {
  type AttemptClass,
  type AttemptInput,
  CLASS_GROUP,
  type ClassFinding,
  type Classification,
  classKey,
  isAgentOutcome,
  type OutcomeClass,
} from './classes.js'
import { type ClassifyOptions, DEFAULT_CLASSIFY } from './options.js'
import { ledgerFigures, telemetryClass, thinCells } from './telemetry.js'
import { clusteredTimeouts } from './timeouts.js'

/**
 * The classifier: every attempt gets a failure class with a reason before any comparison. Pure.
 *
 * Outcome class, first rule that applies:
 *  1. **contradictory** — the verifier's verdict and the recorded outcome disagree (verifier pass or
 *     reward 1 with outcome unresolved; verifier fail or reward below 1 with outcome resolved): an
 *     input error named with file:line; the row is not counted.
 *     **contradictory** too: a resolved verdict on an empty or test-only diff, unless the benchmark
 *     declares `gradeable_without_diff` (or the task is graded on tool calls, a bridge task).
 *  2. **infrastructure from the exit** — exit class `infra`: `auth` (key refused), `quota` (budget
 *     exhausted, rate limited), `route` (upstream 5xx, unreachable, unknown model), `grader_error`
 *     (the verifier crashed), `harness_startup` (the harness could not be prepared or spawned), else
 *     `sandbox` (workspace, install, capture). A budget refusal with no per-attempt limit declared
 *     is the proxy key's budget: `quota`.
 *  3. **quota/auth at the end** — the attempt did not resolve, ended non-clean, and its last ledger
 *     rows failed for quota (budget, 429, rate limit) or auth: infrastructure even when the agent had
 *     already edited files (it was stopped, it did not fail).
 *  4. **pre-agent failure** — no inference request reached the proxy, the exit was not clean and
 *     nothing was delivered, and either the harness ran no longer than `startupMaxS` or its error
 *     signature (exit class, code and reason) is shared with another such attempt: `auth`, `quota` or
 *     `route` when the signature says so, else `harness_startup`.
 *  5. **timeout** — the harness hit its wall-clock limit: `timeoutPolicy` decides —
 *     `verifier_decides` (a completed verdict stands, the row keeps timed_out: true),
 *     `infra` (class `timeout`, never a loss), `failure` (unresolved).
 *  6. **grading** — verifier `error` → `grader_error`; `timeout` or `skipped` → `ungraded`. There is
 *     no fallback to the harness's exit code.
 *  7. otherwise the verifier's verdict: `resolved` / `unresolved`.
 *
 * Telemetry class (agent outcomes and infrastructure alike; any class other than `ok` keeps the
 * attempt out of every resource metric, and no resource alarm is raised on it):
 *  - **telemetry_anomaly** when the ledger and the front proxy disagree: more rows than forwarded
 *    (`suspected_duplicate_logging` when duplicate rows were found, else `rows_above_forwarded`),
 *    fewer (`rows_lost`), or none while the harness worked (`bypass`);
 *  - **telemetry_suspect** when the rows are implausibly few: below `minShare` of the harness's own
 *    request (or turn) count (`thin_vs_self_report`), or the cell's rows per attempt are below
 *    `minShare` of the other cells' on the same instances (median over instances, `thin_vs_cells`).
 *    Unless `keepSuspectOutcome`, the outcome of such an attempt is not counted either
 *    (class `telemetry_suspect`).
 * Usage cut off mid-answer (`usage_partial`) is marked `partial_usage`: shown, never summed into cost.
 */
export function classifyAttempts(
  attempts: readonly AttemptInput[],
  opts: ClassifyOptions = DEFAULT_CLASSIFY,
): Classification {
  const inputErrors: Classification['inputErrors'] = []
  const findings: ClassFinding[] = []
  const byKey = new Map<string, AttemptClass>()

  // Evidence across attempts: how many pre-agent failures share each error signature.
  const signatures = new Map<string, number>()
  for (const a of attempts) {
    if (preAgent(a.record)) {
      const s = signature(a.record)
      signatures.set(s, (signatures.get(s) ?? 0) + 1)
    }
  }
  for (const [s, n] of signatures) {
    if (n >= 2) {
      findings.push({
        code: 'shared_error_signature',
        cell: null,
        message: `${n} attempts failed before any model request with one error signature (${s}): infrastructure, not harness results`,
        attempts: n,
      })
    }
  }

  for (const a of attempts) {
    const r = a.record
    const outcome = outcomeClass(a, opts, signatures)
    if (outcome.class === 'contradictory') {
      inputErrors.push({ file: a.file, line: a.line, message: `contradictory row: ${outcome.reason}` })
    }
    const ledger = ledgerFigures(r)
    const tel = telemetryClass(r, ledger, a.ledgerRows, opts)
    byKey.set(a.key ?? classKey(r), {
      outcome_class: outcome.class,
      group: CLASS_GROUP[outcome.class],
      reason: outcome.reason,
      telemetry_class: tel.anomaly === null ? 'ok' : tel.suspect ? 'telemetry_suspect' : 'telemetry_anomaly',
      anomaly: tel.anomaly,
      telemetry_reason: tel.reason,
      partial_usage: r.telemetry.flags.includes('usage_partial'),
      ledger,
    })
  }

  thinCells(attempts, byKey, opts, findings)
  if (!opts.keepSuspectOutcome) {
    for (const c of byKey.values()) {
      if (c.telemetry_class === 'telemetry_suspect' && isAgentOutcome(c.outcome_class)) {
        c.reason = `${c.outcome_class} not counted: ${c.telemetry_reason} (classification.keep_suspect_outcomes is false)`
        c.outcome_class = 'telemetry_suspect'
        c.group = CLASS_GROUP.telemetry_suspect
      }
    }
  }
  findings.push(...clusteredTimeouts(attempts, opts))
  return { byKey, inputErrors, findings }
}

function outcomeClass(
  a: AttemptInput,
  opts: ClassifyOptions,
  signatures: Map<string, number>,
): { class: OutcomeClass; reason: string } {
  const r = a.record
  const v = r.verifier
  const exitReason = r.exit.reason ?? ''
  // 1. contradictions between the verifier's verdict and the outcome
  if (r.outcome === 'unresolved' && (v.status === 'pass' || v.reward === 1)) {
    return {
      class: 'contradictory',
      reason: `verifier ${v.status}${v.reward !== null ? ` (reward ${v.reward})` : ''} but outcome unresolved`,
    }
  }
  if (r.outcome === 'resolved' && (v.status === 'fail' || (v.reward !== null && v.reward < 1))) {
    return {
      class: 'contradictory',
      reason: `verifier ${v.status}${v.reward !== null ? ` (reward ${v.reward})` : ''} but outcome resolved`,
    }
  }
  // 1b. a resolved verdict on nothing delivered: the grader did not grade a change
  if (r.outcome === 'resolved' && !opts.gradeableWithoutDiff && r.tools === undefined) {
    if (r.deliverable.bytes === 0)
      return {
        class: 'contradictory',
        reason: `verifier ${v.status} but the diff is empty: a resolved verdict on an empty deliverable (declare benchmark.gradeable_without_diff if tasks can be solved without a change)`,
      }
    if (r.deliverable.test_only === true)
      return {
        class: 'contradictory',
        reason: `verifier ${v.status} but the diff changes only test files (${r.deliverable.files_changed}): suspect, the fix itself is absent (declare benchmark.gradeable_without_diff if that is expected)`,
      }
  }
  // 2. infrastructure named by the exit
  if (r.exit.class === 'infra') {
    const why =
      r.outcome_reason && r.outcome_reason !== exitReason ? `${r.outcome_reason}: ${exitReason}` : exitReason
    if (/^verifier/.test(exitReason)) return { class: 'grader_error', reason: why }
    if (AUTH.test(why)) return { class: 'auth', reason: why }
    if (QUOTA.test(why)) return { class: 'quota', reason: why }
    if (/harness could not be started|harness preparation failed/.test(why))
      return { class: 'harness_startup', reason: why }
    if (ROUTE.test(why)) return { class: 'route', reason: why }
    return { class: 'sandbox', reason: why || 'infrastructure failure on our side' }
  }
  if (r.outcome === 'infra_error') {
    const why = r.outcome_reason ?? exitReason
    if (QUOTA.test(why)) return { class: 'quota', reason: why }
    if (AUTH.test(why)) return { class: 'auth', reason: why }
    return { class: 'sandbox', reason: why || 'infra_error' }
  }
  const budgetStop = r.exit.class === 'budget' || r.telemetry.budget_exceeded
  if (r.outcome !== 'resolved' && budgetStop && !opts.declaredLimits) {
    return {
      class: 'quota',
      reason:
        'budget_exceeded at the proxy with no per-attempt limit declared: the key budget ran out (infrastructure, not a loss)',
    }
  }
  // 3. stopped by quota or auth at the end, even after editing files; a harness that swallowed the
  // gateway's refusal of its request and exited clean was stopped all the same.
  const refused = r.telemetry.flags.some((f) => f.startsWith('gateway_refused_'))
  if (r.outcome !== 'resolved' && (r.exit.class !== 'clean' || refused)) {
    const last = lastRows(r)
    const end = last.at(-1)
    if (end && end.status === 'failure') {
      const what = `${end.error_class ?? ''} ${end.http_status ?? ''}`
      const by = refused ? ' by the gateway' : ''
      if (AUTH.test(what))
        return { class: 'auth', reason: `the last model request was refused${by} (${what.trim()})` }
      // A rate limit is never the attempt's own budget: infrastructure whatever limits are declared.
      if (RATE.test(what))
        return {
          class: 'quota',
          reason: `stopped by a rate limit${by} (last request: ${what.trim()}) after ${r.deliverable.bytes} bytes of work: not the agent's failure`,
        }
      if (QUOTA.test(what) && !opts.declaredLimits)
        return {
          class: 'quota',
          reason: `stopped by the provider's quota or rate limit (last request: ${what.trim()}) after ${r.deliverable.bytes} bytes of work: not the agent's failure`,
        }
    }
  }
  // 4. failed before the agent started
  if (preAgent(r)) {
    const sig = signature(r)
    const shared = signatures.get(sig) ?? 0
    const seconds = r.phases_ms.harness / 1000
    if (seconds <= opts.startupMaxS || shared >= 2) {
      const evidence = `no model request, exit ${r.exit.class}${r.exit.code !== null ? ` ${r.exit.code}` : ''}, ${fmtS(seconds)} s${shared >= 2 ? `, signature shared by ${shared} attempts` : ''}`
      const text = `${exitReason} ${r.outcome_reason ?? ''}`
      const cls: OutcomeClass = AUTH.test(text)
        ? 'auth'
        : QUOTA.test(text)
          ? 'quota'
          : /unknown model|model.?not.?found|no such model/i.test(text)
            ? 'route'
            : 'harness_startup'
      return {
        class: cls,
        reason: `failed before the agent started (${evidence}): ${exitReason || 'no reason given'}`,
      }
    }
  }
  // 5. timeouts by the manifest's policy
  if (r.timed_out && opts.timeoutPolicy !== 'verifier_decides') {
    return opts.timeoutPolicy === 'infra'
      ? { class: 'timeout', reason: 'wall-clock limit reached (timeout_policy: infra)' }
      : { class: 'unresolved', reason: 'wall-clock limit reached (timeout_policy: failure)' }
  }
  // 6. the verifier decides or the attempt is ungraded
  if (v.status === 'error' || r.outcome === 'ungraded') {
    if (v.status === 'error')
      return { class: 'grader_error', reason: r.outcome_reason ?? 'the verifier crashed' }
    return { class: 'ungraded', reason: r.outcome_reason ?? `verifier ${v.status}` }
  }
  if (v.status === 'timeout' || v.status === 'skipped')
    return { class: 'ungraded', reason: `verifier ${v.status}` }
  // 7. the verdict
  const timed = r.timed_out ? ' (timed out; the completed verifier decides)' : ''
  return r.outcome === 'resolved'
    ? { class: 'resolved', reason: `verifier ${v.status}${timed}` }
    : { class: 'unresolved', reason: `verifier ${v.status}${timed}` }
}

/** No inference request, a non-clean exit, nothing delivered, not resolved. */
function preAgent(r: AttemptRecord): boolean {
  const requests = r.ledger_check?.rows ?? r.telemetry.proxy_requests ?? r.telemetry.rows
  return requests === 0 && r.exit.class !== 'clean' && r.deliverable.bytes === 0 && r.outcome !== 'resolved'
}

/** Exit class, code, and the reason with numbers and paths blanked (so one cause reads as one signature). */
function signature(r: AttemptRecord): string {
  const reason = (r.exit.reason ?? r.outcome_reason ?? '')
    .replace(/\/[\w./-]+/g, '<path>')
    .replace(/\d+(\.\d+)?/g, 'N')
    .slice(0, 120)
  return `${r.exit.class}/${r.exit.code ?? r.exit.signal ?? '-'}: ${reason || 'no reason'}`
}

function lastRows(r: AttemptRecord): LedgerCheck['last'] {
  return r.ledger_check?.last ?? []
}

const RATE = /rate.?limit|\b429\b|too many requests/i
const QUOTA = /budget|quota|rate.?limit|\b429\b|insufficient_quota|too many requests/i
const AUTH = /auth|unauthori[sz]ed|forbidden|invalid.?api.?key|\b40[13]\b/i
const ROUTE =
  /unknown model|model.?not.?found|no such model|upstream|unreachable|overloaded|\b5\d\d\b|\b404\b|ECONNREFUSED|ENOTFOUND/i

/** Classify every attempt (see the module rules). */
function fmtS(s: number): string {
  return s >= 10 ? s.toFixed(0) : s.toFixed(1)
}

/**
 * The exit class the retry policy (`retries.on`) reads for one finished attempt: `infra` when the
 * classifier, on this attempt's own evidence, puts it in the infrastructure group (a startup, auth,
 * quota or route failure the harness's exit code called `error`), else its recorded exit class. Pure.
 */
export function retryExitClass(
  record: AttemptRecord,
  opts: ClassifyOptions = DEFAULT_CLASSIFY,
): AttemptRecord['exit']['class'] {
  // Classes the policy names itself (a wall-clock limit, a budget stop, our own failure) stay as recorded.
  if (record.exit.class !== 'error' && record.exit.class !== 'clean') return record.exit.class
  const c = classifyAttempts([{ record, file: '', line: 0, ledgerRows: null }], opts).byKey.get(
    classKey(record),
  )
  return c?.group === 'infrastructure' ? 'infra' : record.exit.class
}
