import { randomUUID } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import { type Attribution, LEDGER_SCHEMA_VERSION, type LedgerRow } from '../records/ledger.js'
import { requestTarget } from '../util/request-target.js'
import { keyCandidates, keyHeaderFor, newAttemptKey, upstreamHeaders, upstreamSearch } from './attempt-key.js'
import { type CacheSemantics, cacheRuleFor } from './cache-semantics.js'
import type { AttemptBudget } from './capture.js'
import { LedgerWriter } from './ledger-writer.js'
import { hasTokens, NULL_TOKENS, normalizeUsage, projectUsage } from './normalize.js'
import { observeResponse, type ResponseObservation, type ResponseObserver } from './observe.js'
import { offeredToolsField, withOfferedTools } from './offered-request.js'
import { chooseProxySpend, type Prices } from './prices.js'
import { errorClassOfStatus, type ProxyErrorKind, providerError } from './provider-errors.js'
import {
  classifyPath,
  DEFAULT_MAX_BODY_BYTES,
  decodeBody,
  decodeSafe,
  inspectRequest,
  type PathInfo,
  REQUEST_UNSUMMARIZED_FLAG,
  type RequestInfo,
} from './request-shape.js'
import { reserveUsd } from './reserve.js'
import { checkLedgerRow, type RowProblem } from './row-check.js'
import { USAGE_PARTIAL_FLAG } from './summary.js'

/** The model route as the proxy needs it: provider (for cache semantics) and prices (for spend). */
export interface ProxyRoute {
  provider: string | null
  prices?: Prices | null
  /** The manifest's `model.cache_semantics`, when declared. */
  cacheSemantics?: CacheSemantics
}

export interface RecordingProxyOptions {
  /** Upstream base: scheme, host, port and an optional path prefix; request paths are appended. */
  upstream: string
  /** The real upstream key, swapped in for the per-attempt key (from the route's `api_key_env`). */
  upstreamKey?: string
  route: ProxyRoute
  /** JSONL ledger (one file per leg); rows are appended as they complete. Omit to keep rows in memory. */
  ledgerFile?: string
  runId: string
  experimentId: string
  /** Send `x-hw-cell|instance|trial|attempt` upstream: only for the scripted model, never a real provider. */
  forwardAttribution?: boolean
  /**
   * Standalone mode: any key is accepted and forwarded; attribution comes from a path prefix
   * `/a/<cell>:<instance>:<trial>:<attempt>` when present, else the row's attribution is null.
   */
  standalone?: boolean
  /** Idle limit of one upstream exchange (waiting for headers or between chunks), ms. Default 600 000. */
  upstreamTimeoutMs?: number
  /** Listen port; 0 (default) = any free port. Always 127.0.0.1. */
  port?: number
  /** Called with every row after it is written. */
  onRow?: (row: LedgerRow) => void
  /**
   * Largest request body, bytes, as received and after its content-encoding is undone (default
   * 64 MiB). A larger one is answered 413 in the provider's shape, recorded (class
   * `request_too_large`) and never forwarded.
   */
  maxBodyBytes?: number
  /**
   * Reads a request body for its row (default {@link inspectRequest}). Run before the request is
   * forwarded: when it throws, the request is refused and recorded, never forwarded unrecorded.
   */
  summarizeRequest?: (path: PathInfo, body: Buffer, contentEncoding: string | undefined) => RequestInfo
}

/** One attempt as the proxy knows it: its key, budget and rows. */
export interface AttemptRegistration {
  attribution: Attribution
  budget?: AttemptBudget
  /** Upstream key for this attempt only (e.g. a LiteLLM virtual key); default: the proxy's. */
  upstreamKey?: string
  /** Extra upstream headers for this attempt (e.g. `x-litellm-spend-logs-metadata`). */
  extraHeaders?: Record<string, string>
}

export interface ProxyAttempt {
  /** The per-attempt key a harness must send (any of the usual key headers, `?key=` or `/a/<key>`). */
  readonly key: string
  /** Rows of this attempt so far, in completion order. */
  readonly rows: readonly LedgerRow[]
  /** Figures of those rows that broke a rule and were set to null (see `checkLedgerRow`). */
  readonly problems: readonly RowProblem[]
  /** Requests forwarded so far (budget rejections excluded). */
  readonly requests: number
  readonly inflight: number
  /** Requests still unrecorded when {@link idle} gave up on them (0 normally). */
  readonly unsettled: number
  /**
   * Resolves when no request of the attempt is in flight. After `timeoutMs` the remaining ones are
   * aborted (recorded as failures, class `client_aborted`) and it resolves once they are recorded.
   */
  idle(timeoutMs?: number): Promise<void>
  /** Forget the key: later requests with it are answered 401 and recorded unattributed. */
  release(): void
}

const ANSWER_HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'trailer',
])

