import type { ModelRoute } from '../manifest/schema.js'
import type { Attribution } from '../records/ledger.js'
import type { AttemptBudget, AttemptTelemetry, CapturedTelemetry, TelemetryCapture } from './capture.js'
import { RecordingProxy } from './proxy.js'
import { describeRowProblems, INPUT_ERROR_FLAG } from './row-check.js'
import { summarizeAttempt } from './summary.js'

export interface LedgerCaptureOptions {
  /** The manifest's model route: provider (cache semantics), prices (spend), id (model check). */
  route: ModelRoute
  /** Where requests go: the scripted model's origin or a real provider base URL (no `/v1`). */
  upstreamOrigin: string
  /** The real upstream key (the value of the route's `api_key_env`); harnesses never see it. */
  upstreamKey?: string
  /** The leg's ledger.jsonl; rows are appended as they complete. */
  ledgerFile: string
  runId: string
  experimentId: string
  /** Forward `x-hw-*` attribution headers: only when the upstream is the scripted model. */
  forwardAttribution: boolean
  /** How long `finish()` waits for in-flight requests before aborting them, ms. Default 30 000. */
  finishTimeoutMs?: number
  /** Upstream idle timeout, ms. Default 600 000. */
  upstreamTimeoutMs?: number
}

/** The ledger capture also exposes its proxy's origin (for logs and the `proxy` command). */
export interface LedgerCapture extends TelemetryCapture {
  readonly origin: string
  readonly proxy: RecordingProxy
}

/**
 * Start the recording proxy in-process on 127.0.0.1 (a free port) and return the ledger capture.
 * `begin(attribution, budget)` registers a fresh random per-attempt key and returns
 * `{endpoint: {origin, apiKey}, finish()}`; `finish()` waits until the attempt has no request in
 * flight, releases the key and returns the attempt's rows and their summary (source `ledger`).
 * Rows of every attempt go to `ledgerFile` (JSONL) as they complete.
 */
export async function openLedgerCapture(opts: LedgerCaptureOptions): Promise<LedgerCapture> {
  const proxy = await RecordingProxy.start({
    upstream: opts.upstreamOrigin,
    upstreamKey: opts.upstreamKey,
    route: {
      provider: opts.route.provider,
      prices: opts.route.prices ?? null,
      cacheSemantics: opts.route.cache_semantics,
      model: opts.route.id,
    },
    ledgerFile: opts.ledgerFile,
    runId: opts.runId,
    experimentId: opts.experimentId,
    forwardAttribution: opts.forwardAttribution,
    upstreamTimeoutMs: opts.upstreamTimeoutMs,
  })
  const declaredModel = opts.route.id
  return {
    source: 'ledger',
    origin: proxy.origin,
    proxy,
    async begin(attribution: Attribution, budget: AttemptBudget): Promise<AttemptTelemetry> {
      const attempt = proxy.register({ attribution, budget })
      let finished: Promise<CapturedTelemetry> | null = null
      return {
        endpoint: { origin: proxy.origin, apiKey: attempt.key },
        finish: () => {
          finished ??= (async () => {
            await attempt.idle(opts.finishTimeoutMs ?? 30_000)
            attempt.release()
            const rows = [...attempt.rows]
            const findings: { coverage: 'partial'; reason: string; flag: string }[] = []
            if (attempt.problems.length > 0)
              findings.push({
                coverage: 'partial',
                reason: describeRowProblems(attempt.problems, 'the proxy ledger'),
                flag: INPUT_ERROR_FLAG,
              })
            if (attempt.unsettled > 0)
              findings.push({
                coverage: 'partial',
                reason: `${attempt.unsettled} request(s) still unrecorded when the attempt ended`,
                flag: 'telemetry_unsettled',
              })
            return { rows, summary: summarizeAttempt(rows, { source: 'ledger', declaredModel, findings }) }
          })()
          return finished
        },
      }
    },
    close: () => proxy.close(),
  }
}
