import { createHash, randomBytes, randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A local fake of the LiteLLM proxy, built to the documented contract (telemetry.md 6.1–6.8; OpenAPI
 * 1.96.0 excerpt), on 127.0.0.1:
 * - `GET /spend/logs/v2`: 400 "Start date and end date are required"; 400 "Invalid date format: …"
 *   for anything but `YYYY-MM-DD` / `YYYY-MM-DD HH:MM:SS` (ISO `T` rejected); 422 for page_size outside
 *   1…1000; `api_key` compared verbatim with the stored sha256 hex (a raw key matches nothing, F05);
 *   bounds inclusive on startTime; newest first by default; `total` capped at 10 000 with
 *   `total_is_capped` (F04); heavy columns never listed.
 * - rows and key spend become visible only after `visibilityDelayMs` (asynchronous batch writes).
 * - `/key/generate`, `/key/info`, `/key/delete` (rows survive deletion).
 * - an OpenAI-compatible `/v1/chat/completions` (stream and not) that enforces `max_budget` (400
 *   `budget_exceeded`, logged as a failure row) and writes spend rows with `spend_logs_metadata` from
 *   the key and the `x-litellm-spend-logs-metadata` header, session id from `x-litellm-trace-id`.
 * Test knobs: `dropNextRows` (lost DB writes, F01), `zeroSpendOnStream` (F03), `failNext` (5xx/429 for
 * retries), `onSpendLogsPage` (a hook to add rows mid-paging).
 * Gateway behaviours (telemetry.md 6.3/6.4: failures are logged too, with `metadata.error_information`;
 * `attempted_retries`, `max_retries`, `attempted_fallbacks`, `original_model_group` in the metadata;
 * `model_id` is the deployment that was called):
 * - `upstreamFailures`: the next completion's first N upstream calls fail (`upstreamError`) and the
 *   router retries on the same group: one failure row per failed call (its own request id, the
 *   deployment, `attempted_retries` = its index), then the answer (`attempted_retries` = N);
 *   `billFailedCalls` prices the failed calls' prompt (a timed-out call the provider billed);
 * - `fallbackNext`: the next completion's call to the requested group fails with a provider 429, and
 *   the router falls back to `fallbackGroup`: a failure row, then the answer from the fallback group
 *   (`model_group` = the fallback, `original_model_group` = the requested, `attempted_fallbacks` 1);
 *   `fallbackMarkers: false` writes the answer without the markers (only its group tells);
 * - `refuseNext`: the gateway refuses the next request before any upstream call: `auth` (401, key
 *   blocked), `rate` (429, key rpm limit); the row has no deployment, no spend, and no
 *   spend_logs_metadata (the request never reached the stage that attaches it).
 */
export interface FakeLiteLLMOptions {
  masterKey?: string
  visibilityDelayMs?: number
  /** USD per Mtok for the fake's own spend. */
  prices?: { input: number; output: number }
  zeroSpendOnStream?: boolean
  /** The model group fallbacks go to. Default `<requested>-fallback`. */
  fallbackGroup?: string
}

type Obj = Record<string, unknown>
/** Handlers return `send(…)` to end early. */
type Answered = true

interface StoredRow {
  row: Obj
  start: number
  visibleAt: number
}

interface StoredKey {
  key: string
  hash: string
  alias: string | null
  maxBudget: number | null
  metadata: Obj
  spendNow: number
  spendEvents: { usd: number; visibleAt: number }[]
  expires: string | null
}

export const SPEND_LOGS_PAGINATION_COUNT_CAP = 10_000
const HEAVY = new Set(['messages', 'response', 'proxy_server_request'])
const SORT_KEYS = new Set([
  'spend',
  'total_tokens',
  'startTime',
  'endTime',
  'request_duration_ms',
  'model',
  'ttft_ms',
])
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

export const hashKey = (k: string): string => createHash('sha256').update(k).digest('hex')
const iso = (ms: number): string => new Date(ms).toISOString().replace('Z', '+00:00')

export class FakeLiteLLM {
  readonly masterKey: string
  readonly rows: StoredRow[] = []
  readonly keys = new Map<string, StoredKey>()
  /** Every request: method, path and query (never bodies). */
  readonly requests: { method: string; path: string; query: Record<string, string> }[] = []
  /** The next N completions are served but their row and spend are lost (F01). */
  dropNextRows = 0
  /** The next N spend-log requests fail with `failStatus`. */
  failNext = 0
  failStatus = 503
  onSpendLogsPage: ((page: number) => void) | null = null
  /** Gateway behaviours (see the class comment). */
  upstreamFailures = 0
  upstreamError: { status: number; errorClass: string } = { status: 500, errorClass: 'InternalServerError' }
  billFailedCalls = false
  fallbackNext = false
  fallbackMarkers = true
  refuseNext: 'auth' | 'rate' | null = null
  /** Memo of the last filtered+sorted list: paging 10 000 rows must not re-sort them per page. */
  private memo: { key: string; rowsLength: number; matched: StoredRow[] } | null = null
  private server: http.Server | null = null
  private port = 0

  constructor(private readonly opts: FakeLiteLLMOptions = {}) {
    this.masterKey = opts.masterKey ?? 'sk-master-fake-0000'
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        send(res, 500, {
          error: { message: String(e), type: 'internal_server_error', param: null, code: '500' },
        })
      })
    })
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', () => r()))
    this.port = (this.server.address() as AddressInfo).port
    return this
  }

  async close(): Promise<void> {
    const s = this.server
    this.server = null
    if (!s) return
    s.closeAllConnections()
    await new Promise<void>((r) => s.close(() => r()))
  }

  /** Insert spend-log rows directly (as if written earlier); `visibleAt` defaults to now. */
  addRows(rows: Obj[], visibleAt = Date.now()): void {
    for (const row of rows) this.rows.push({ row, start: Date.parse(String(row.startTime)), visibleAt })
  }

  /** `n` successful rows for one key hash, `stepMs` apart from `startMs`, $0.001 each. */
  seedRows(apiKeyHash: string, n: number, startMs: number, stepMs = 1000, prefix = 'seed'): void {
    const rows: Obj[] = []
    for (let i = 0; i < n; i++) {
      const t = startMs + i * stepMs
      rows.push(
        spendRow({
          request_id: `${prefix}-${i}`,
          api_key: apiKeyHash,
          spend: 0.001,
          prompt_tokens: 100,
          completion_tokens: 10,
          start: t,
          end: t + 500,
          model: 'gpt-test',
          metadata: {},
          sessionId: randomUUID(),
        }),
      )
    }
    this.addRows(rows)
    const key = [...this.keys.values()].find((k) => k.hash === apiKeyHash)
    if (key) {
      key.spendNow += n * 0.001
      key.spendEvents.push({ usd: n * 0.001, visibleAt: Date.now() })
    }
  }

  private auth(req: http.IncomingMessage): { master: boolean; key: StoredKey | null } | null {
    const bearer = String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '')
    const raw = bearer || String(req.headers['x-litellm-api-key'] ?? req.headers['x-api-key'] ?? '')
    if (!raw) return null
    if (raw === this.masterKey) return { master: true, key: null }
    const key = this.keys.get(hashKey(raw))
    if (!key) return null
    if (key.expires && Date.parse(key.expires) < Date.now()) return null
    return { master: false, key }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<Answered | undefined> {
    const url = new URL(req.url ?? '/', 'http://x')
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
    })
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks)
    const who = this.auth(req)
    if (!who) {
      return send(res, 401, {
        error: {
          message: 'Authentication Error, Invalid proxy server token passed.',
          type: 'auth_error',
          param: 'None',
          code: '401',
        },
      })
    }
    const p = url.pathname
    if (p === '/spend/logs/v2' && req.method === 'GET')
      return this.spendLogs(url.searchParams, res, who.master)
    if (p === '/key/generate' && req.method === 'POST') return this.generate(parse(raw), res, who.master)
    if (p === '/key/info' && req.method === 'GET') return this.info(url.searchParams.get('key'), res)
    if (p === '/key/delete' && req.method === 'POST') return this.remove(parse(raw), res, who.master)
    if ((p === '/v1/chat/completions' || p === '/chat/completions') && req.method === 'POST') {
      return this.completion(req, raw, res, who.key)
    }
    send(res, 404, { detail: 'Not Found' })
  }

  private spendLogs(q: URLSearchParams, res: http.ServerResponse, master: boolean): Answered | undefined {
    if (!master)
      return send(res, 403, {
        error: { message: 'Only admins can view spend logs', type: 'auth_error', param: 'None', code: '403' },
      })
    if (this.failNext > 0) {
      this.failNext--
      return send(res, this.failStatus, {
        error: {
          message: 'try again',
          type: 'internal_server_error',
          param: null,
          code: String(this.failStatus),
        },
      })
    }
    const page = Number(q.get('page') ?? '1')
    const pageSize = Number(q.get('page_size') ?? '50')
    const invalid: Obj[] = []
    if (!Number.isInteger(page) || page < 1) invalid.push(boundError('page', q.get('page'), 'ge', 1))
    if (!Number.isInteger(pageSize) || pageSize > 1000) {
      invalid.push(boundError('page_size', q.get('page_size'), 'le', 1000))
    } else if (pageSize < 1) {
      invalid.push(boundError('page_size', q.get('page_size'), 'ge', 1))
    }
    if (invalid.length > 0) return send(res, 422, { detail: invalid })
    const sd = q.get('start_date')
    const ed = q.get('end_date')
    if (!sd || !ed) return bad(res, 'Start date and end date are required')
    const start = parseDate(sd)
    if (start === null)
      return bad(res, `Invalid date format: ${sd}. Expected: 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'`)
    const end = parseDate(ed)
    if (end === null)
      return bad(res, `Invalid date format: ${ed}. Expected: 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'`)
    const sortBy = q.get('sort_by') ?? 'startTime'
    if (!SORT_KEYS.has(sortBy)) return bad(res, `Invalid sort_by: ${sortBy}`)
    const order = q.get('sort_order') ?? 'desc'
    if (order !== 'asc' && order !== 'desc') return bad(res, `Invalid sort_order: ${order}`)
    this.onSpendLogsPage?.(page)

    const now = Date.now()
    const apiKey = q.get('api_key')
    const session = q.get('session_id')
    const requestId = q.get('request_id')
    const status = q.get('status_filter')
    const memoKey = JSON.stringify([start, end, apiKey, session, requestId, status, sortBy, order])
    const settled = this.rows.every((r) => r.visibleAt <= now)
    const cached = settled && this.memo?.key === memoKey && this.memo.rowsLength === this.rows.length
    const matched = cached
      ? (this.memo?.matched ?? [])
      : this.rows.filter(({ row, start: t, visibleAt }) => {
          if (visibleAt > now || t < start || t > end) return false
          if (apiKey !== null && row.api_key !== apiKey) return false
          if (session !== null && !String(row.session_id ?? '').includes(session)) return false
          if (requestId !== null && row.request_id !== requestId) return false
          if (status === 'success' && !(row.status === 'success' || row.status === null)) return false
          if (status && status !== 'success' && row.status !== status) return false
          return true
        })
    const sign = order === 'asc' ? 1 : -1
    if (!cached)
      matched.sort((a, b) => {
        const av = sortBy === 'startTime' ? a.start : Number(a.row[sortBy] ?? 0)
        const bv = sortBy === 'startTime' ? b.start : Number(b.row[sortBy] ?? 0)
        if (av !== bv) return sign * (av - bv)
        const ai = String(a.row.request_id)
        const bi = String(b.row.request_id)
        return ai === bi ? 0 : sign * (ai < bi ? -1 : 1)
      })
    if (settled && !cached) this.memo = { key: memoKey, rowsLength: this.rows.length, matched }
    const total = Math.min(matched.length, SPEND_LOGS_PAGINATION_COUNT_CAP)
    const data = matched.slice((page - 1) * pageSize, page * pageSize).map(({ row }) => {
      const out: Obj = {}
      for (const [k, v] of Object.entries(row)) if (!HEAVY.has(k)) out[k] = v
      return out
    })
    send(res, 200, {
      data,
      total,
      page,
      page_size: pageSize,
      total_pages: Math.ceil(total / pageSize),
      total_is_capped: matched.length > SPEND_LOGS_PAGINATION_COUNT_CAP,
    })
  }

  private generate(body: Obj, res: http.ServerResponse, master: boolean): Answered | undefined {
    if (!master)
      return send(res, 403, {
        error: { message: 'not allowed', type: 'auth_error', param: 'None', code: '403' },
      })
    const key = typeof body.key === 'string' ? body.key : `sk-${randomBytes(11).toString('base64url')}`
    const alias = typeof body.key_alias === 'string' ? body.key_alias : null
    if (alias && [...this.keys.values()].some((k) => k.alias === alias))
      return bad(res, `Key with alias '${alias}' already exists.`)
    const hash = hashKey(key)
    const seconds = durationSeconds(body.duration)
    const expires = seconds === null ? null : new Date(Date.now() + seconds * 1000).toISOString()
    const stored: StoredKey = {
      key,
      hash,
      alias,
      maxBudget: typeof body.max_budget === 'number' ? body.max_budget : null,
      metadata: (body.metadata as Obj) ?? {},
      spendNow: 0,
      spendEvents: [],
      expires,
    }
    this.keys.set(hash, stored)
    send(res, 200, {
      key,
      key_alias: alias,
      key_name: `sk-...${key.slice(-4)}`,
      token: hash,
      token_id: hash,
      expires,
      max_budget: stored.maxBudget,
      spend: 0,
      metadata: stored.metadata,
      created_at: new Date().toISOString(),
    })
  }

  private visibleSpend(k: StoredKey): number {
    const now = Date.now()
    return k.spendEvents.filter((e) => e.visibleAt <= now).reduce((s, e) => s + e.usd, 0)
  }

  private info(key: string | null, res: http.ServerResponse): Answered | undefined {
    const k = key ? (this.keys.get(key) ?? this.keys.get(hashKey(key))) : undefined
    if (!k || !key)
      return send(res, 404, {
        error: { message: 'Key not found in database', type: 'not_found', param: 'key', code: '404' },
      })
    send(res, 200, {
      key,
      info: {
        key_name: `sk-...${k.key.slice(-4)}`,
        key_alias: k.alias,
        spend: this.visibleSpend(k),
        max_budget: k.maxBudget,
        expires: k.expires,
        metadata: k.metadata,
        models: [],
        user_id: null,
        team_id: null,
      },
    })
  }

  private remove(body: Obj, res: http.ServerResponse, master: boolean): Answered | undefined {
    if (!master)
      return send(res, 403, {
        error: { message: 'not allowed', type: 'auth_error', param: 'None', code: '403' },
      })
    const keys = Array.isArray(body.keys)
      ? (body.keys as unknown[]).filter((k): k is string => typeof k === 'string')
      : []
    const deleted: string[] = []
    for (const k of keys) {
      const h = this.keys.has(k) ? k : hashKey(k)
      if (this.keys.delete(h)) deleted.push(k)
    }
    if (deleted.length === 0)
      return send(res, 404, {
        error: { message: 'Key not found in database', type: 'not_found', param: 'keys', code: '404' },
      })
    send(res, 200, { deleted_keys: deleted })
  }

  private completion(
    req: http.IncomingMessage,
    raw: Buffer,
    res: http.ServerResponse,
    key: StoredKey | null,
  ): Answered | undefined {
    const body = parse(raw)
    const started = Date.now()
    const model = typeof body.model === 'string' ? body.model : 'unknown'
    const apiKeyHash = key ? key.hash : hashKey(this.masterKey)
    const headerMeta = safeJson(req.headers['x-litellm-spend-logs-metadata'])
    const keyMeta = (key?.metadata.spend_logs_metadata as Obj | undefined) ?? {}
    // The header replaces a body spend_logs_metadata; key-level values fill in without overriding.
    const slm: Obj = {
      ...keyMeta,
      ...(headerMeta ?? (body.metadata as Obj | undefined)?.spend_logs_metadata ?? {}),
    }
    const sessionId = String(
      req.headers['x-litellm-trace-id'] ?? req.headers['x-litellm-session-id'] ?? randomUUID(),
    )
    const base = {
      api_key: apiKeyHash,
      model,
      metadata: { spend_logs_metadata: slm, user_api_key_alias: key?.alias ?? null },
      sessionId,
    }

    if (this.refuseNext) {
      const kind = this.refuseNext
      this.refuseNext = null
      const [status, errorClass, message] =
        kind === 'auth'
          ? [401, 'AuthenticationError', 'Authentication Error - key is blocked']
          : [429, 'RateLimitError', 'Rate limit reached for key: rpm limit 1, current 2']
      this.write(
        spendRow({
          ...base,
          request_id: `refused-${randomUUID()}`,
          spend: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          start: started,
          end: Date.now(),
          status: 'failure',
          model_id: null,
          metadata: {
            user_api_key_alias: key?.alias ?? null,
            spend_logs_metadata: null,
            error_information: {
              error_class: errorClass,
              error_code: String(status),
              error_message: message,
            },
          },
        }),
        key,
        0,
      )
      return send(res, status, { error: { message, type: errorClass, param: null, code: String(status) } })
    }
    if (key && key.maxBudget !== null && key.spendNow >= key.maxBudget) {
      const message = `Budget has been exceeded! Key=${key.hash.slice(0, 8)} Spend=${key.spendNow} Budget=${key.maxBudget}`
      this.write(
        spendRow({
          ...base,
          request_id: `fail-${randomUUID()}`,
          spend: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          start: started,
          end: Date.now(),
          status: 'failure',
          metadata: {
            ...base.metadata,
            error_information: {
              error_class: 'BudgetExceededError',
              error_code: '400',
              error_message: message,
              llm_provider: null,
            },
          },
        }),
        key,
        0,
      )
      return send(res, 400, { error: { message, type: 'budget_exceeded', param: null, code: '400' } })
    }

    const group = this.fallbackNext ? (this.opts.fallbackGroup ?? `${model}-fallback`) : model
    const routing: Obj = {}
    if (this.fallbackNext) {
      this.fallbackNext = false
      const t = Date.now()
      this.write(
        spendRow({
          ...base,
          request_id: `call-${randomUUID()}`,
          spend: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          start: started,
          end: t,
          status: 'failure',
          model_id: 'deployment-primary',
          metadata: {
            ...base.metadata,
            error_information: {
              error_class: 'RateLimitError',
              error_code: '429',
              error_message: 'provider rate limit',
            },
          },
        }),
        key,
        0,
      )
      if (this.fallbackMarkers)
        Object.assign(routing, { attempted_fallbacks: 1, original_model_group: model })
    }
    for (let n = 0; this.upstreamFailures > 0; n++) {
      this.upstreamFailures--
      const billed = this.billFailedCalls ? Math.ceil(raw.length / 4) : 0
      const usd = billed > 0 ? Math.round(((billed * (this.opts.prices?.input ?? 1)) / 1e6) * 1e10) / 1e10 : 0
      this.write(
        spendRow({
          ...base,
          request_id: `call-${randomUUID()}`,
          spend: usd,
          prompt_tokens: billed,
          completion_tokens: 0,
          start: Date.now(),
          end: Date.now(),
          status: 'failure',
          model_id: 'deployment-primary',
          metadata: {
            ...base.metadata,
            attempted_retries: n,
            max_retries: 3,
            error_information: {
              error_class: this.upstreamError.errorClass,
              error_code: String(this.upstreamError.status),
              error_message: 'upstream call failed',
            },
          },
        }),
        key,
        usd,
      )
      routing.attempted_retries = n + 1
      routing.max_retries = 3
    }
    const prompt = Math.ceil(raw.length / 4)
    const completion = 8
    const prices = this.opts.prices ?? { input: 1, output: 2 }
    const cost = Math.round(((prompt * prices.input + completion * prices.output) / 1e6) * 1e10) / 1e10
    const stream = body.stream === true
    const zero = stream && this.opts.zeroSpendOnStream === true
    const id = `chatcmpl-${randomUUID()}`
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0 },
    }
    const finishRow = (): void =>
      this.write(
        spendRow({
          ...base,
          request_id: id,
          spend: zero ? 0 : cost,
          prompt_tokens: prompt,
          completion_tokens: completion,
          start: started,
          end: Date.now(),
          model_group: group,
          metadata: {
            ...base.metadata,
            ...routing,
            usage_object: usage,
            cost_breakdown: zero ? { total_cost: cost } : null,
          },
        }),
        key,
        zero ? 0 : cost,
      )
    if (!stream) {
      send(res, 200, {
        id,
        object: 'chat.completion',
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
      })
      finishRow()
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] })}\n\n`,
    )
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`,
    )
    res.end('data: [DONE]\n\n')
    finishRow()
  }

  private write(row: Obj, key: StoredKey | null, usd: number): void {
    if (this.dropNextRows > 0) {
      this.dropNextRows--
      return
    }
    const visibleAt = Date.now() + (this.opts.visibilityDelayMs ?? 0)
    this.rows.push({ row, start: Date.parse(String(row.startTime)), visibleAt })
    if (key) {
      key.spendNow += usd
      key.spendEvents.push({ usd, visibleAt })
    }
  }
}