class AttemptState implements ProxyAttempt {
  readonly rows: LedgerRow[] = []
  readonly problems: RowProblem[] = []
  requests = 0
  inflight = 0
  spendUsd = 0
  /** Spend reserved by forwarded requests whose rows are not in yet (see {@link reserveUsd}). */
  reservedUsd = 0
  readonly aborters = new Set<() => void>()
  private waiters: (() => void)[] = []

  constructor(
    readonly key: string,
    readonly reg: AttemptRegistration,
    private readonly owner: RecordingProxy,
  ) {}

  settled(): void {
    if (this.inflight > 0) return
    const ws = this.waiters
    this.waiters = []
    for (const w of ws) w()
  }

  idle(timeoutMs = 30_000): Promise<void> {
    if (this.inflight === 0) return Promise.resolve()
    return new Promise((resolve) => {
      let grace: NodeJS.Timeout | null = null
      const timer = setTimeout(() => {
        for (const abort of [...this.aborters]) abort()
        // Aborted exchanges record themselves within a few turns of the event loop; should one never
        // do so, the attempt is not held: it resolves with the rows in and `unsettled` counts the rest.
        grace = setTimeout(done, IDLE_GRACE_MS)
        grace.unref()
      }, timeoutMs)
      timer.unref()
      const done = (): void => {
        clearTimeout(timer)
        if (grace) clearTimeout(grace)
        this.unsettled = this.inflight
        resolve()
      }
      this.waiters.push(done)
    })
  }

  /** Requests still unrecorded when {@link idle} gave up on them (0 normally). */
  unsettled = 0

  release(): void {
    this.owner.release(this.key)
  }
}

interface Outcome {
  httpStatus: number | null
  errorClass: string | null
  errorCode: string | null
  observation: ResponseObservation | null
  /** The upstream was not asked, or answered with an error: nothing was billed. */
  noCharge: boolean
  /** The proxy answered itself (unknown key, budget, upstream unreachable): the upstream never saw it. */
  local?: boolean
}

/** Flag of rows sent upstream a second time after a stale kept-alive socket failed unsent. */
export const UPSTREAM_RETRIED = 'upstream_retried'

/** Flag of rows the proxy answered itself; a spend-log source behind it has no row for them. */
export const ANSWERED_BY_PROXY = 'answered_by_proxy'

/**
 * The recording proxy: forwards every request and answer unchanged (SSE chunks are written as they
 * arrive), swaps the per-attempt key for the real upstream key, enforces per-attempt budgets, and
 * writes one ledger row per request — an allowlisted projection: never bodies, headers or keys.
 * A row is built once its answer is on the way to the client, off the forwarding path (within the
 * same turn of the event loop): {@link ProxyAttempt.idle} resolves once the attempt's rows are in.
 * Listens on 127.0.0.1 only. Start with {@link RecordingProxy.start}.
 */
export class RecordingProxy {
  readonly unattributedRows: LedgerRow[] = []
  private readonly attempts = new Map<string, AttemptState>()
  private readonly ledger: LedgerWriter | null
  private readonly upstreamUrl: URL
  private readonly basePath: string
  private readonly agent: http.Agent
  private readonly requestFn: typeof http.request
  private server: http.Server | null = null
  private port = 0
  private stopping = false
  /** Set when a ledger write failed: new requests are refused from then on (they could not be recorded). */
  private ledgerError: string | null = null
  /** Exchanges received whose row is not written yet: {@link close} waits for them. */
  private unrecorded = 0
  /** Exchanges in flight per client connection (several when requests are pipelined). */
  private readonly busySockets = new WeakMap<object, number>()
  private recordedAll: (() => void)[] = []

  private constructor(private readonly opts: RecordingProxyOptions) {
    this.upstreamUrl = new URL(opts.upstream)
    if (this.upstreamUrl.protocol !== 'http:' && this.upstreamUrl.protocol !== 'https:') {
      throw new Error(`upstream must be http(s), got ${opts.upstream}`)
    }
    this.basePath = this.upstreamUrl.pathname.replace(/\/+$/, '')
    const secure = this.upstreamUrl.protocol === 'https:'
    this.agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
      : new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
    this.requestFn = secure ? https.request : http.request
    this.ledger = opts.ledgerFile ? new LedgerWriter(opts.ledgerFile) : null
  }

