import type { TelemetrySummary } from '../records/ledger.js'

/**
 * A summary for an attempt whose telemetry could not be collected: no rows, every total null, with the
 * reason. `missing` when the capture failed for a run that happened; `unknown` when nothing was set up
 * to capture. Missing is never zero.
 */
export function emptyTelemetry(
  source: TelemetrySummary['source'],
  coverage: 'missing' | 'unknown',
  reason: string,
): TelemetrySummary {
  return {
    source,
    coverage,
    reason,
    rows: 0,
    failed_rows: 0,
    proxy_requests: null,
    input_tokens: null,
    input_fresh_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    reasoning_tokens: null,
    spend_usd: null,
    spend_source: 'none',
    models_observed: [],
    model_mismatch: false,
    first_request_bytes: null,
    first_request_tools: null,
    aux_requests: null,
    budget_exceeded: false,
    flags: [],
  }
}
