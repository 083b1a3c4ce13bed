import { requestIdentity } from '../../records/identity.js'
import { rowAttemptId } from './map-row.js'
import { LiteLLMError, type RetryOptions, withRetry } from './retry.js'

type Obj = Record<string, unknown>

/** `POST /key/generate` fields we use (LiteLLM 6.7; OpenAPI `GenerateKeyRequest`). */
export interface GenerateKeyRequest {
  key_alias?: string
  /** `"30s" | "30m" | "30h" | "30d"`; null = no expiry. */
  duration?: string | null
  /** USD; LiteLLM refuses requests once the key's spend reaches it. */
  max_budget?: number | null
  metadata?: Obj
  models?: string[]
}

export interface GeneratedKey {
  /** The raw `sk-…` key: returned once, never logged. */
  key: string
  key_alias: string | null
  expires: string | null
}

/** `/spend/logs/v2` filters. Dates are `YYYY-MM-DD HH:MM:SS` UTC, both inclusive. */
export interface SpendLogsQuery {
  start: string
  end: string
  /** sha256 hex of the virtual key: v2 compares the column verbatim (F05). */
  apiKeyHash?: string
  /** Substring match on session_id. */
  sessionId?: string
  pageSize: number
  sortOrder?: 'asc' | 'desc'
}

export interface SpendLogsPage {
  data: Obj[]
  /** min(count, 10 000) (F04). */
  total: number | null
  total_pages: number | null
  total_is_capped: boolean
}

export interface FetchedSpendLogs {
  /** Unique rows by identity (real request id + start time + attempt), in the order first seen. */
  rows: Obj[]
  pages: number
  /** Rows received, duplicates included. */
  received: number
  duplicatesDropped: number
  totalReported: number | null
  capped: boolean
}

export interface LiteLLMClientOptions {
  baseUrl: string
  /** Admin (master) key for the management and spend routes. */
  masterKey: string
  retry?: RetryOptions
  /** Per HTTP request, ms. Default 30 000. */
  timeoutMs?: number
}

/** Paging stopped part-way (after retries): the rows fetched so far travel with the error. */
export class SpendLogsPagingError extends Error {
  constructor(
    readonly partial: FetchedSpendLogs,
    readonly cause: unknown,
  ) {
    super(
      `spend-log paging aborted on page ${partial.pages + 1} after ${partial.rows.length} rows: ${cause instanceof Error ? cause.message : String(cause)}`,
    )
    this.name = 'SpendLogsPagingError'
  }
}

/** Page size ceiling of `/spend/logs/v2` (FastAPI 422 above it). */
export const MAX_PAGE_SIZE = 1000
/** A safety stop for paging: 1 000 pages of up to 1 000 rows. */
const MAX_PAGES = 1000

/**
 * A client for the documented LiteLLM proxy contract (telemetry.md 6.1–6.7): virtual keys
 * (`/key/generate`, `/key/info`, `/key/delete`) and `/spend/logs/v2`. Every call retries 429, 5xx and
 * network errors with backoff and jitter; a 4xx contract error throws {@link LiteLLMError} at once.
 */
export class LiteLLMClient {
  private readonly base: string