  /** Start listening on 127.0.0.1 (`port`, default 0 = any free port). */
  static async start(opts: RecordingProxyOptions): Promise<RecordingProxy> {
    const proxy = new RecordingProxy(opts)
    const server = http.createServer({ keepAliveTimeout: 65_000, noDelay: true }, (req, res) =>
      proxy.handle(req, res),
    )
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => proxy.clientError(err, socket))
    // Requests Node would answer itself, unrecorded: a CONNECT tunnel and an Expect it cannot meet.
    server.on('connect', (req: http.IncomingMessage, socket: Duplex) => proxy.refuseConnect(req, socket))
    server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) =>
      proxy.refuseExpectation(req, res),
    )
    // Requests may legitimately stream for a long time; the upstream idle timeout governs instead.
    server.requestTimeout = 0
    server.headersTimeout = 60_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve())
    })
    proxy.server = server
    proxy.port = (server.address() as AddressInfo).port
    return proxy
  }

  /** `http://127.0.0.1:<port>`: the base URL harnesses get (OpenAI-style clients append `/v1`). */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Register an attempt under a fresh random key. */
  register(reg: AttemptRegistration): ProxyAttempt {
    const key = newAttemptKey()
    const state = new AttemptState(key, reg, this)
    this.attempts.set(key, state)
    return state
  }

  /** @internal */
  release(key: string): void {
    this.attempts.delete(key)
  }

  /**
   * Stop listening, end open connections (exchanges in flight are recorded with class
   * `proxy_stopped`), write their rows and close the ledger file.
   */
  async close(): Promise<void> {
    const server = this.server
    this.server = null
    this.stopping = true
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
    }
    this.agent.destroy()
    // Exchanges cut by the stop still get their rows (class `proxy_stopped`) before the file closes;
    // their sockets report the cut a turn or two of the event loop later.
    if (this.unrecorded > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000)
        this.recordedAll.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    this.ledger?.close()
  }

  private findAttempt(candidates: { key: string }[]): { state: AttemptState | null; key: string | null } {
    for (const c of candidates) {
      const state = this.attempts.get(c.key)
      if (state) return { state, key: c.key }
    }
    return { state: null, key: null }
  }

  /**
   * CONNECT (a tunnel request; this proxy forwards model API calls only): answered 405 and recorded
   * as a `bad_request` row, attributed when it carries an attempt's key.
   */
  refuseConnect(req: http.IncomingMessage, socket: Duplex): void {
    guardSocket(socket as Socket)
    const status = 405
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nAllow: GET, POST\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
    )
    this.recordLocal(req, 'CONNECT', status, 'bad_request', 'connect_refused')
  }

  /** An `Expect:` other than 100-continue: answered 417 as Node would, and recorded. */
  refuseExpectation(req: http.IncomingMessage, res: http.ServerResponse): void {
    const status = 417
    res.writeHead(status, { connection: 'close', 'content-length': '0' }).end()
    req.resume()
    this.recordLocal(req, `${req.method ?? 'GET'} expect`, status, 'bad_request', 'expectation_failed')
  }

  /** A row for a request answered here without reaching `handle`. */
  private recordLocal(
    req: http.IncomingMessage,
    callType: string,
    status: number,
    errorClass: string,
    errorCode: string,
  ): void {
    const url = requestTarget(req.url)
    const found = this.findAttempt(keyCandidates(req.headers, url?.searchParams ?? null, null))
    const attempt = found.state
    if (attempt) attempt.inflight++
    const exchange: Exchange = { attempt, reserved: 0, settled: false }
    try {
      const row = this.localRow(
        callType,
        status,
        errorClass,
        errorCode,
        attempt ? attempt.reg.attribution : null,
      )
      this.emit(row, exchange)
    } finally {
      this.settle(exchange)
    }
  }

  /**
   * A request Node could not parse (a header block over its limit, conflicting lengths, a broken
   * chunked body): answered as Node would (431 or 400, then the connection closes) and recorded as an
   * unattributed `bad_request` row — unless an exchange on that connection is already in flight, which
   * records itself. A client that merely went away gets nothing.
   */
  private clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
    )
    if ((this.busySockets.get(socket) ?? 0) > 0) return
    const row = this.localRow('unparsed request', status, 'bad_request', err.code ?? null, null)
    this.emit(row, { attempt: null, reserved: 0, settled: false })
  }

  /** The row of a request answered here, never forwarded: nothing charged, no model, no body. */
  private localRow(
    callType: string,
    status: number,
    errorClass: string,
    errorCode: string | null,
    attribution: Attribution | null,
  ): LedgerRow {
    const now = performance.now()
    return this.buildRowOrFallback({
      path: { api: 'other', callType, model: null, stream: null },
      startedAt: new Date(),
      t0: now,
      t1: now,
      firstByte: null,
      chunks: [],
      contentEncoding: undefined,
      info: null,
      attribution,
      outcome: { httpStatus: status, errorClass, errorCode, observation: null, noCharge: true, local: true },
      retried: false,
    })
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.unrecorded++
    this.busySockets.set(req.socket, (this.busySockets.get(req.socket) ?? 0) + 1)
    const startedAt = new Date()
    const t0 = performance.now()
    const url = requestTarget(req.url)
    let pathname = url?.pathname ?? '/'
    let pathToken: string | null = null
    const prefixed = /^\/a\/([^/]+)(\/.*)?$/.exec(pathname)
    if (prefixed) {
      pathToken = decodeSafe(prefixed[1] ?? '')
      pathname = prefixed[2] ?? '/'
    }
    const method = req.method ?? 'GET'
    const path = classifyPath(method, pathname)
    const candidates = keyCandidates(req.headers, url?.searchParams ?? null, pathToken)
    const found = this.findAttempt(candidates)
    const attempt = found.state
    const attribution = attempt
      ? attempt.reg.attribution
      : this.opts.standalone
        ? this.standaloneAttribution(pathToken)
        : null

    // Keep a copy of the request body for its shape (sizes and counts); it is never stored.
    const chunks: Buffer[] = []
    const maxBody = this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    let received = 0
    let reqEnded = false
    const reqDone = new Promise<void>((resolve) => {
      req.on('data', (c: Buffer) => {
        received += c.length
        // Over the limit nothing more is kept: the request is refused once it has been read.
        if (received > maxBody) chunks.length = 0
        else chunks.push(c)
      })
      req.once('end', () => {
        reqEnded = true
        // One buffer from here on: sent upstream and read for the row.
        if (chunks.length > 1) chunks.splice(0, chunks.length, Buffer.concat(chunks))
        resolve()
      })
      req.once('close', resolve)
      req.once('error', () => resolve())
    })

    let done = false
    /** The request's summary, read once its body is in (before anything goes upstream). */
    let info: RequestInfo | null = null
    /** Spend reserved for this request while it is in flight. */
    let reserved = 0
    /** Sent once more after a stale kept-alive socket failed. */
    let retried = false
    let firstByte: number | null = null
    let observer: ResponseObserver | null = null
    let observed: Promise<ResponseObservation | null> | null = null
    // The observer is ended exactly once, whichever way the exchange ends.
    const finishObservation = (): Promise<ResponseObservation | null> => {
      observed ??= observer ? observer.end() : Promise.resolve(null)
      return observed
    }
    /**
     * Record the exchange once, however it ended. The answer is read and the row built after the
     * answer is handed to the socket and after other ready I/O in this turn of the event loop, so a
     * burst of answers is forwarded before any of their rows is built.
     */
    const record = (outcome: (observation: ResponseObservation | null) => Outcome): void => {
      if (done) return
      done = true
      const t1 = performance.now()
      const exchange: Exchange = { attempt, reserved, settled: false }
      const recorded = (async () => {
        await reqDone
        await new Promise((resolve) => setImmediate(resolve))
        let observation: ResponseObservation | null = null
        try {
          observation = await finishObservation()
        } catch {
          // An answer that cannot be read is recorded without usage (flagged `usage_absent`).
        }
        const o = outcome(observation)
        const x: RowInput = {
          path,
          startedAt,
          t0,
          t1,
          firstByte,
          chunks,
          contentEncoding: header(req, 'content-encoding'),
          info,
          attribution,
          outcome: o,
          retried,
        }
        this.emit(this.buildRowOrFallback(x), exchange)
      })()
      void recorded
        .catch((e: unknown) => {
          process.stderr.write(`harness-watch: a ledger row could not be recorded: ${messageOf(e)}\n`)
        })
        .finally(() => {
          // However recording went, the exchange no longer counts as in flight.
          this.settle(exchange)
          this.busySockets.set(req.socket, (this.busySockets.get(req.socket) ?? 1) - 1)
          if (--this.unrecorded > 0) return
          const waiters = this.recordedAll
          this.recordedAll = []
          for (const w of waiters) w()
        })
    }

    /** Answer `kind` in the provider's shape (the body has been read) and record the refusal. */
    const refuse = (kind: ProxyErrorKind, errorClass: string, errorCode: string = kind): void => {
      const status = answerProviderError(res, path.api, kind)
      record(() => ({
        httpStatus: status,
        errorClass,
        errorCode,
        observation: null,
        noCharge: true,
        local: true,
      }))
    }
    const reject = (kind: ProxyErrorKind, errorClass: string): void => {
      // Answer after the body is read, so the client is not cut off mid-upload.
      void reqDone.then(() => refuse(kind, errorClass))
      req.resume()
    }

    if (attempt) attempt.inflight++
    if (url === null) {
      reject('bad_request', 'bad_request')
      return
    }
    if (!attempt && !this.opts.standalone) {
      reject('unknown_key', 'unknown_key')
      return
    }

    const upstreamKey = attempt?.reg.upstreamKey ?? this.opts.upstreamKey
    // Standalone: whatever key the client sent stands for the real one.
    const keyed = candidates.filter((c) => c.place !== 'path')
    const swapFrom = found.key ?? (this.opts.standalone ? (keyed[0]?.key ?? null) : null)
    const headers = upstreamHeaders(
      req.headers,
      swapFrom,
      upstreamKey,
      this.extraHeaders(attempt, attribution),
    )
    if (upstreamKey !== undefined && keyed.length === 0) {
      // Identified by path prefix only: carry the real key the way this API expects it.
      const [name, value] = keyHeaderFor(path.api, upstreamKey)
      headers[name] = value
    }
    const search = upstreamSearch(url.search, swapFrom, upstreamKey)
    const upstreamRequest: http.RequestOptions = {
      protocol: this.upstreamUrl.protocol,
      hostname: this.upstreamUrl.hostname,
      port: this.upstreamUrl.port || undefined,
      method,
      path: `${this.basePath}${pathname}${search}`,
      headers,
      agent: this.agent,
    }
    let up: http.ClientRequest | null = null

    // Client gone before the answer finished (harness killed, or `idle()` gave up): stop the upstream
    // exchange and record what was seen so far.
    let clientGone = false
    let upstreamGone = false
    const abort = (): void => {
      res.destroy()
    }
    attempt?.aborters.add(abort)
    res.once('close', () => {
      attempt?.aborters.delete(abort)
      if (res.writableFinished || done || upstreamGone) return
      clientGone = true
      up?.destroy()
      const httpStatus = res.headersSent ? res.statusCode : null
      record((observation) => ({
        httpStatus,
        errorClass: this.stopping ? 'proxy_stopped' : 'client_aborted',
        errorCode: null,
        observation,
        noCharge: false,
      }))
    })

    const onUpstreamError = (err: NodeJS.ErrnoException): void => {
      if (done || clientGone) return
      // A kept-alive socket the upstream had already closed fails before any answer: the request
      // never reached it, so it is sent once more on a fresh socket (Node's documented remedy).
      const code = err.code ?? ''
      if (!retried && up?.reusedSocket && !res.headersSent && reqEnded && STALE_SOCKET.has(code)) {
        retried = true
        const again = this.requestFn(upstreamRequest)
        up = again
        wire(again)
        again.end(chunks[0] ?? Buffer.alloc(0))
        return
      }
      if (this.stopping) {
        // The proxy is closing: it cut the upstream exchange itself.
        upstreamGone = true
        res.destroy()
        const httpStatus = res.headersSent ? res.statusCode : null
        record((observation) => ({
          httpStatus,
          errorClass: 'proxy_stopped',
          errorCode: null,
          observation,
          noCharge: false,
        }))
        return
      }
      const timeout = err instanceof TimeoutMark
      const kind: ProxyErrorKind = timeout ? 'upstream_timeout' : 'upstream_unreachable'
      if (res.headersSent) {
        // Mid-answer: the client sees a broken stream, as it would from the upstream itself.
        upstreamGone = true
        res.destroy()
        const httpStatus = res.statusCode
        record(() => ({
          httpStatus,
          errorClass: timeout ? 'upstream_timeout' : 'upstream_aborted',
          errorCode: null,
          observation: null,
          noCharge: false,
        }))
        return
      }
      const status = answerProviderError(res, path.api, kind)
      record(() => ({
        httpStatus: status,
        errorClass: kind,
        errorCode: null,
        observation: null,
        noCharge: true,
        local: !timeout,
      }))
    }

    const onResponse = (upRes: http.IncomingMessage): void => {
      const status = upRes.statusCode ?? 502
      const obs = observeResponse(path.api, upRes.headers['content-type'], upRes.headers['content-encoding'])
      observer = obs
      const raw = upRes.rawHeaders
      const out: string[] = []
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const k = raw[i] as string
        if (!ANSWER_HOP_BY_HOP.has(k.toLowerCase())) out.push(k, raw[i + 1] as string)
      }
      res.writeHead(status, upRes.statusMessage, out)
      const sse = (upRes.headers['content-type'] ?? '').includes('text/event-stream')
      // SSE headers go out at once when the upstream holds back its first event (first-token latency
      // is preserved); when events came in the same read they carry the headers in one write.
      if (sse)
        setImmediate(() => {
          if (firstByte === null && !res.destroyed) res.flushHeaders()
        })
      // A complete, sized answer goes out in one write with its headers; anything else (SSE, chunked
      // JSON arrays) is written as it arrives.
      const sized = upRes.headers['content-length'] !== undefined && !sse
      const held: Buffer[] = []
      let corked = false
      upRes.on('data', (chunk: Buffer) => {
        firstByte ??= performance.now()
        obs.write(chunk)
        if (sized) {
          held.push(chunk)
          return
        }
        // Chunks that arrive in the same turn of the event loop leave in one write; nothing is held
        // past that turn, so no chunk waits for the next one.
        if (!corked) {
          corked = true
          res.cork()
          setImmediate(() => {
            corked = false
            res.uncork()
          })
        }
        if (!res.write(chunk)) {
          upRes.pause()
          res.once('drain', () => upRes.resume())
        }
      })
      upRes.once('end', () => {
        if (sized) res.end(held.length === 1 ? held[0] : Buffer.concat(held))
        else res.end()
        record((observation) => {
          const error = observation?.error ?? null
          const errorClass =
            status >= 400 ? classOfError(status, error) : error !== null ? 'upstream_stream_error' : null
          return { httpStatus: status, errorClass, errorCode: error, observation, noCharge: status >= 400 }
        })
      })
      const upstreamBroke = (): void => {
        if (done || clientGone) return
        upstreamGone = true
        res.destroy()
        record((observation) => ({
          httpStatus: status,
          errorClass: this.stopping ? 'proxy_stopped' : 'upstream_aborted',
          errorCode: null,
          observation,
          noCharge: false,
        }))
      }
      upRes.once('aborted', upstreamBroke)
      upRes.once('error', upstreamBroke)
    }

    const wire = (r: http.ClientRequest): void => {
      r.setTimeout(this.opts.upstreamTimeoutMs ?? 600_000, () => r.destroy(new TimeoutMark()))
      r.on('error', onUpstreamError)
      r.on('response', onResponse)
      r.on('socket', guardSocket)
    }

    // The whole body goes upstream in one write (requests are small; this halves the syscalls), once
    // its row is known to be buildable and the attempt's budget admits it.
    void reqDone.then(() => {
      if (done || clientGone) return
      if (!reqEnded) {
        // The client stopped mid-upload (a cut or half-closed chunked body): recorded now, not when
        // the socket finally closes, so the row is there before the attempt's telemetry is summed.
        record(() => ({
          httpStatus: null,
          errorClass: this.stopping ? 'proxy_stopped' : 'client_aborted',
          errorCode: 'request_body_incomplete',
          observation: null,
          noCharge: true,
          local: true,
        }))
        res.destroy()
        return
      }
      const decoded =
        received > maxBody
          ? 'too_large'
          : decodeBody(chunks[0] ?? Buffer.alloc(0), header(req, 'content-encoding'), maxBody)
      if (decoded === 'too_large') {
        chunks.length = 0
        const status = answerProviderError(res, path.api, 'request_too_large')
        record(() => ({
          httpStatus: status,
          errorClass: 'request_too_large',
          errorCode: `over ${maxBody} bytes`,
          observation: null,
          noCharge: true,
          local: true,
        }))
        return
      }
      const body = chunks[0] ?? Buffer.alloc(0)
      // Fail closed: the request's row is built once before it goes anywhere; a request whose row
      // cannot be built (or whose ledger cannot be written) is refused, never forwarded unrecorded.
      try {
        info = this.summarize(path, body, header(req, 'content-encoding'))
        this.buildRow({
          path,
          startedAt,
          t0,
          t1: t0,
          firstByte: null,
          chunks,
          contentEncoding: header(req, 'content-encoding'),
          info,
          attribution,
          outcome: TRIAL_OUTCOME,
          retried: false,
        })
      } catch (e) {
        process.stderr.write(
          `harness-watch: a request was refused, its row cannot be built: ${messageOf(e)}\n`,
        )
        refuse('unrecordable', 'request_unrecordable')
        return
      }
      // A row that could not be kept on disk is no row: with the ledger unwritable (its file gone or
      // replaced, its disk full, an earlier write failed) the request is refused before it goes out.
      const unwritable = this.ledgerError ?? this.ledger?.unwritable() ?? null
      if (unwritable !== null) {
        if (this.ledgerError === null) {
          this.ledgerError = unwritable
          process.stderr.write(
            `harness-watch: ${unwritable}: requests are refused from now on (none goes upstream unrecorded)\n`,
          )
        }
        refuse('unrecordable', 'ledger_unwritable')
        return
      }
      if (attempt) {
        // Budgets bind under concurrency: a request's worst-case spend is reserved before it goes
        // upstream, so requests in flight count against the cap before their answers are in.
        const b = attempt.reg.budget
        const overRequests = b?.maxRequests !== undefined && attempt.requests >= b.maxRequests
        const overSpend =
          b?.maxSpendUsd !== undefined && attempt.spendUsd + attempt.reservedUsd >= b.maxSpendUsd
        if (overRequests || overSpend) {
          refuse('budget_exceeded', 'budget_exceeded')
          return
        }
        attempt.requests++
        reserved = reserveUsd(info, this.opts.route.prices ?? null)
        attempt.reservedUsd += reserved
      }
      const first = this.requestFn(upstreamRequest)
      up = first
      wire(first)
      first.end(body)
    })
  }

  private extraHeaders(
    attempt: AttemptState | null,
    a: Attribution | null,
  ): Record<string, string> | undefined {
    const extra: Record<string, string> = { ...(attempt?.reg.extraHeaders ?? {}) }
    if (this.opts.forwardAttribution && a) {
      extra['x-hw-cell'] = a.cell_id
      extra['x-hw-instance'] = a.instance_id
      extra['x-hw-trial'] = String(a.trial)
      extra['x-hw-attempt'] = String(a.attempt)
      if (a.round !== undefined) extra['x-hw-round'] = String(a.round)
    }
    return Object.keys(extra).length > 0 ? extra : undefined
  }

  private standaloneAttribution(token: string | null): Attribution | null {
    const m = token ? /^([^:]+):([^:]+):(\d+):(\d+)$/.exec(token) : null
    if (!m || Number(m[4]) < 1) return null
    return {
      experiment_id: this.opts.experimentId,
      run_id: this.opts.runId,
      cell_id: m[1] as string,
      instance_id: m[2] as string,
      trial: Number(m[3]),
      attempt: Number(m[4]),
    }
  }

  /** The request's summary for its row (see {@link RecordingProxyOptions.summarizeRequest}). */
  private summarize(path: PathInfo, body: Buffer, contentEncoding: string | undefined): RequestInfo {
    const info = (this.opts.summarizeRequest ?? inspectRequest)(path, body, contentEncoding)
    return withOfferedTools(info, path, body, contentEncoding)
  }

  /**
   * The exchange's row; when it cannot be built, a row of what is known without reading the request
   * or the answer (timings, status, class), flagged {@link ROW_FALLBACK_FLAG}: a request is never left
   * without its row.
   */
  private buildRowOrFallback(x: RowInput): LedgerRow {
    try {
      return this.buildRow(x)
    } catch (e) {
      process.stderr.write(`harness-watch: a ledger row was recorded without its details: ${messageOf(e)}\n`)
      const bytes = x.chunks.reduce((n, c) => n + c.length, 0)
      const bare: RequestInfo = {
        model: null,
        stream: null,
        shape: { bytes, tools: null, messages: null, system_bytes: null },
        maxOutputTokens: null,
        unsummarized: true,
      }
      const o = x.outcome
      const row = this.buildRow({
        ...x,
        info: bare,
        outcome: {
          ...o,
          errorCode: o.errorCode === null ? null : String(o.errorCode).slice(0, 200),
          observation: null,
        },
      })
      row.flags.push(ROW_FALLBACK_FLAG)
      return row
    }
  }

  private buildRow(x: RowInput): LedgerRow {
    const { path, outcome, t1 } = x
    let info = x.info
    if (info === null) {
      const body = x.chunks.length === 1 ? (x.chunks[0] as Buffer) : Buffer.concat(x.chunks)
      info = this.summarize(path, body, x.contentEncoding)
    }
    const rule = cacheRuleFor(this.opts.route.provider, path.api, this.opts.route.cacheSemantics)
    const usage = outcome.observation?.usage ?? null
    const norm = usage
      ? normalizeUsage(path.api, usage, rule)
      : { tokens: { ...NULL_TOKENS }, flags: [] as string[] }
    const flags = [...norm.flags]
    if (info.unsummarized) flags.push(REQUEST_UNSUMMARIZED_FLAG)
    if (outcome.local) flags.push(ANSWERED_BY_PROXY)
    if (x.retried) flags.push(UPSTREAM_RETRIED)
    if (usage && outcome.errorClass !== null && CUT_OFF.has(outcome.errorClass))
      flags.push(USAGE_PARTIAL_FLAG)
    let spend: Pick<LedgerRow, 'spend_usd' | 'spend_source' | 'spend_recomputed_usd'>
    if (norm.tokens.input_total !== null || hasTokens(norm.tokens)) {
      const c = chooseProxySpend(norm.tokens, this.opts.route.prices)
      spend = c
      flags.push(...c.flags)
    } else if (outcome.noCharge || path.api === 'other') {
      spend = { spend_usd: 0, spend_source: 'proxy', spend_recomputed_usd: null }
    } else {
      spend = { spend_usd: null, spend_source: 'unpriced', spend_recomputed_usd: null }
      if (!flags.includes('usage_absent')) flags.push('usage_absent')
      if (outcome.observation?.unreadable) flags.push('answer_unreadable')
    }
    const ok = outcome.errorClass === null
    return {
      schema_version: LEDGER_SCHEMA_VERSION,
      request_id: `px_${randomUUID()}`,
      source: 'proxy',
      call_type: path.callType,
      api: path.api,
      stream: info.stream,
      model: info.model,
      model_observed: outcome.observation?.model ?? null,
      model_group: null,
      provider: this.opts.route.provider,
      status: ok ? 'success' : 'failure',
      http_status: outcome.httpStatus,
      error: ok
        ? null
        : {
            class: outcome.errorClass as string,
            code: outcome.errorCode,
            message: outcome.httpStatus === null ? null : `HTTP ${outcome.httpStatus}`,
          },
      started_at: x.startedAt.toISOString(),
      ended_at: new Date(x.startedAt.getTime() + (t1 - x.t0)).toISOString(),
      first_token_at:
        x.firstByte === null ? null : new Date(x.startedAt.getTime() + (x.firstByte - x.t0)).toISOString(),
      duration_ms: round3(t1 - x.t0),
      ttft_ms: x.firstByte === null ? null : round3(x.firstByte - x.t0),
      request_shape: info.shape,
      ...offeredToolsField(info),
      tokens: norm.tokens,
      cache_semantics: rule.semantics,
      ...spend,
      spend_logged_usd: null,
      flags,
      attribution: x.attribution,
      usage_object: projectUsage(usage),
      additional_usage_values: null,
    }
  }

  private emit(raw: LedgerRow, exchange: Exchange): void {
    const attempt = exchange.attempt
    try {
      // An upstream's absurd usage (negative, beyond any real request) is an input error of its row.
      const { row, problems } = checkLedgerRow(raw)
      attempt?.problems.push(...problems)
      try {
        this.ledger?.append(row)
      } catch (e) {
        // Later requests are refused (fail closed); this one is kept in memory and reported.
        this.ledgerError ??= messageOf(e)
        reportLedgerFailure(e)
      }
      if (attempt) {
        attempt.rows.push(row)
        // Spend the budget counts: the row's, or (unknown spend on a forwarded request) its reservation.
        attempt.spendUsd += row.spend_usd ?? exchange.reserved
      } else {
        this.unattributedRows.push(row)
      }
      this.opts.onRow?.(row)
    } finally {
      this.settle(exchange)
    }
  }

  /** The exchange leaves the in-flight count and gives back its reservation, exactly once. */
  private settle(exchange: Exchange): void {
    if (exchange.settled) return
    exchange.settled = true
    const attempt = exchange.attempt
    if (!attempt) return
    attempt.reservedUsd = Math.max(0, attempt.reservedUsd - exchange.reserved)
    attempt.inflight--
    attempt.settled()
  }
}

