import { randomUUID } from 'node:crypto'
import { isRealRequestId } from '../../records/identity.js'
import { type Attribution, LEDGER_SCHEMA_VERSION, type LedgerRow } from '../../records/ledger.js'
import { cacheRuleFor } from '../cache-semantics.js'
import { normalizeUsage, projectUsage } from '../normalize.js'
import { chooseLoggedSpend, type Prices } from '../prices.js'
import { toIsoUtc } from './dates.js'

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const str = (v: unknown, max = 200): string | null =>
  typeof v === 'string' && v.length > 0 ? v.slice(0, max) : typeof v === 'number' ? String(v) : null
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/**
 * Row flag: the source gave no real request id (missing, empty or a placeholder): the row got a fresh
 * `noid-…` id and is never merged with another on it.
 */
export const REQUEST_ID_MISSING_FLAG = 'request_id_missing'

/** LiteLLM `call_type` → the wire API the harness used. */
const CALL_TYPES: Record<string, LedgerRow['api']> = {
  acompletion: 'chat',
  completion: 'chat',
  atext_completion: 'chat',
  text_completion: 'chat',
  aresponses: 'responses',
  responses: 'responses',
  anthropic_messages: 'anthropic',
  aanthropic_messages: 'anthropic',
  agenerate_content: 'gemini',
  generate_content: 'gemini',
  agenerate_content_stream: 'gemini',
  generate_content_stream: 'gemini',
}

/** The `spend_logs_metadata` keys our attribution travels in (header or key metadata). */
export const HW_METADATA_KEYS = {
  experiment: 'hw_experiment',
  run: 'hw_run',
  cell: 'hw_cell',
  instance: 'hw_instance',
  trial: 'hw_trial',
  attempt: 'hw_attempt',
  attemptId: 'hw_attempt_id',
  plan: 'hw_plan',
  legAttempt: 'hw_leg_attempt',
} as const

/** The `spend_logs_metadata` object for one attempt. */
export function attributionMetadata(a: Attribution, attemptId: string): Record<string, string | number> {
  return {
    [HW_METADATA_KEYS.experiment]: a.experiment_id,
    [HW_METADATA_KEYS.run]: a.run_id,
    [HW_METADATA_KEYS.cell]: a.cell_id,
    [HW_METADATA_KEYS.instance]: a.instance_id,
    [HW_METADATA_KEYS.trial]: a.trial,
    [HW_METADATA_KEYS.attempt]: a.attempt,
    [HW_METADATA_KEYS.attemptId]: attemptId,
    ...(a.plan_sha256 ? { [HW_METADATA_KEYS.plan]: a.plan_sha256 } : {}),
    ...(a.leg_attempt ? { [HW_METADATA_KEYS.legAttempt]: a.leg_attempt } : {}),
  }
}

/** The attempt id a spend-log row carries in `metadata.spend_logs_metadata`, if any. */
export function rowAttemptId(row: Obj): string | null {
  const slm = obj(obj(row.metadata)?.spend_logs_metadata)
  return str(slm?.[HW_METADATA_KEYS.attemptId])
}

function attributionOf(row: Obj): Attribution | null {
  const m = obj(obj(row.metadata)?.spend_logs_metadata)
  if (!m) return null
  const trial = Number(m[HW_METADATA_KEYS.trial])
  const attempt = Number(m[HW_METADATA_KEYS.attempt])
  const fields = [
    m[HW_METADATA_KEYS.experiment],
    m[HW_METADATA_KEYS.run],
    m[HW_METADATA_KEYS.cell],
    m[HW_METADATA_KEYS.instance],
  ]
  if (
    !fields.every((f) => typeof f === 'string') ||
    !Number.isInteger(trial) ||
    !Number.isInteger(attempt) ||
    attempt < 1 ||
    trial < 0
  ) {
    return null
  }
  const [experiment_id, run_id, cell_id, instance_id] = fields as string[]
  const plan = m[HW_METADATA_KEYS.plan]
  const legAttempt = Number(m[HW_METADATA_KEYS.legAttempt])
  return {
    experiment_id,
    run_id,
    cell_id,
    instance_id,
    trial,
    attempt,
    ...(typeof plan === 'string' && plan !== '' ? { plan_sha256: plan } : {}),
    ...(Number.isInteger(legAttempt) && legAttempt >= 1 ? { leg_attempt: legAttempt } : {}),
  } as Attribution
}

