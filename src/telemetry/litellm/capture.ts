import { randomUUID } from 'node:crypto'
import type { z } from 'zod'
import type { LiteLLMSettingsSchema, ModelRoute } from '../../manifest/schema.js'
import type { Attribution, LedgerRow, TelemetrySummary } from '../../records/ledger.js'
import { HwError } from '../../util/errors.js'
import { sha256 } from '../../util/json.js'
import type { AttemptBudget, AttemptTelemetry, CapturedTelemetry, TelemetryCapture } from '../capture.js'
import { LedgerWriter } from '../ledger-writer.js'
import { ANSWERED_BY_PROXY, type ProxyAttempt, RecordingProxy } from '../proxy.js'
import { checkLedgerRow, describeRowProblems, INPUT_ERROR_FLAG, type RowProblem } from '../row-check.js'
import { type CoverageFinding, summarizeAttempt } from '../summary.js'
import {
  type FetchedSpendLogs,
  LiteLLMClient,
  MAX_PAGE_SIZE,
  type SpendLogsQuery,
  spendRowIdentity,
} from './client.js'
import { attemptWindow } from './dates.js'
import {
  classifyGatewayRows,
  describeGateway,
  type GatewayAccount,
  gatewayAccount,
  harnessRequestsOf,
  keptForAttempt,
} from './gateway.js'
import { attributionMetadata, mapSpendLogRow, rowAttemptId } from './map-row.js'
import { waitForQuiescence } from './quiesce.js'
import type { RetryOptions } from './retry.js'

export type LiteLLMSettings = z.output<typeof LiteLLMSettingsSchema>

export interface LiteLLMCaptureOptions {
  /** LiteLLM proxy base URL (the value of `base_url_env`), without `/v1`. */
  baseUrl: string
  /** Admin key (the value of `master_key_env`): generates/deletes keys, reads spend logs. */
  masterKey: string
  /** The manifest's `telemetry.litellm` block. */
  settings: LiteLLMSettings
  route: ModelRoute
  runId: string
  experimentId: string
  /** The leg's ledger.jsonl: the attempt's spend-log rows are appended at `finish()`. */
  ledgerFile: string
  /** `metadata-header` mode: the key requests go out with (default: the master key). */
  sharedKey?: string
  /**
   * Put the recording proxy in front of LiteLLM (default true; required for `metadata-header`): it
   * attributes requests by a per-attempt key, adds the attribution headers, enforces `max_requests`
   * and counts forwarded requests so missing spend-log rows show (F01).
   */
  frontProxy?: boolean
  /** Virtual key lifetime (LiteLLM `duration`). Default `24h`. */
  keyDuration?: string
  /** Widening of the attempt's time window on both sides, s. Default 60. */
  windowSlackS?: number
  /** Time between quiescence probes, ms. Default min(1000, settle/4), at least 25. */
  pollMs?: number
  retry?: RetryOptions
  /** How long `finish()` waits for in-flight requests at the front proxy, ms. Default 30 000. */
  finishTimeoutMs?: number
}

export interface LiteLLMCapture extends TelemetryCapture {
  readonly client: LiteLLMClient
  /** The front proxy, when there is one. */
  readonly proxy: RecordingProxy | null
}

const HEADER_METADATA = 'x-litellm-spend-logs-metadata'
const HEADER_TRACE = 'x-litellm-trace-id'

/**
 * The LiteLLM telemetry capture (source `litellm`), following the reconciliation protocol of
 * telemetry.md: per attempt a virtual key (`/key/generate` with max_budget, duration and metadata) or,
 * in `metadata-header` mode, the shared key plus `x-litellm-spend-logs-metadata`; after the harness
 * exits, a quiescence wait (on an exact row count: past LiteLLM's 10 000 cap on `total` the rows are
 * paged and counted, F04), `/spend/logs/v2` paged by sha256(key) (or the attempt's session id) over an
 * explicit UTC window, de-duplicated, reconciled with `/key/info` spend and with the front proxy's
 * request count, then `/key/delete`. `finish()` never throws: failures become coverage with a reason.
 */
