import { LEDGER_SCHEMA_VERSION, type LedgerRow } from '../../../src/records/ledger.js'

let seq = 0

/** A successful proxy ledger row with plausible defaults; override any field. */
export function row(over: Partial<LedgerRow> = {}): LedgerRow {
  seq++
  return {
    schema_version: LEDGER_SCHEMA_VERSION,
    request_id: `r${seq}`,
    source: 'proxy',
    call_type: 'chat.completions',
    api: 'chat',
    stream: true,
    model: 'gpt-test',
    model_observed: 'gpt-test',
    model_group: null,
    provider: 'openai',
    status: 'success',
    http_status: 200,
    error: null,
    started_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    ended_at: null,
    first_token_at: null,
    duration_ms: 10,
    ttft_ms: 5,
    request_shape: { bytes: 1000, tools: 3, messages: 2, system_bytes: 100 },
    tokens: { input_total: 100, input_fresh: 60, cache_read: 40, cache_write: 0, output: 10, reasoning: 0 },
    cache_semantics: 'inclusive',
    spend_usd: 0.001,
    spend_source: 'recomputed',
    spend_logged_usd: null,
    spend_recomputed_usd: 0.001,
    flags: [],
    attribution: null,
    usage_object: null,
    additional_usage_values: null,
    ...over,
  }
}