/** Error class of a failed spend-log row (`metadata.error_information`); budget refusals are `budget_exceeded` (F06). */
function errorOf(row: Obj): LedgerRow['error'] {
  const info = obj(obj(row.metadata)?.error_information) ?? {}
  const code = str(info.error_code)
  const errClass = str(info.error_class)
  const message = str(info.error_message, 2000) ?? ''
  const status = code !== null && /^\d+$/.test(code) ? Number(code) : null
  let cls = 'upstream_error'
  if (
    /budget/i.test(errClass ?? '') ||
    /budget has been exceeded|budget_exceeded/i.test(message) ||
    code === 'budget_exceeded'
  ) {
    cls = 'budget_exceeded'
  } else if (status === 429) cls = 'rate_limited'
  else if (status !== null && status >= 500) cls = 'upstream_5xx'
  else if (status === 401 || status === 403) cls = 'upstream_auth'
  else if (status !== null && status >= 400) cls = 'upstream_4xx'
  // The message can quote request content: keep only the class name LiteLLM gives.
  return { class: cls, code, message: errClass }
}

function msBetween(a: string | null, b: string | null): number | null {
  if (!a || !b) return null
  const d = Date.parse(b) - Date.parse(a)
  return Number.isFinite(d) && d >= 0 ? d : null
}

/**
 * Map one `/spend/logs/v2` row (telemetry.md 6.1, 6.3, 6.4) to a ledger row with source `litellm`:
 * the allowlisted columns only (never `messages`/`response`/`proxy_server_request`, never the key
 * hash), tokens normalised with the LiteLLM rule (prompt_tokens cache-inclusive), the logged spend
 * beside the recomputed one, and the spend choice of {@link chooseLoggedSpend} (F02, F03).
 * `fallback` is the attribution used when the row carries none in `spend_logs_metadata`.
 */
export function mapSpendLogRow(
  row: Obj,
  prices: Prices | null | undefined,
  fallback: Attribution | null,
): LedgerRow {
  const meta = obj(row.metadata) ?? {}
  const rule = cacheRuleFor(null, 'litellm')
  const norm = normalizeUsage('litellm', row, rule)
  const logged = num(row.spend)
  const breakdown = num(obj(meta.cost_breakdown)?.total_cost)
  const spend = chooseLoggedSpend(logged, breakdown, norm.tokens, prices)
  const failed = str(row.status) === 'failure' || str(meta.status) === 'failure'
  const started = toIsoUtc(row.startTime) ?? new Date(0).toISOString()
  const ended = toIsoUtc(row.endTime)
  const firstToken = toIsoUtc(row.completionStartTime)
  const callType = str(row.call_type) ?? 'unknown'
  const api = CALL_TYPES[callType] ?? ((num(row.prompt_tokens) ?? 0) > 0 ? 'chat' : 'other')
  return {
    schema_version: LEDGER_SCHEMA_VERSION,
    request_id: isRealRequestId(row.request_id) ? (str(row.request_id) as string) : `noid-${randomUUID()}`,
    source: 'litellm',
    call_type: callType,
    api,
    stream: null,
    model: str(row.model_group) ?? str(row.model),
    model_observed: str(row.model),
    model_group: str(row.model_group),
    provider: str(row.custom_llm_provider),
    status: failed ? 'failure' : 'success',
    http_status: null,
    error: failed ? errorOf(row) : null,
    started_at: started,
    ended_at: ended,
    first_token_at: firstToken,
    duration_ms: num(row.request_duration_ms) ?? msBetween(started, ended),
    ttft_ms: msBetween(started, firstToken),
    request_shape: null,
    tokens: norm.tokens,
    cache_semantics: rule.semantics,
    spend_usd: spend.spend_usd,
    spend_source: spend.spend_source,
    spend_logged_usd: logged,
    spend_recomputed_usd: spend.spend_recomputed_usd,
    flags: [
      ...norm.flags,
      ...spend.flags,
      ...(isRealRequestId(row.request_id) ? [] : [REQUEST_ID_MISSING_FLAG]),
    ],
    attribution: attributionOf(row) ?? fallback,
    usage_object: projectUsage(meta.usage_object),
    additional_usage_values: projectUsage(meta.additional_usage_values),
  }
}