/** A spend-log row in the v2 list shape (telemetry.md 6.1/6.3/6.4). */
export function spendRow(r: {
  request_id: string
  api_key: string
  spend: number
  prompt_tokens: number
  completion_tokens: number
  start: number
  end: number
  model: string
  metadata: Obj
  sessionId: string
  status?: 'success' | 'failure'
  /** Deployment called (`model_info.id`); null when the gateway refused before any call. */
  model_id?: string | null
  /** Model group that answered; default `model`. */
  model_group?: string
}): Obj {
  return {
    request_id: r.request_id,
    call_type: 'acompletion',
    api_key: r.api_key,
    spend: r.spend,
    total_tokens: r.prompt_tokens + r.completion_tokens,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    startTime: iso(r.start),
    endTime: iso(r.end),
    completionStartTime: iso(r.end),
    model: r.model_group ?? r.model,
    model_id: r.model_id === undefined ? 'fake-deployment' : r.model_id,
    model_group: r.model_group ?? r.model,
    custom_llm_provider: 'openai',
    api_base: 'http://127.0.0.1/fake',
    user: '',
    metadata: {
      user_api_key: r.api_key,
      spend_logs_metadata: null,
      usage_object: null,
      additional_usage_values: null,
      error_information: null,
      cost_breakdown: null,
      status: r.status ?? 'success',
      ...r.metadata,
    },
    cache_hit: 'False',
    cache_key: 'Cache OFF',
    request_tags: [],
    team_id: null,
    organization_id: null,
    end_user: '',
    requester_ip_address: null,
    session_id: r.sessionId,
    status: r.status ?? 'success',
    mcp_namespaced_tool_name: null,
    agent_id: null,
    request_duration_ms: r.end - r.start,
    messages: { never: 'listed' },
    response: { never: 'listed' },
    proxy_server_request: { never: 'listed' },
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): Answered {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
  return true
}

function bad(res: http.ServerResponse, message: string): Answered {
  return send(res, 400, { error: { message, type: 'bad_request_error', param: 'None', code: '400' } })
}

function parse(raw: Buffer): Obj {
  try {
    const v = JSON.parse(raw.toString('utf8'))
    return v && typeof v === 'object' ? (v as Obj) : {}
  } catch {
    return {}
  }
}

function safeJson(v: string | string[] | undefined): Obj | null {
  if (typeof v !== 'string') return null
  try {
    const o = JSON.parse(v)
    return o && typeof o === 'object' ? (o as Obj) : null
  } catch {
    return null
  }
}

/** `YYYY-MM-DD` (midnight at the start of that day) or `YYYY-MM-DD HH:MM:SS`, UTC; else null. */
function parseDate(v: string): number | null {
  if (DATE_ONLY.test(v)) return Date.parse(`${v}T00:00:00Z`)
  if (DATE_TIME.test(v)) return Date.parse(`${v.replace(' ', 'T')}Z`)
  return null
}

function durationSeconds(v: unknown): number | null {
  if (typeof v !== 'string') return null
  const m = /^(\d+)([smhd])$/.exec(v)
  if (!m) return null
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd']
}

/**
 * One entry of FastAPI's 422 `detail` list for a query parameter outside its bound (pydantic v2's
 * `greater_than_equal` / `less_than_equal` errors, as LiteLLM answers them).
 */
function boundError(param: string, input: string | null, bound: 'ge' | 'le', limit: number): Obj {
  const [type, words] =
    bound === 'ge' ? ['greater_than_equal', 'greater than'] : ['less_than_equal', 'less than']
  return {
    type,
    loc: ['query', param],
    msg: `Input should be ${words} or equal to ${limit}`,
    input,
    ctx: { [bound]: limit },
  }
}