export async function openLiteLLMCapture(opts: LiteLLMCaptureOptions): Promise<LiteLLMCapture> {
  const mode = opts.settings.attribution
  const front = opts.frontProxy ?? true
  if (mode === 'metadata-header' && !front) {
    throw new HwError(
      'litellm_mode',
      'telemetry.litellm.attribution "metadata-header" needs the front proxy',
      {
        help: 'use attribution: virtual-key, or keep the front proxy on',
      },
    )
  }
  if (opts.settings.page_size > MAX_PAGE_SIZE) {
    throw new HwError('litellm_page_size', `telemetry.litellm.page_size must be at most ${MAX_PAGE_SIZE}`)
  }
  const client = new LiteLLMClient({ baseUrl: opts.baseUrl, masterKey: opts.masterKey, retry: opts.retry })
  const proxy = front
    ? await RecordingProxy.start({
        upstream: opts.baseUrl,
        route: {
          provider: opts.route.provider,
          prices: opts.route.prices ?? null,
          cacheSemantics: opts.route.cache_semantics,
        },
        runId: opts.runId,
        experimentId: opts.experimentId,
      })
    : null
  const ledger = new LedgerWriter(opts.ledgerFile)

  const begin = async (attribution: Attribution, budget: AttemptBudget): Promise<AttemptTelemetry> => {
    const attemptId = randomUUID()
    const startedAt = new Date()
    const slm = attributionMetadata(attribution, attemptId)
    let key: string
    if (mode === 'virtual-key') {
      const generated = await client.generateKey({
        key_alias: `hw-${attribution.run_id}-${attribution.cell_id}-${attribution.instance_id}-${attribution.trial}-${attribution.attempt}-${attemptId.slice(0, 8)}`,
        duration: opts.keyDuration ?? '24h',
        max_budget: budget.maxSpendUsd ?? null,
        metadata: {
          experiment: attribution.experiment_id,
          run: attribution.run_id,
          cell: attribution.cell_id,
          instance: attribution.instance_id,
          trial: attribution.trial,
          attempt: attribution.attempt,
          spend_logs_metadata: slm,
        },
      })
      key = generated.key
    } else {
      key = opts.sharedKey ?? opts.masterKey
    }
    let attempt: ProxyAttempt | null = null
    if (proxy) {
      attempt = proxy.register({
        attribution,
        // In virtual-key mode LiteLLM enforces max_budget on the key; the proxy counts requests.
        budget: {
          maxRequests: budget.maxRequests,
          maxSpendUsd: mode === 'virtual-key' ? undefined : budget.maxSpendUsd,
        },
        upstreamKey: key,
        extraHeaders: { [HEADER_METADATA]: JSON.stringify(slm), [HEADER_TRACE]: attemptId },
      })
    }
    const endpoint =
      proxy && attempt ? { origin: proxy.origin, apiKey: attempt.key } : { origin: opts.baseUrl, apiKey: key }
    let finished: Promise<CapturedTelemetry> | null = null
    return {
      endpoint,
      finish: () => {
        finished ??= finishAttempt({ attribution, attemptId, key, startedAt, attempt })
        return finished
      },
    }
  }

  const finishAttempt = async (a: {
    attribution: Attribution
    attemptId: string
    key: string
    startedAt: Date
    attempt: ProxyAttempt | null
  }): Promise<CapturedTelemetry> => {
    const findings: CoverageFinding[] = []
    const extraFlags: string[] = []
    let expected: number | null = null
    if (a.attempt) {
      await a.attempt.idle(opts.finishTimeoutMs ?? 30_000)
      a.attempt.release()
      expected = forwardedRows(a.attempt).length
    } else {
      extraFlags.push('request_count_unverified')
    }
    const window = attemptWindow(a.startedAt, new Date(), opts.windowSlackS ?? 60)
    const query: SpendLogsQuery =
      mode === 'virtual-key'
        ? { ...window, apiKeyHash: sha256(a.key), pageSize: opts.settings.page_size }
        : { ...window, sessionId: a.attemptId, pageSize: opts.settings.page_size }
    const settleMs = opts.settings.settle_s * 1000
    let rows: LedgerRow[] = []
    let internal: LedgerRow[] = []
    let gateway: GatewayAccount | null = null
    const extraReasons: string[] = []
    let reconciliation: TelemetrySummary['reconciliation'] = null
    try {
      const q = await waitForQuiescence(
        async () => ({
          // `total` stops at 10 000 (F04): past the cap the count comes from paging every row.
          rows: (await client.countSpendLogsExact(query)).total,
          spendUsd: mode === 'virtual-key' ? (await client.keyInfo(a.key)).spend : null,
        }),
        {
          settleMs,
          maxWaitMs: opts.settings.max_wait_s * 1000,
          pollMs: opts.pollMs ?? Math.max(25, Math.min(1000, settleMs / 4)),
          expectedRows: expected ?? undefined,
        },
      )
      const unsettled = !q.settled && q.reason ? q.reason : null
      const first = await client.fetchSpendLogsOrPartial(query)
      let fetched: FetchedSpendLogs = first.fetched
      if (first.aborted) {
        findings.push({ coverage: 'partial', reason: first.aborted.message, flag: 'paging_aborted' })
      }
      // Offset paging can miss a row that lands mid-way; a count above the rows says so (LiteLLM's total
      // while uncapped, else the settled paged count), and one more pass fixes it.
      const aborted = findings.some((f) => f.flag === 'paging_aborted')
      const counted = fetched.capped ? q.last.rows : fetched.totalReported
      if (!aborted && counted !== null && counted > fetched.rows.length) {
        const again = await client.fetchSpendLogs(query)
        const ids = new Set(fetched.rows.map(spendRowIdentity))
        const seen = (r: Record<string, unknown>) => {
          const id = spendRowIdentity(r)
          return id !== null && ids.has(id)
        }
        // Rows without a real identity cannot be told from the first pass's: the first pass stands.
        const fresh = again.rows.filter((r) => spendRowIdentity(r) !== null && !seen(r))
        fetched = {
          ...fetched,
          rows: [...fetched.rows, ...fresh],
          received: fetched.received + again.received,
        }
        fetched.duplicatesDropped = fetched.received - fetched.rows.length
      }
      const mine =
        mode === 'virtual-key'
          ? fetched.rows
          : fetched.rows.filter((r) => (rowAttemptId(r) ?? a.attemptId) === a.attemptId)
      // Whose work each row records: the harness's requests (by the front proxy's own record of them:
      // time, status, usage) or the gateway's retries, fallbacks and refusals.
      const requests = a.attempt ? harnessRequestsOf(forwardedRows(a.attempt)) : null
      const verdicts = classifyGatewayRows(mine, requests, { requestedGroup: opts.route.id })
      gateway = gatewayAccount(mine, verdicts)
      const problems: RowProblem[] = []
      const mapped = mine.map((r, i) => {
        const v = verdicts[i]!
        const kept = keptForAttempt(v)
        const checked = checkLedgerRow(mapSpendLogRow(r, opts.route.prices, a.attribution))
        if (kept) problems.push(...checked.problems)
        return { row: checked.row, verdict: v, kept }
      })
      rows = mapped.filter((m) => m.kept).map((m) => m.row)
      internal = mapped
        .filter((m) => !m.kept)
        .map(({ row, verdict }) => ({
          ...row,
          attribution: null,
          gateway: {
            kind: verdict.kind === 'harness' ? 'unmatched' : verdict.kind,
            refusal: verdict.refusal,
            evidence: verdict.evidence,
            attempt: a.attribution,
          },
        }))
      const left = describeGateway(gateway)
      if (left) extraReasons.push(left)
      if (gateway.left_out.spend_usd > 0) extraFlags.push('gateway_billed_left_out')
      if (gateway.retries + gateway.fallbacks > 0) extraFlags.push('gateway_retries')
      if (gateway.unmatched > 0) extraFlags.push('gateway_rows_unmatched')
      // The harness's own request refused by the gateway: infrastructure (auth, rate) or budget.
      for (const v of verdicts)
        if (v.answer && v.kind === 'refusal' && v.refusal) extraFlags.push(`gateway_refused_${v.refusal}`)
      const disagree = verdicts.filter((v) => v.answer && v.tokens_match === false).length
      if (disagree > 0) {
        findings.push({
          coverage: 'partial',
          reason: `${disagree} spend-log row${disagree === 1 ? '' : 's'} answering a harness request carr${disagree === 1 ? 'ies' : 'y'} other token counts than the proxy read from the answer's usage`,
          flag: 'usage_disagrees_with_proxy',
        })
      }
      // An answer whose stream carried no usage chunk at the proxy: the gateway's token counts are its
      // own estimate, not what the provider reported.
      const unmeasured = verdicts.filter((v) => v.answer && v.kind === 'harness' && v.tokens_match === null)
      if (requests !== null && unmeasured.length > 0) {
        findings.push({
          coverage: 'partial',
          reason: `${unmeasured.length} answer${unmeasured.length === 1 ? '' : 's'} carried no usage at the proxy (a stream without a usage chunk): the spend-log token counts for ${unmeasured.length === 1 ? 'it are' : 'them are'} the gateway's own estimate`,
          flag: 'usage_absent',
        })
      }
      if (requests !== null) {
        const answered = new Set(verdicts.filter((v) => v.answer).map((v) => v.request))
        const lost = requests.filter((_, k) => !answered.has(k)).length
        if (lost > 0 && rows.length >= requests.length) {
          findings.push({
            coverage: 'partial',
            reason: `${lost} of the ${requests.length} harness requests the proxy forwarded have no spend-log row answering them (status and time)`,
            flag: 'telemetry_rows_missing',
          })
        }
      }
      if (problems.length > 0) {
        findings.push({
          coverage: 'partial',
          reason: describeRowProblems(problems, 'LiteLLM spend logs'),
          flag: INPUT_ERROR_FLAG,
        })
      }
      // The key's spend holds the gateway's own billed work too: reconcile it with every row.
      const rowsSpend = round(mapped.reduce((s, m) => s + (m.row.spend_logged_usd ?? 0), 0))
      const keySpend = mode === 'virtual-key' ? (await client.keyInfo(a.key)).spend : null
      reconciliation = {
        rows_fetched: fetched.rows.length,
        duplicates_dropped: fetched.duplicatesDropped,
        rows_spend_usd: rowsSpend,
        key_spend_usd: keySpend,
        tolerance_usd: opts.settings.tolerance_usd,
        proxy_requests: expected,
        waited_ms: Math.round(q.waitedMs),
      }
      if (keySpend !== null && Math.abs(keySpend - rowsSpend) > opts.settings.tolerance_usd) {
        findings.push({
          coverage: 'partial',
          reason: `spend-log rows sum to $${fmt(rowsSpend)} but /key/info reports $${fmt(keySpend)} for the key (tolerance $${fmt(opts.settings.tolerance_usd)})`,
          flag: 'spend_unreconciled',
        })
      }
      // With no row at all the summary says why (rows lost when the proxy forwarded some, else a bypass).
      const noneLogged = rows.length === 0 && expected !== null && expected > 0
      if (unsettled && noneLogged) extraFlags.push('spend_logs_unsettled')
      else if (unsettled)
        findings.push({ coverage: 'partial', reason: unsettled, flag: 'spend_logs_unsettled' })
      if (expected !== null && rows.length < expected && !noneLogged) {
        findings.push({
          coverage: 'partial',
          reason: `telemetry coverage ${rows.length}/${expected}: the proxy forwarded ${expected} requests, LiteLLM logged ${rows.length}`,
          flag: 'telemetry_rows_missing',
        })
      }
    } catch (e) {
      findings.push({
        coverage: rows.length > 0 ? 'partial' : 'missing',
        reason: `LiteLLM capture failed: ${e instanceof Error ? e.message : String(e)}`,
        flag: 'capture_failed',
      })
    }
    if (mode === 'virtual-key') {
      try {
        await client.deleteKeys([a.key])
      } catch {
        extraFlags.push('key_delete_failed')
      }
    }
    for (const r of rows) ledger.append(r)
    for (const r of internal) ledger.append(r)
    const summary = summarizeAttempt(rows, {
      source: 'litellm',
      declaredModel: opts.route.id,
      findings,
      forwardedRequests: expected,
    })
    summary.flags = [...new Set([...summary.flags, ...extraFlags])].sort()
    summary.reconciliation = reconciliation
    if (gateway) summary.gateway = gateway
    if (extraReasons.length > 0)
      summary.reason = [summary.reason, ...extraReasons].filter((x): x is string => !!x).join('; ')
    return { rows, summary }
  }

  return {
    source: 'litellm',
    client,
    proxy,
    begin,
    close: async () => {
      await proxy?.close()
      ledger.close()
    },
  }
}

/** The requests the front proxy forwarded upstream for the attempt (inference, not answered by itself). */
function forwardedRows(attempt: ProxyAttempt): LedgerRow[] {
  return attempt.rows.filter((r) => r.api !== 'other' && !r.flags.includes(ANSWERED_BY_PROXY))
}

function round(usd: number): number {
  return Math.round(usd * 1e10) / 1e10
}

function fmt(usd: number): string {
  return usd.toFixed(6)
}
