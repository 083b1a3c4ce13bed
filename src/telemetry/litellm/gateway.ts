import type { LedgerRow } from '../../records/ledger.js'
import { toIsoUtc } from './dates.js'
import { HW_METADATA_KEYS } from './map-row.js'

/**
 * Whose work a LiteLLM spend-log row records (pure). A gateway writes rows for work it does on its
 * own account as well as for the harness's requests:
 * - `harness`: the row that answered one of the harness's requests (the one the provider billed for it);
 * - `retry`: an upstream call the gateway made again after it failed (same model group);
 * - `fallback`: an upstream call to another model group than the one requested (the gateway's fallback);
 * - `refusal`: the gateway (or provider) refused the request at its authentication, budget or rate
 *   stage: nothing was billed, and it is an infrastructure or budget class, never the agent's failure;
 * - `unmatched`: a row the recording proxy saw no harness request for (outside every request's time).
 * Each verdict carries its evidence: the fields of the row that decided it.
 */
export type GatewayRowKind = 'harness' | 'retry' | 'fallback' | 'refusal' | 'unmatched'
export type RefusalKind = 'auth' | 'budget' | 'rate'

export interface GatewayVerdict {
  kind: GatewayRowKind
  refusal: RefusalKind | null
  /** Index of the harness request (in the proxy's record) the row belongs to, or null. */
  request: number | null
  /** The row answered a harness request (its answer, or the refusal the harness received). */
  answer: boolean
  /** For an answer: whether its token counts equal the proxy's usage chunk (null: nothing to compare). */
  tokens_match: boolean | null
  evidence: string[]
}

/** The recording proxy's own record of one harness request: what it forwarded and what came back. */
export interface HarnessRequest {
  started_at: string
  ended_at: string | null
  status: 'success' | 'failure'
  http_status: number | null
  /** Usage as the proxy read it from the answer (the stream's usage chunk); null when it carried none. */
  input_tokens: number | null
  output_tokens: number | null
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null)
const int = (v: unknown): number | null => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null
}

/** How far (ms) a gateway row may start before or end after the harness request it served (clock skew, logging). */
export const GATEWAY_SLACK_MS = 1500

/** The refusal a failed row's error names (auth 401/403, budget, rate 429), or null. */
export function refusalOf(row: Obj): { kind: RefusalKind; evidence: string } | null {
  const meta = obj(row.metadata) ?? {}
  const info = obj(meta.error_information) ?? {}
  const failed = text(row.status) === 'failure' || text(meta.status) === 'failure'
  if (!failed) return null
  const cls = text(info.error_class) ?? ''
  const code = text(info.error_code) ?? (typeof info.error_code === 'number' ? String(info.error_code) : '')
  const msg = text(info.error_message) ?? ''
  const said = `error ${[cls, code].filter(Boolean).join(' ') || 'unnamed'}`
  if (/budget/i.test(cls) || /budget.*exceeded|budget_exceeded|exceeded.*budget/i.test(msg))
    return { kind: 'budget', evidence: `${said} (budget)` }
  if (code === '429' || /ratelimit|rate_limit/i.test(cls) || /rate limit|too many requests/i.test(msg))
    return { kind: 'rate', evidence: `${said} (rate limit)` }
  if (code === '401' || code === '403' || /auth|permission|forbidden/i.test(cls))
    return { kind: 'auth', evidence: `${said} (authentication)` }
  return null
}

function ms(v: unknown): number | null {
  const iso = toIsoUtc(v)
  if (iso === null) return null
  const t = Date.parse(iso)
  return Number.isFinite(t) ? t : null
}

function tokensOf(row: Obj): { input: number | null; output: number | null } {
  return { input: int(row.prompt_tokens), output: int(row.completion_tokens) }
}

function markers(row: Obj, requestedGroup: string | null): string[] {
  const meta = obj(row.metadata) ?? {}
  const out: string[] = []
  const retries = int(meta.attempted_retries)
  if (retries !== null && retries > 0) out.push(`attempted_retries ${retries}`)
  const fallbacks = int(meta.attempted_fallbacks)
  if (fallbacks !== null && fallbacks > 0) out.push(`attempted_fallbacks ${fallbacks}`)
  const original = text(meta.original_model_group)
  const group = text(row.model_group)
  if (original && group && original !== group)
    out.push(`model_group ${group} ≠ original_model_group ${original}`)
  else if (requestedGroup && group && group !== requestedGroup)
    out.push(`model_group ${group} ≠ requested ${requestedGroup}`)
  return out
}