/** One exchange's share of its attempt's accounting, settled once whichever way it ends. */
interface Exchange {
  attempt: AttemptState | null
  reserved: number
  settled: boolean
}

/** What a row is built from. */
interface RowInput {
  path: PathInfo
  startedAt: Date
  t0: number
  /** When the exchange ended (the row is built a little later). */
  t1: number
  firstByte: number | null
  chunks: Buffer[]
  contentEncoding: string | undefined
  /** The request's summary when already read (null: read from `chunks`). */
  info: RequestInfo | null
  attribution: Attribution | null
  outcome: Outcome
  retried: boolean
}

/** The outcome a trial row is built with before forwarding (only to prove the row can be built). */
const TRIAL_OUTCOME: Outcome = {
  httpStatus: 200,
  errorClass: null,
  errorCode: null,
  observation: null,
  noCharge: false,
}

/** Flag of a row recorded without its request and answer details (they could not be read). */
export const ROW_FALLBACK_FLAG = 'row_fallback'

/** How long {@link ProxyAttempt.idle} waits for aborted exchanges to record themselves, ms. */
const IDLE_GRACE_MS = 5000

function messageOf(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? ''
}

function reportLedgerFailure(e: unknown): void {
  process.stderr.write(`harness-watch: ledger write failed: ${e instanceof Error ? e.message : String(e)}\n`)
}

