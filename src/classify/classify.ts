import type { AttemptRecord } from '../run/records.js'
import {
  type AnomalyKind,
  type AttemptClass,
  CLASS_GROUP,
  isAgentOutcome,
  type LedgerFigures,
  type OutcomeClass,
} from './classes.js'
import type { LedgerCheck } from './ledger-check.js'

/**
 * The classifier: every attempt gets a failure class with a reason before any comparison. Pure.
 *
 * Outcome class, first rule that applies:
 *  1. **contradictory** — the verifier's verdict and the recorded outcome disagree (verifier pass or
 *     reward 1 with outcome unresolved; verifier fail or reward below 1 with outcome resolved): an
 *     input error named with file:line; the row is not counted.
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

/** One attempt row with where it was read. */
export interface AttemptInput {
  record: AttemptRecord
  file: string
  line: number
  /** Rows ledger.jsonl holds for the attempt, when the ledger was read. */
  ledgerRows: number | null
}

/** Something seen across attempts: an evaluation-health finding, never a harness result. */
export interface ClassFinding {
  code: 'timeouts_clustered' | 'shared_error_signature' | 'telemetry_thin_cell'
  cell: string | null
  message: string
  attempts: number
}

export interface Classification {
  /** By attemptKey(cell, instance, trial, attempt). */
  byKey: Map<string, AttemptClass>
  inputErrors: Array<{ file: string; line: number; message: string }>
  findings: ClassFinding[]
}

/** The key attempts are classified under (the same as compare/artifacts.ts attemptKey). */
export function classKey(a: Pick<AttemptRecord, 'cell_id' | 'instance_id' | 'trial' | 'attempt'>): string {
  return `${a.cell_id}\u0000${a.instance_id}\u0000${a.trial}\u0000${a.attempt}`
}

const QUOTA = /budget|quota|rate.?limit|\b429\b|insufficient_quota|too many requests/i
const AUTH = /auth|unauthori[sz]ed|forbidden|invalid.?api.?key|\b40[13]\b/i
const ROUTE =
  /unknown model|model.?not.?found|no such model|upstream|unreachable|overloaded|\b5\d\d\b|\b404\b|ECONNREFUSED|ENOTFOUND/i