function isFallbackGroup(row: Obj, requestedGroup: string | null): boolean {
  const meta = obj(row.metadata) ?? {}
  const original = text(meta.original_model_group)
  const group = text(row.model_group)
  if (original && group && original !== group) return true
  return requestedGroup !== null && group !== null && group !== requestedGroup
}

function hasOurMetadata(row: Obj): boolean {
  const slm = obj(obj(row.metadata)?.spend_logs_metadata)
  return !!slm && text(slm[HW_METADATA_KEYS.attemptId]) !== null
}

export interface GatewayOptions {
  /** The model group the harness asked for (the route's model id). */
  requestedGroup: string | null
  slackMs?: number
}

/**
 * Classify the spend-log rows of one attempt against the recording proxy's record of the harness's
 * requests (`requests`; null when no proxy stood in front). With the record, each harness request
 * owns the rows that lie within its time (± slack): the one whose status and token counts match what
 * the proxy saw is its answer (`harness`, or `refusal` when the gateway refused it); the others are
 * the gateway's retries (same group) or fallbacks (another group). Rows within no harness request are
 * `unmatched`, a refusal among them stays `refusal`. Without the record, rows are judged on their own
 * markers: a refusal's error, a failed call followed by another of the same group, a fallback group.
 */
export function classifyGatewayRows(
  rows: readonly Obj[],
  requests: readonly HarnessRequest[] | null,
  opts: GatewayOptions,
): GatewayVerdict[] {
  const slack = opts.slackMs ?? GATEWAY_SLACK_MS
  const verdicts: GatewayVerdict[] = rows.map(() => ({
    kind: 'unmatched',
    refusal: null,
    request: null,
    answer: false,
    tokens_match: null,
    evidence: [],
  }))
  const starts = rows.map((r) => ms(r.startTime))
  const ends = rows.map((r, i) => ms(r.endTime) ?? starts[i] ?? null)
  const noMeta = (i: number): string[] => (hasOurMetadata(rows[i]!) ? [] : ['no spend_logs_metadata of ours'])
  const deployment = (i: number): string => {
    const id = text(rows[i]!.model_id)
    return id ? `deployment ${id}` : 'no deployment (refused before any upstream call)'
  }

  if (requests === null) {
    // No independent record: markers only.
    const order = rows.map((_, i) => i).sort((a, b) => (starts[a] ?? 0) - (starts[b] ?? 0))
    for (const [pos, i] of order.entries()) {
      const r = rows[i]!
      const ref = refusalOf(r)
      const v = verdicts[i]!
      if (ref) {
        // Without the proxy's record a refusal is taken as the harness's refused request.
        Object.assign(v, { kind: 'refusal', refusal: ref.kind, answer: true })
        v.evidence.push('status failure', ref.evidence, deployment(i), ...noMeta(i))
        continue
      }
      const failed = text(r.status) === 'failure'
      const next = order.slice(pos + 1).find((j) => (starts[j] ?? 0) >= (ends[i] ?? 0) - slack)
      const retried =
        failed &&
        next !== undefined &&
        (starts[next] ?? Number.POSITIVE_INFINITY) - (ends[i] ?? 0) <= slack &&
        refusalOf(rows[next]!) === null
      if (retried) {
        const fb = isFallbackGroup(rows[next]!, opts.requestedGroup)
        v.kind = fb ? 'fallback' : 'retry'
        v.evidence.push(
          'status failure',
          deployment(i),
          `followed within ${slack} ms by ${text(rows[next]!.request_id) ?? 'a row'}`,
          ...markers(rows[next]!, opts.requestedGroup),
        )
        continue
      }
      v.kind = 'harness'
      v.answer = true
      v.evidence.push(
        `status ${text(r.status) ?? 'success'}`,
        deployment(i),
        ...markers(r, opts.requestedGroup),
      )
    }
    return verdicts
  }

  // Each row belongs to the harness request whose time holds it (± slack), the nearest when several do.
  const reqs = requests.map((q, k) => {
    const a = Date.parse(q.started_at)
    const b = q.ended_at ? Date.parse(q.ended_at) : a
    return { q, k, a, b: Math.max(a, b) }
  })
  const byStart = [...reqs].sort((x, y) => x.a - y.a)
  const longest = reqs.reduce((m, r) => Math.max(m, r.b - r.a), 0)
  const candidates = (i: number): typeof reqs => {
    const s0 = starts[i]
    if (s0 === null || s0 === undefined) return []
    const e0 = ends[i] ?? s0
    // Requests starting no later than s0 + slack, scanned back while they can still hold the row.
    let hi = byStart.length
    let lo = 0
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (byStart[mid]!.a <= s0 + slack) lo = mid + 1
      else hi = mid
    }
    const out: typeof reqs = []
    for (let j = lo - 1; j >= 0 && byStart[j]!.a >= s0 - slack - longest - slack; j--) {
      const r = byStart[j]!
      if (r.a - slack <= s0 && e0 <= r.b + slack) out.push(r)
    }
    return out.sort((x, y) => Math.abs(x.a - s0) - Math.abs(y.a - s0))
  }
  const statusOk = (i: number, q: HarnessRequest) => (text(rows[i]!.status) ?? 'success') === q.status
  const tokensMatch = (i: number, q: HarnessRequest) => {
    const t = tokensOf(rows[i]!)
    return (
      q.output_tokens !== null &&
      t.output === q.output_tokens &&
      (q.input_tokens === null || t.input === q.input_tokens)
    )
  }
  const label = (q: HarnessRequest, k: number) =>
    `harness request #${k + 1} (proxy: ${q.http_status ?? q.status}${q.output_tokens !== null ? `, ${q.input_tokens ?? '?'}/${q.output_tokens} tokens` : ', no usage'})`
  const cands = rows.map((_, i) => candidates(i))
  const byEnd = (list: typeof reqs): typeof reqs => [...list].sort((x, y) => x.b - y.b || x.a - y.a)
  const answerOf = new Map<number, number>()
  const owner = new Map<number, number>()
  const order = rows.map((_, i) => i).sort((x, y) => (starts[x] ?? 0) - (starts[y] ?? 0))
  // Answers first where status and the proxy's usage chunk agree, then on status alone (latest row).
  const passes: Array<(i: number, q: HarnessRequest) => boolean> = [
    (i, q) => statusOk(i, q) && tokensMatch(i, q),
    (i, q) => statusOk(i, q) && (q.status === 'failure' || refusalOf(rows[i]!) === null),
  ]
  for (const fits of passes) {
    for (const i of order) {
      if (owner.has(i)) continue
      // Earliest-ending request first: the greedy that matches the most rows to requests holding them.
      const r = byEnd(cands[i]!).find((c) => !answerOf.has(c.k) && fits(i, c.q))
      if (!r) continue
      answerOf.set(r.k, i)
      owner.set(i, r.k)
      const v = verdicts[i]!
      Object.assign(v, {
        request: r.k,
        answer: true,
        tokens_match: r.q.output_tokens === null ? null : tokensMatch(i, r.q),
      })
      const ref = refusalOf(rows[i]!)
      if (ref) {
        Object.assign(v, { kind: 'refusal', refusal: ref.kind })
        v.evidence.push(`answer to ${label(r.q, r.k)}`, ref.evidence, deployment(i), ...noMeta(i))
      } else {
        v.kind = 'harness'
        v.evidence.push(
          `answer to ${label(r.q, r.k)}`,
          tokensMatch(i, r.q) ? 'status and tokens match the proxy' : 'status matches the proxy',
          deployment(i),
          ...markers(rows[i]!, opts.requestedGroup),
        )
      }
    }
  }
  for (const i of order) {
    if (owner.has(i)) continue
    const v = verdicts[i]!
    const ref = refusalOf(rows[i]!)
    const r = cands[i]![0]
    if (!r) {
      if (ref) Object.assign(v, { kind: 'refusal', refusal: ref.kind })
      v.evidence.push(
        'within no harness request the proxy recorded',
        ...(ref ? [ref.evidence] : [`status ${text(rows[i]!.status) ?? 'success'}`]),
        deployment(i),
        ...noMeta(i),
      )
      continue
    }
    v.request = r.k
    // Refused at the gateway's own stage (no deployment called): a refusal, inside the request.
    if (ref && !text(rows[i]!.model_id)) {
      Object.assign(v, { kind: 'refusal', refusal: ref.kind })
      v.evidence.push(`within ${label(r.q, r.k)}, not its answer`, ref.evidence, deployment(i))
      continue
    }
    // An upstream call that did not answer: the gateway's retry, or the call it fell back from when
    // the answer came from another group.
    const answer = answerOf.get(r.k)
    const fellBack =
      isFallbackGroup(rows[i]!, opts.requestedGroup) ||
      (answer !== undefined && isFallbackGroup(rows[answer]!, opts.requestedGroup))
    v.kind = fellBack ? 'fallback' : 'retry'
    v.evidence.push(
      `within ${label(r.q, r.k)}, not its answer`,
      `status ${text(rows[i]!.status) ?? 'success'}${ref ? ` (${ref.evidence})` : ''}`,
      deployment(i),
      ...markers(rows[i]!, opts.requestedGroup),
      ...(fellBack && answer !== undefined
        ? [`answered by ${text(rows[answer]!.model_group) ?? 'another group'}`]
        : []),
    )
  }
  return verdicts
}