  constructor(private readonly opts: LiteLLMClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '')
  }

  private async call(
    method: 'GET' | 'POST',
    route: string,
    query?: Record<string, string>,
    body?: unknown,
  ): Promise<unknown> {
    const url = new URL(`${this.base}${route}`)
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v)
    return withRetry(async () => {
      const res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.opts.masterKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
      })
      const text = await res.text()
      if (!res.ok) {
        const retryAfter = Number(res.headers.get('retry-after'))
        throw new LiteLLMError(
          res.status,
          route,
          errorMessage(text),
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null,
        )
      }
      try {
        return JSON.parse(text) as unknown
      } catch {
        throw new LiteLLMError(res.status, route, 'answer is not JSON')
      }
    }, this.opts.retry)
  }

  /** `POST /key/generate` → the raw key (returned once). */
  async generateKey(req: GenerateKeyRequest): Promise<GeneratedKey> {
    const r = asObj(await this.call('POST', '/key/generate', undefined, req))
    if (typeof r.key !== 'string') throw new LiteLLMError(200, '/key/generate', 'answer has no key')
    return {
      key: r.key,
      key_alias: typeof r.key_alias === 'string' ? r.key_alias : null,
      expires: typeof r.expires === 'string' ? r.expires : null,
    }
  }

  /** `GET /key/info?key=…` → the key's `info` (spend in USD, max_budget, metadata…). */
  async keyInfo(key: string): Promise<{ spend: number | null; info: Obj }> {
    const r = asObj(await this.call('GET', '/key/info', { key }))
    const info = asObj(r.info)
    return { spend: typeof info.spend === 'number' && Number.isFinite(info.spend) ? info.spend : null, info }
  }

  /** `POST /key/delete {keys}` → the deleted keys. Spend-log rows survive deletion. */
  async deleteKeys(keys: string[]): Promise<string[]> {
    const r = asObj(await this.call('POST', '/key/delete', undefined, { keys }))
    return Array.isArray(r.deleted_keys)
      ? r.deleted_keys.filter((k): k is string => typeof k === 'string')
      : []
  }

  /** One page of `GET /spend/logs/v2` (1-based). */
  async spendLogsPage(q: SpendLogsQuery, page: number): Promise<SpendLogsPage> {
    if (q.pageSize < 1 || q.pageSize > MAX_PAGE_SIZE) throw new Error(`page_size must be 1…${MAX_PAGE_SIZE}`)
    const query: Record<string, string> = {
      start_date: q.start,
      end_date: q.end,
      page: String(page),
      page_size: String(q.pageSize),
      sort_by: 'startTime',
      sort_order: q.sortOrder ?? 'asc',
    }
    if (q.apiKeyHash) query.api_key = q.apiKeyHash
    if (q.sessionId) query.session_id = q.sessionId
    const r = asObj(await this.call('GET', '/spend/logs/v2', query))
    return {
      data: Array.isArray(r.data) ? r.data.filter((x): x is Obj => !!x && typeof x === 'object') : [],
      total: typeof r.total === 'number' ? r.total : null,
      total_pages: typeof r.total_pages === 'number' ? r.total_pages : null,
      total_is_capped: r.total_is_capped === true,
    }
  }

  /**
   * Every row matching `q`: pages until an empty page — never trusting `total_pages`, which
   * under-counts once `total` is capped at 10 000 (F04) — and de-duplicates by `request_id` (offset
   * paging repeats a row when one arrives mid-way). A page that still fails after retries throws
   * {@link SpendLogsPagingError} carrying the rows fetched so far (F04: never a silent truncation).
   */
  async fetchSpendLogs(
    q: SpendLogsQuery,
    onPage?: (page: number, rows: number) => void,
  ): Promise<FetchedSpendLogs> {
    const seen = new Set<string>()
    const rows: Obj[] = []
    let received = 0
    let totalReported: number | null = null
    let capped = false
    let page = 1
    for (; page <= MAX_PAGES; page++) {
      let p: SpendLogsPage
      try {
        p = await this.spendLogsPage(q, page)
      } catch (e) {
        if (page === 1) throw e
        const partial = {
          rows,
          pages: page - 1,
          received,
          duplicatesDropped: received - rows.length,
          totalReported,
          capped,
        }
        throw new SpendLogsPagingError(partial, e)
      }
      if (page === 1) {
        totalReported = p.total
        capped = p.total_is_capped
      }
      received += p.data.length
      for (const r of p.data) {
        // One request only on a real identity (issue: identity by placeholder): a missing, empty or
        // placeholder id never merges two rows; the duplicate check names look-alikes instead.
        const id = spendRowIdentity(r)
        if (id !== null) {
          if (seen.has(id)) continue
          seen.add(id)
        }
        rows.push(r)
      }
      onPage?.(page, p.data.length)
      // Only an empty page ends the pass: a short page may be a server-side page-size cap, and
      // rows arriving mid-pass shift later pages (F04).
      if (p.data.length === 0) break
    }
    if (page > MAX_PAGES)
      throw new Error(`spend logs did not end after ${MAX_PAGES} pages: narrow the window`)
    return { rows, pages: page, received, duplicatesDropped: received - rows.length, totalReported, capped }
  }

  /**
   * How many distinct rows match, exactly: `total` of a one-row page while it is under LiteLLM's cap,
   * else (`total_is_capped`, F04) the de-duplicated count of a full paging pass, since a capped `total`
   * reads 10 000 however many rows there are. A pass that aborts part-way counts the rows it got (a
   * lower bound). `paged` holds the pass when there was one; `total` is null when LiteLLM gave no count.
   */
  async countSpendLogsExact(
    q: SpendLogsQuery,
  ): Promise<{ total: number | null; capped: boolean; paged: FetchedSpendLogs | null }> {
    const c = await this.countSpendLogs(q)
    if (!c.capped) return { ...c, paged: null }
    const { fetched: paged } = await this.fetchSpendLogsOrPartial(q)
    return { total: paged.rows.length, capped: true, paged }
  }

  /**
   * {@link fetchSpendLogs}, except that paging aborted part-way is not thrown: `fetched` then holds the
   * rows fetched before it and `aborted` the error (its message says where it stopped); else `aborted`
   * is null. Other failures still throw.
   */
  async fetchSpendLogsOrPartial(
    q: SpendLogsQuery,
  ): Promise<{ fetched: FetchedSpendLogs; aborted: SpendLogsPagingError | null }> {
    try {
      return { fetched: await this.fetchSpendLogs(q), aborted: null }
    } catch (e) {
      if (!(e instanceof SpendLogsPagingError)) throw e
      return { fetched: e.partial, aborted: e }
    }
  }

  /** How many rows match (`total` of a one-row page; capped at 10 000). */
  async countSpendLogs(
    q: Omit<SpendLogsQuery, 'pageSize'>,
  ): Promise<{ total: number | null; capped: boolean }> {
    const p = await this.spendLogsPage({ ...q, pageSize: 1 }, 1)
    return { total: p.total, capped: p.total_is_capped }
  }
}

function asObj(v: unknown): Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {}
}

/** LiteLLM errors come as `{error:{message}}`, `{detail:{error}}`, `{detail:[…]}` (FastAPI 422) or text. */
function errorMessage(text: string): string {
  try {
    const o = asObj(JSON.parse(text))
    const err = asObj(o.error)
    if (typeof err.message === 'string') return err.message
    if (typeof o.error === 'string') return o.error
    if (typeof o.detail === 'string') return o.detail
    const detail = asObj(o.detail)
    if (typeof detail.error === 'string') return detail.error
    if (Array.isArray(o.detail)) {
      return o.detail
        .map((d) => `${asObj(d).loc ? (asObj(d).loc as unknown[]).join('.') : ''}: ${asObj(d).msg}`)
        .join('; ')
    }
  } catch {}
  return text.slice(0, 300)
}

/** A spend-log row's identity (request id, startTime, our attempt id), null without a real request id. */
export function spendRowIdentity(r: Obj): string | null {
  return requestIdentity(r.request_id, r.startTime, rowAttemptId(r))
}