/** Classes of an exchange cut off mid-answer: usage seen by then may be short of the whole. */
const CUT_OFF = new Set(['client_aborted', 'proxy_stopped', 'upstream_aborted', 'upstream_timeout'])

const guardedSockets = new WeakSet<object>()

/**
 * An upstream may answer before it has read the whole request body and then reset the socket (an
 * early 413): the reset reaches the socket after the exchange let go of it, where an unheard 'error'
 * would end the process. The exchange itself is recorded from its answer; the error needs no more.
 */
function guardSocket(socket: Socket): void {
  if (guardedSockets.has(socket)) return
  guardedSockets.add(socket)
  socket.on('error', () => {})
}

/** Errors of a kept-alive socket the upstream closed before the request was sent on it. */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE'])

class TimeoutMark extends Error {
  constructor() {
    super('upstream idle timeout')
  }
}

/**
 * Answer the client with the provider-shaped error of `kind` (the body its SDK parses; headers only
 * when none were sent yet) and end the response. Returns the HTTP status sent.
 */
function answerProviderError(res: http.ServerResponse, api: PathInfo['api'], kind: ProxyErrorKind): number {
  const e = providerError(api, kind)
  if (!res.headersSent) {
    res.writeHead(e.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(e.body),
    })
  }
  res.end(e.body)
  return e.status
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

function round3(ms: number): number {
  return Math.max(0, Math.round(ms * 1000) / 1000)
}

/** Error class of an upstream error answer; quota/budget codes from any provider are `budget_exceeded`. */
function classOfError(status: number, code: string | null): string {
  if (code === 'budget_exceeded' || code === 'insufficient_quota') return 'budget_exceeded'
  return errorClassOfStatus(status)
}