/** The proxy's record of the harness's requests, from its ledger rows (requests it answered itself excluded). */
export function harnessRequestsOf(proxyRows: readonly LedgerRow[]): HarnessRequest[] {
  return [...proxyRows]
    .sort((a, b) => a.started_at.localeCompare(b.started_at))
    .map((r) => ({
      started_at: r.started_at,
      ended_at: r.ended_at,
      status: r.status,
      http_status: r.http_status,
      input_tokens: r.tokens.input_total,
      output_tokens: r.tokens.output,
    }))
}

/** What the gateway's own rows were, counted for an attempt's summary. */
export interface GatewayAccount {
  harness_rows: number
  retries: number
  fallbacks: number
  refusals: { auth: number; budget: number; rate: number }
  /** Of the refusals, those that answered a harness request (the harness was refused). */
  harness_refused: number
  unmatched: number
  /** Rows left out of requests, spend and tokens, and what they carried. */
  left_out: { rows: number; spend_usd: number; input_tokens: number; output_tokens: number }
  /** The first few left-out rows with their class and evidence. */
  examples: Array<{ request_id: string; kind: GatewayRowKind; evidence: string }>
}

/**
 * Count the verdicts and what the left-out rows carried. Rows kept for the attempt: `harness`, and a
 * `refusal` that answered a harness request (the request counts; nothing was billed).
 */
