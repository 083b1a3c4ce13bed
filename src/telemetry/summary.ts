import type { SelfReport } from '../records/attempt.js'
import type { Coverage, LedgerRow, TelemetrySummary, Tokens } from '../records/ledger.js'
import { MAX_LEDGER_TOKENS, MAX_LEDGER_USD } from '../records/limits.js'
import { partSums, roleCounts } from './request-profile.js'

/** Severity order of coverage: a worse one always wins when two findings meet. */
const RANK: Record<Coverage, number> = { complete: 0, unknown: 1, partial: 2, missing: 3 }

/** The worse of two coverages. */
export function worseCoverage(a: Coverage, b: Coverage): Coverage {
  return RANK[a] >= RANK[b] ? a : b
}

/** A coverage finding from outside the rows (e.g. LiteLLM reconciliation, F01 request counts). */
export interface CoverageFinding {
  coverage: Coverage
  reason: string
  flag?: string
}

export interface SummaryContext {
  source: TelemetrySummary['source']
  /** Model id declared in the manifest route; observed models are checked against it. */
  declaredModel: string | null
  findings?: CoverageFinding[]
  /**
   * Inference requests counted independently of the rows: the front recording proxy's forwarded count
   * when spend-log rows come from LiteLLM. Null or absent when there is no such count (the rows are the
   * proxy's own, or no proxy stood in front).
   */
  forwardedRequests?: number | null
}

/** Flag raised when an attempt ran and no inference request reached the measurement plane (F14). */
export const BYPASS_FLAG = 'telemetry_bypass_suspected'

/** Flag raised when the front proxy forwarded requests but the source logged none of them. */
export const ROWS_LOST_FLAG = 'ledger_rows_lost'
/** Flag raised when a sum over an attempt's rows is beyond what an attempt may hold (left null). */
export const SUM_OVERFLOW_FLAG = 'sum_overflow'
/** Flag: some spend was figured (recomputed, a cost breakdown) rather than logged as measured. */
export const SPEND_FIGURED_FLAG = 'spend_figured'
/** Row flag: the answer was cut off mid-way, so its usage is what arrived before the cut. */
export const USAGE_PARTIAL_FLAG = 'usage_partial'

const SNAPSHOT_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|\d{3}|latest|preview(-[\w.-]+)?|exp(-[\w.-]+)?)$/

