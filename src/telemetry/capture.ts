import type { Attribution, LedgerRow, TelemetrySummary } from '../records/ledger.js'

/**
 * Where one attempt's harness must send its model requests. `origin` is a bare origin (scheme, host,
 * port, optional path prefix, no trailing slash); each adapter appends what its SDK expects (`/v1` for
 * OpenAI-style clients, nothing for the Anthropic and Gemini SDKs). `apiKey` is a per-attempt key: the
 * recording proxy attributes requests by it (and swaps in the real upstream key); with LiteLLM it is a
 * per-attempt virtual key.
 */
export interface AttemptEndpoint {
  origin: string
  apiKey: string
}

/** Per-attempt limits enforced where the requests pass (the proxy answers with a provider-shaped error). */
export interface AttemptBudget {
  maxSpendUsd?: number
  maxRequests?: number
}

/** The telemetry of one finished attempt: its ledger rows and their summary. */
export interface CapturedTelemetry {
  rows: LedgerRow[]
  summary: TelemetrySummary
}

export interface AttemptTelemetry {
  endpoint: AttemptEndpoint
  /**
   * Called after the harness has exited: waits for the source to be quiet, collects the attempt's rows,
   * summarises them (coverage, totals, model check) and releases the key. Never throws for missing
   * telemetry: that is a coverage of `missing`/`partial`/`unknown` with a reason.
   */
  finish(): Promise<CapturedTelemetry>
}

/**
 * The measurement plane as the run stage sees it. Implementations: the recording proxy (ledger) and
 * LiteLLM spend logs. `begin` is called once per attempt before the harness starts.
 */
export interface TelemetryCapture {
  readonly source: 'ledger' | 'litellm'
  begin(attribution: Attribution, budget: AttemptBudget): Promise<AttemptTelemetry>
  close(): Promise<void>
}