export function gatewayAccount(rows: readonly Obj[], verdicts: readonly GatewayVerdict[]): GatewayAccount {
  const acc: GatewayAccount = {
    harness_rows: 0,
    retries: 0,
    fallbacks: 0,
    refusals: { auth: 0, budget: 0, rate: 0 },
    harness_refused: 0,
    unmatched: 0,
    left_out: { rows: 0, spend_usd: 0, input_tokens: 0, output_tokens: 0 },
    examples: [],
  }
  verdicts.forEach((v, i) => {
    const r = rows[i]!
    if (v.kind === 'harness') acc.harness_rows++
    else if (v.kind === 'retry') acc.retries++
    else if (v.kind === 'fallback') acc.fallbacks++
    else if (v.kind === 'unmatched') acc.unmatched++
    if (v.refusal) acc.refusals[v.refusal]++
    if (keptForAttempt(v)) {
      if (v.kind === 'refusal') acc.harness_refused++
      return
    }
    acc.left_out.rows++
    const spend = typeof r.spend === 'number' && Number.isFinite(r.spend) && r.spend > 0 ? r.spend : 0
    acc.left_out.spend_usd = Math.round((acc.left_out.spend_usd + spend) * 1e10) / 1e10
    acc.left_out.input_tokens += int(r.prompt_tokens) ?? 0
    acc.left_out.output_tokens += int(r.completion_tokens) ?? 0
    if (acc.examples.length < 5) {
      acc.examples.push({
        request_id: String(r.request_id ?? '').slice(0, 80),
        kind: v.kind,
        evidence: v.evidence.join('; ').slice(0, 300),
      })
    }
  })
  return acc
}

/** Is the row one of the attempt's (a harness request's answer, billed or refused)? */
export function keptForAttempt(v: GatewayVerdict): boolean {
  return v.answer && (v.kind === 'harness' || v.kind === 'refusal')
}

/** One sentence on what was left out, for the attempt's telemetry reason; null when nothing was. */
export function describeGateway(acc: GatewayAccount): string | null {
  if (acc.left_out.rows === 0) return null
  const parts: string[] = []
  if (acc.retries) parts.push(`${acc.retries} gateway retr${acc.retries === 1 ? 'y' : 'ies'}`)
  if (acc.fallbacks) parts.push(`${acc.fallbacks} fallback call${acc.fallbacks === 1 ? '' : 's'}`)
  const ownRefusals = acc.refusals.auth + acc.refusals.budget + acc.refusals.rate - acc.harness_refused
  if (ownRefusals > 0)
    parts.push(`${ownRefusals} refusal${ownRefusals === 1 ? '' : 's'} outside the harness's requests`)
  const other = acc.unmatched
  if (other > 0) parts.push(`${other} row${other === 1 ? '' : 's'} within no harness request`)
  const billed =
    acc.left_out.spend_usd > 0
      ? `; the provider billed $${acc.left_out.spend_usd.toFixed(6)} and ${acc.left_out.input_tokens}/${acc.left_out.output_tokens} tokens for them, not counted as the harness's`
      : ''
  return `left out of requests, spend and tokens: ${parts.join(', ')} (${acc.left_out.rows} row${acc.left_out.rows === 1 ? '' : 's'} of the gateway's own work)${billed}`
}