function bareModel(m: string): string {
  return m
    .trim()
    .toLowerCase()
    .replace(/^models\//, '')
    .replace(/^[a-z0-9_.-]+\//, '')
}

/**
 * Does the model named by the upstream match the declared one? Equal after dropping a provider prefix
 * (`openai/`, `models/`), or the declared id plus a snapshot suffix (`-2025-08-07`, `-20250929`,
 * `-latest`, `-preview-…`): upstreams answer with dated snapshots of an alias.
 */
export function modelMatches(declared: string, observed: string): boolean {
  const d = bareModel(declared)
  const o = bareModel(observed)
  if (d === o) return true
  return o.startsWith(d) && SNAPSHOT_SUFFIX.test(o.slice(d.length))
}

/** A row that should carry usage (an answered inference request, or one that may have been billed). */
function expectsUsage(r: LedgerRow): boolean {
  if (r.api === 'other') return false
  return r.status === 'success' || r.spend_usd === null
}

function lacksUsage(r: LedgerRow): boolean {
  return r.tokens.input_total === null || r.tokens.output === null
}

function sumTokens(rows: LedgerRow[], field: keyof Tokens): number | null {
  let total: number | null = null
  for (const r of rows) {
    const v = r.tokens[field]
    if (v !== null) total = (total ?? 0) + v
    else if (!expectsUsage(r)) total ??= 0
  }
  return total
}

/**
 * Summarise one attempt's ledger rows (pure). Coverage, worst finding first:
 * - `missing`: the attempt has no inference row at all; every total is null (missing is never zero).
 *   When the front proxy forwarded requests (`forwardedRequests` > 0) the rows were lost or not yet
 *   written: flag `ledger_rows_lost`, and `proxy_requests` keeps the forwarded count. Otherwise nothing
 *   reached the measurement plane — possible proxy bypass (F14), flag `telemetry_bypass_suspected`;
 * - `partial`: some answered requests carried no usage, or were cut off mid-answer after part of it
 *   (flag `usage_partial`: totals are lower bounds), or a finding says so;
 * - `unknown`: the cache semantics of the route are unknown, so fresh-input and cache totals are null;
 * - `complete` otherwise.
 * `spend_usd` is null when any row is unpriced. `aux_requests` counts requests sent without tools
 * (title/summary calls); `first_request_*` describe the first request that carries tools (the agent's
 * opening prompt), falling back to the first request when none does. `model_mismatch` compares every observed model with the declared one.
 * `proxy_requests` is the larger of the inference rows and `forwardedRequests` (the proxy's count is
 * the request measure even where rows are lost, F01).
 */
export function summarizeAttempt(rows: readonly LedgerRow[], ctx: SummaryContext): TelemetrySummary {
  const inference = rows.filter((r) => r.api !== 'other')
  const flags = new Set<string>()
  for (const r of rows) for (const f of r.flags) flags.add(f)
  const reasons: string[] = []
  let coverage: Coverage = 'complete'
  const note = (c: Coverage, reason: string, flag?: string): void => {
    coverage = worseCoverage(coverage, c)
    reasons.push(reason)
    if (flag) flags.add(flag)
  }

  const budgetExceeded = rows.some((r) => r.error?.class === 'budget_exceeded')
  if (budgetExceeded) flags.add('budget_exceeded')
  const modelsObserved = [
    ...new Set(rows.map((r) => r.model_observed).filter((m): m is string => !!m)),
  ].sort()
  const mismatch =
    ctx.declaredModel !== null && modelsObserved.some((m) => !modelMatches(ctx.declaredModel as string, m))
  if (mismatch) {
    flags.add('model_mismatch')
  }

  const forwarded = ctx.forwardedRequests ?? null
  // A finding that already makes the attempt missing (e.g. the source could not be read) explains the
  // absence of rows: it is neither a bypass nor lost rows.
  const explained = (ctx.findings ?? []).some((f) => f.coverage === 'missing')
  if (inference.length === 0 && !explained) {
    if (forwarded !== null && forwarded > 0) {
      note(
        'missing',
        `${sourceName(ctx.source)} logged 0 of the ${forwarded} request${forwarded === 1 ? '' : 's'} the proxy forwarded (spend logs lost or not yet written)`,
        ROWS_LOST_FLAG,
      )
    } else {
      note(
        'missing',
        rows.length === 0
          ? 'no model request was recorded for this attempt: possible proxy bypass (stored credentials or a base URL the harness ignored)'
          : `only ${rows.length} non-inference request(s) were recorded: possible proxy bypass`,
        BYPASS_FLAG,
      )
    }
  } else if (inference.length > 0) {
    const expecting = inference.filter(expectsUsage)
    const lacking = expecting.filter(lacksUsage)
    if (lacking.length > 0) {
      note(
        'partial',
        `${lacking.length} of ${expecting.length} requests carried no usage: token totals are lower bounds`,
        'usage_absent',
      )
    }
    const cut = inference.filter((r) => r.flags.includes(USAGE_PARTIAL_FLAG) && !lacksUsage(r))
    if (cut.length > 0) {
      note(
        'partial',
        `${cut.length} request${cut.length === 1 ? ' was' : 's were'} cut off mid-answer with usage counted so far: token totals are lower bounds`,
      )
    }
    const unknownCache = inference.some(
      (r) => r.cache_semantics === 'unknown' && r.tokens.input_total !== null,
    )
    if (unknownCache) {
      note('unknown', 'cache semantics of the route are unknown: fresh-input and cache totals are not stated')
    }
  }
  // Spend the source did not log as measured (absent or 0 beside tokens, or disagreeing with the
  // tokens at the route's prices) is figured, not measured: partial, with how it was figured.
  const figured = rows.filter(
    (r) => r.flags.includes('logged_spend_zero') || r.flags.includes('spend_mismatch'),
  )
  if (figured.length > 0) {
    const zero = figured.filter((r) => r.flags.includes('logged_spend_zero')).length
    const bySource = (s: LedgerRow['spend_source']) => figured.filter((r) => r.spend_source === s).length
    const how = [
      bySource('recomputed') ? `${bySource('recomputed')} recomputed from tokens at the route's prices` : '',
      bySource('cost_breakdown') ? `${bySource('cost_breakdown')} from the gateway's cost breakdown` : '',
      bySource('unpriced') ? `${bySource('unpriced')} unpriced (no price for the route)` : '',
    ].filter(Boolean)
    note(
      'partial',
      `spend of ${figured.length} request${figured.length === 1 ? '' : 's'} was not logged as measured (${zero} without a logged spend beside tokens, ${figured.length - zero} disagreeing with their tokens at the route's prices): ${how.join(', ')}; no ratio is stated on it as measured`,
      SPEND_FIGURED_FLAG,
    )
  }
  for (const f of ctx.findings ?? []) note(f.coverage, f.reason, f.flag)
  if (mismatch) {
    reasons.push(
      `model observed (${modelsObserved.join(', ')}) differs from the declared ${ctx.declaredModel}`,
    )
  }

  const missing = (coverage as Coverage) === 'missing'
  const cacheKnown = !inference.some((r) => r.cache_semantics === 'unknown' && r.tokens.input_total !== null)
  // A sum beyond what an attempt may hold is not stated: null, with the rows that made it.
  const overflow = (what: string, limit: string, culprits: readonly LedgerRow[]): null => {
    const top = [...culprits].slice(0, 3).map((r) => r.request_id)
    note(
      'partial',
      `the ${what} of ${culprits.length} request(s) exceeds ${limit} (largest: ${top.join(', ')}): the total is not stated`,
      SUM_OVERFLOW_FLAG,
    )
    return null
  }
  const total = (f: keyof Tokens): number | null => {
    if (missing) return null
    const t = sumTokens(inference, f)
    if (t === null || t <= MAX_LEDGER_TOKENS) return t
    const by = [...inference].sort((a, b) => (b.tokens[f] ?? 0) - (a.tokens[f] ?? 0))
    return overflow(`${f} tokens`, `${MAX_LEDGER_TOKENS}`, by)
  }
  const cacheTotal = (f: keyof Tokens): number | null => (cacheKnown ? total(f) : null)

  const unpriced = rows.filter((r) => r.spend_usd === null).length
  let spendUsd = missing || unpriced > 0 ? null : round(rows.reduce((s, r) => s + (r.spend_usd ?? 0), 0))
  if (spendUsd !== null && !(spendUsd <= MAX_LEDGER_USD)) {
    const by = [...rows].sort((a, b) => (b.spend_usd ?? 0) - (a.spend_usd ?? 0))
    spendUsd = overflow('spend', `$${MAX_LEDGER_USD}`, by)
  }
  if (unpriced > 0 && !missing) flags.add('unpriced')

  // The first *agent* request (one that carries tools) is the harness's real opening prompt; a
  // title/summary call sent before it (OpenCode) is counted apart as an aux request.
  const ordered = [...inference].sort((a, b) => a.started_at.localeCompare(b.started_at))
  const first = ordered.find((r) => (r.request_shape?.tools ?? 0) > 0) ?? ordered[0]
  const shaped = inference.filter((r) => r.request_shape !== null && r.request_shape.tools !== null)
  // Summed before coverage and reason are read: an overflowing sum adds to them.
  const sums = {
    input_tokens: total('input_total'),
    input_fresh_tokens: cacheTotal('input_fresh'),
    cache_read_tokens: cacheTotal('cache_read'),
    cache_write_tokens: cacheTotal('cache_write'),
    output_tokens: total('output'),
    reasoning_tokens: total('reasoning'),
  }

  return {
    source: ctx.source,
    coverage,
    reason: reasons.length > 0 ? reasons.join('; ') : null,
    rows: rows.length,
    failed_rows: rows.filter((r) => r.status === 'failure').length,
    proxy_requests: requestCount(inference.length, forwarded, missing),
    ...sums,
    spend_usd: spendUsd,
    spend_source: spendSourceOf(rows),
    models_observed: modelsObserved,
    model_mismatch: mismatch,
    first_request_bytes: first?.request_shape?.bytes ?? null,
    first_request_tools: first?.request_shape?.tools ?? null,
    aux_requests: shaped.length === 0 ? null : shaped.filter((r) => r.request_shape?.tools === 0).length,
    budget_exceeded: budgetExceeded,
    flags: [...flags].sort(),
    ...(ctx.source === 'ledger' ? requestProfile(rows, missing) : {}),
    unpriced_rows: unpriced,
    spend_mismatch_rows: rows.filter((r) => r.flags.includes('spend_mismatch')).length,
  }
}

/**
 * Roles and parts of the attempt's requests, when there are rows to describe (absent otherwise, and
 * for spend-log rows: roles are decided at the recording proxy, from the request body).
 */
function requestProfile(
  rows: readonly LedgerRow[],
  missing: boolean,
): Pick<TelemetrySummary, 'request_roles' | 'request_parts'> {
  if (missing || !rows.some((r) => r.api !== 'other')) return {}
  const parts = partSums(rows)
  return parts === null
    ? { request_roles: roleCounts(rows) }
    : { request_roles: roleCounts(rows), request_parts: parts }
}

/** Inference requests: the proxy's forwarded count when known (rows can be lost), else the rows; null when missing with no count. */
function requestCount(rows: number, forwarded: number | null, missing: boolean): number | null {
  if (forwarded !== null && forwarded > 0) return Math.max(rows, forwarded)
  return missing ? null : rows
}

function sourceName(source: TelemetrySummary['source']): string {
  return source === 'litellm' ? 'LiteLLM' : 'the ledger'
}

function round(usd: number): number {
  return Math.round(usd * 1e10) / 1e10
}

/** One source when all priced rows agree, `mixed` otherwise; zero-spend proxy rows (refusals) do not count. */
function spendSourceOf(rows: readonly LedgerRow[]): TelemetrySummary['spend_source'] {
  if (rows.length === 0) return 'none'
  const sources = new Set(rows.map((r) => r.spend_source))
  if (sources.size > 1) sources.delete('proxy')
  if (sources.size === 1) return [...sources][0] as TelemetrySummary['spend_source']
  return 'mixed'
}

/** The outcome of comparing a harness's own usage report with the measured telemetry. */
export interface SelfReportCheck {
  summary: TelemetrySummary
  diverged: boolean
  requests: { telemetry: number; harness: number } | null
  tokens: { telemetry: number; harness: number } | null
}

function beyond(a: number, b: number, factor: number): boolean {
  const lo = Math.min(a, b)
  const hi = Math.max(a, b)
  if (hi === 0) return false
  return lo === 0 || hi / lo > factor
}

/**
 * Cross-check a harness's self-report against the telemetry (pure; the telemetry stays the measure).
 * - The harness reports more requests than the telemetry holds → coverage `partial`, reason
 *   `telemetry coverage <t>/<h>` (F01: 8/9), flag `telemetry_rows_missing`.
 * - Requests or tokens (input + output) differ by more than `factor` either way → flag
 *   `self_report_divergence`. Harnesses disagree on whether their input counts cache, so input is
 *   compared with both the total and the fresh input and the closer one is used.
 * - The telemetry is missing while the harness reports requests → flag `telemetry_missing` (never $0).
 * - A LiteLLM capture without an independent request count (flag `request_count_unverified`) and no
 *   reported count → coverage `unknown`; a matching count clears the flag.
 */
export function selfReportDivergence(
  summary: TelemetrySummary,
  selfReport: SelfReport | null,
  factor = 1.5,
): SelfReportCheck {
  const flags = new Set(summary.flags)
  const reasons: string[] = summary.reason ? [summary.reason] : []
  let coverage = summary.coverage
  let diverged = false
  let requests: SelfReportCheck['requests'] = null
  let tokens: SelfReportCheck['tokens'] = null

  const harnessRequests = selfReport?.requests ?? null
  if (coverage === 'missing') {
    if (harnessRequests !== null && harnessRequests > 0) flags.add('telemetry_missing')
  } else if (harnessRequests !== null && summary.proxy_requests !== null) {
    const t = summary.proxy_requests
    requests = { telemetry: t, harness: harnessRequests }
    if (harnessRequests > t) {
      coverage = worseCoverage(coverage, 'partial')
      reasons.push(
        `telemetry coverage ${t}/${harnessRequests}: the harness reported ${harnessRequests} requests, telemetry holds ${t}`,
      )
      flags.add('telemetry_rows_missing')
    }
    if (beyond(t, harnessRequests, factor)) diverged = true
    if (flags.has('request_count_unverified') && harnessRequests <= t)
      flags.delete('request_count_unverified')
  }
  if (flags.has('request_count_unverified') && harnessRequests === null) {
    coverage = worseCoverage(coverage, 'unknown')
    reasons.push('no independent request count: the spend-log rows cannot be checked for completeness')
  }

  if (
    selfReport &&
    coverage !== 'missing' &&
    summary.output_tokens !== null &&
    summary.input_tokens !== null
  ) {
    const hin = selfReport.input_tokens
    const hout = selfReport.output_tokens
    if (hin !== null && hout !== null) {
      const candidates = [summary.input_tokens, summary.input_fresh_tokens].filter(
        (v): v is number => v !== null,
      )
      const tin = candidates.reduce((best, v) => (Math.abs(v - hin) < Math.abs(best - hin) ? v : best))
      tokens = { telemetry: tin + summary.output_tokens, harness: hin + hout }
      if (beyond(tin, hin, factor) || beyond(summary.output_tokens, hout, factor)) diverged = true
    }
  }
  if (diverged) flags.add('self_report_divergence')
  return {
    summary: {
      ...summary,
      coverage,
      reason: reasons.length > 0 ? reasons.join('; ') : null,
      flags: [...flags].sort(),
    },
    diverged,
    requests,
    tokens,
  }
}