/** Classify every attempt (see the module rules). */
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
    byKey.set(classKey(r), {
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
  // 3. stopped by quota or auth at the end, even after editing files
  if (r.outcome !== 'resolved' && r.exit.class !== 'clean') {
    const last = lastRows(r)
    const end = last.at(-1)
    if (end && end.status === 'failure') {
      const what = `${end.error_class ?? ''} ${end.http_status ?? ''}`
      if (AUTH.test(what))
        return { class: 'auth', reason: `the last model request was refused (${what.trim()})` }
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

function ledgerFigures(r: AttemptRecord): LedgerFigures {
  const c = r.ledger_check
  const t = r.telemetry
  const forwarded = c?.forwarded ?? t.reconciliation?.proxy_requests ?? null
  const rows = c?.rows ?? t.rows
  const dupes = c?.suspected_duplicates ?? null
  return {
    rows,
    spend_usd: c?.raw_spend_usd ?? t.spend_usd,
    dedup_rows: dupes === null ? null : rows - dupes,
    dedup_spend_usd: c?.dedup_spend_usd ?? null,
    forwarded,
  }
}

function telemetryClass(
  r: AttemptRecord,
  l: LedgerFigures,
  ledgerRows: number | null,
  opts: ClassifyOptions,
): { anomaly: AnomalyKind | null; suspect: boolean; reason: string | null } {
  if (l.forwarded !== null && l.rows > l.forwarded) {
    const dupes = l.dedup_rows === null ? 0 : l.rows - l.dedup_rows
    const dedup =
      l.dedup_spend_usd !== null
        ? `; de-duplicated ${l.dedup_rows} rows, $${fmtUsd(l.dedup_spend_usd)} (raw $${fmtUsd(l.spend_usd ?? 0)})`
        : ''
    return dupes > 0
      ? {
          anomaly: 'suspected_duplicate_logging',
          suspect: false,
          reason: `the ledger holds ${l.rows} rows, the proxy forwarded ${l.forwarded}: ${dupes} suspected duplicate row(s)${dedup}`,
        }
      : {
          anomaly: 'rows_above_forwarded',
          suspect: false,
          reason: `the ledger holds ${l.rows} rows, the proxy forwarded ${l.forwarded}; no duplicate found to explain them`,
        }
  }
  if (l.forwarded !== null && l.rows < l.forwarded) {
    return {
      anomaly: 'rows_lost',
      suspect: false,
      reason: `the ledger holds ${l.rows} of the ${l.forwarded} requests the proxy forwarded (rows lost)`,
    }
  }
  if (ledgerRows !== null && ledgerRows > r.telemetry.rows) {
    return {
      anomaly: 'rows_above_forwarded',
      suspect: false,
      reason: `ledger.jsonl holds ${ledgerRows} rows for the attempt, its summary counted ${r.telemetry.rows}`,
    }
  }
  const worked =
    (r.self_report?.requests ?? 0) > 0 || (r.self_report?.turns ?? 0) > 0 || r.deliverable.bytes > 0
  if (l.rows === 0 && worked && r.exit.class !== 'infra') {
    return {
      anomaly: 'bypass',
      suspect: false,
      reason: `no model request reached the proxy although the harness worked (${r.deliverable.bytes} bytes delivered${r.self_report?.turns ? `, ${r.self_report.turns} turns reported` : ''}): proxy bypass suspected`,
    }
  }
  const own = r.self_report?.requests ?? r.self_report?.turns ?? null
  if (own !== null && own > 0 && l.rows > 0 && l.rows < opts.minShare * own) {
    const what = r.self_report?.requests != null ? 'requests' : 'turns'
    return {
      anomaly: 'thin_vs_self_report',
      suspect: true,
      reason: `${l.rows} ledger rows against ${own} ${what} the harness reported (below ${opts.minShare} of its own count)`,
    }
  }
  return { anomaly: null, suspect: false, reason: null }
}

/**
 * Rows per attempt of each cell against the other cells on the same instances: a cell whose median
 * share is below `minShare` has implausibly thin telemetry (a client that partly bypasses the proxy).
 */
function thinCells(
  attempts: readonly AttemptInput[],
  byKey: Map<string, AttemptClass>,
  opts: ClassifyOptions,
  findings: ClassFinding[],
): void {
  // rows of final attempts per instance per cell
  const rows = new Map<string, Map<string, number>>()
  for (const a of attempts) {
    const r = a.record
    if (!r.final) continue
    const c = byKey.get(classKey(r))
    if (c?.telemetry_class !== 'ok' || c.group === 'infrastructure' || c.ledger.rows === 0) continue
    let m = rows.get(r.instance_id)
    if (!m) {
      m = new Map()
      rows.set(r.instance_id, m)
    }
    m.set(r.cell_id, (m.get(r.cell_id) ?? 0) + c.ledger.rows)
  }
  const cells = [...new Set(attempts.map((a) => a.record.cell_id))].sort()
  if (cells.length < 2) return
  for (const cell of cells) {
    const shares: number[] = []
    for (const m of rows.values()) {
      const mine = m.get(cell)
      const others = [...m].filter(([c]) => c !== cell).map(([, n]) => n)
      if (mine === undefined || others.length === 0) continue
      shares.push(mine / median(others))
    }
    if (shares.length === 0) continue
    const share = median(shares)
    if (share >= opts.minShare) continue
    let n = 0
    for (const a of attempts) {
      if (a.record.cell_id !== cell) continue
      const c = byKey.get(classKey(a.record))
      if (c?.telemetry_class !== 'ok') continue
      c.telemetry_class = 'telemetry_suspect'
      c.anomaly = 'thin_vs_cells'
      c.telemetry_reason = `cell ${cell} logs a median ${fmtShare(share)} of the other cells' rows per instance (threshold ${opts.minShare}): part of its traffic may bypass the proxy`
      n++
    }
    findings.push({
      code: 'telemetry_thin_cell',
      cell,
      message: `cell ${cell} logs a median ${fmtShare(share)} of the other cells' ledger rows on the same instances (threshold ${opts.minShare}): its resource figures are not used`,
      attempts: n,
    })
  }
}

/**
 * Timeouts that cluster at one wall-clock value (within 2% or 1 s): at least 3 timed-out attempts and
 * at least half of them at that value — a configuration cap, not agent behaviour.
 */
function clusteredTimeouts(attempts: readonly AttemptInput[], opts: ClassifyOptions): ClassFinding[] {
  const secs = attempts
    .filter((a) => a.record.timed_out)
    .map((a) => a.record.phases_ms.harness / 1000)
    .sort((x, y) => x - y)
  if (secs.length < 3) return []
  let best = 0
  let at = 0
  // secs is sorted: the values within tolerance of secs[i] are a contiguous run (binary searches).
  const firstAtLeast = (x: number): number => {
    let lo = 0
    let hi = secs.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (secs[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  for (let i = 0; i < secs.length; i++) {
    const tol = Math.max(1, secs[i]! * 0.02)
    const n = firstAtLeast(secs[i]! + tol + 1e-9) - firstAtLeast(secs[i]! - tol)
    if (n > best) {
      best = n
      at = secs[i]!
    }
  }
  if (best < 3 || best * 2 < secs.length) return []
  const below =
    opts.timeoutS !== null && at < opts.timeoutS * 0.95
      ? `, below the manifest's ${opts.timeoutS} s: another limit (runner, job or sandbox) stopped them`
      : ''
  return [
    {
      code: 'timeouts_clustered',
      cell: null,
      message: `${best} of ${secs.length} timeouts ended at ~${fmtS(at)} s${below}; a configuration cap, not agent behaviour`,
      attempts: best,
    },
  ]
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

function fmtS(s: number): string {
  return s >= 10 ? s.toFixed(0) : s.toFixed(1)
}

function fmtUsd(x: number): string {
  return x.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')
}

function fmtShare(x: number): string {
  return `${(x * 100).toFixed(0)}%`
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
  if (record.exit.class === 'timeout' || record.exit.class === 'infra') return record.exit.class
  const c = classifyAttempts([{ record, file: '', line: 0, ledgerRows: null }], opts).byKey.get(
    classKey(record),
  )
  return c?.group === 'infrastructure' ? 'infra' : record.exit.class
}
