import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { WireApi } from '../manifest/harness-names.js'
import { HwError } from '../util/errors.js'
import { requestTarget } from '../util/request-target.js'
import { BodyError, readBody } from './body.js'
import { resolveSettings } from './config.js'
import { type Attribution, type ModelRequestRecord, type Outcome, ScriptedEngine } from './engine.js'
import { errorBody } from './faults.js'
import { routeOf } from './parse.js'
import { loadTaskScripts } from './tasks.js'
import type { ScriptedSettings, ScriptedSettingsInput, TaskScript } from './types.js'

/** Options of `startScriptedModel`. */
export interface ScriptedModelOptions {
  /** TCP port; 0 or absent = any free port. */
  port?: number
  /** Always 127.0.0.1: the scripted model is never exposed beyond the machine. */
  host?: '127.0.0.1'
  /** Panel folders (folders of task folders) or single task folders to follow. */
  panelDirs?: string[]
  /** Already-loaded task scripts (added to those of `panelDirs`). */
  tasks?: TaskScript[]
  /** Settings (`model.scripted` of a manifest); validated, defaults filled. */
  config?: ScriptedSettings | ScriptedSettingsInput
  /** One short line per request (api, stream, task, step, decision, tokens). */
  log?: (line: string) => void
  /** Clock in Unix ms for `created` stamps (tests fix it to get byte-identical bodies). */
  now?: () => number
}

/** A running scripted model. */
export interface ScriptedModel {
  /** `http://127.0.0.1:<port>`; OpenAI-style clients append `/v1`, Anthropic and Gemini SDKs nothing. */
  origin: string
  port: number
  /** Generation requests handled so far, in arrival order (the last 10,000). */
  records(): readonly ModelRequestRecord[]
  /** Stop listening, drop every open connection (hung requests included); resolves when closed. */
  close(): Promise<void>
}

const MAX_RECORDS = 10_000

/**
 * Start the scripted model: a deterministic local model server speaking OpenAI Chat Completions,
 * OpenAI Responses, Anthropic Messages (+ count_tokens) and Gemini generateContent /
 * streamGenerateContent (+ countTokens), streaming (SSE, unbuffered) and not, with `GET …/models`.
 * Routes match by path suffix, so any prefix (`/v1`, `/v1beta`, none) works. It follows each panel
 * task's reference solution through the harness's own tools (see `decide`), with seeded success, latency
 * and faults (see `ScriptedEngine`). Throws HwError `config_invalid` / `panel_invalid` for bad settings
 * or task folders, `port_unavailable` when the port cannot be bound.
 */
export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const settings = resolveSettings(opts.config ?? {})
  const tasks = await loadTaskScripts(opts.panelDirs ?? [])
  for (const t of opts.tasks ?? []) tasks.set(t.id, t)
  const engine = new ScriptedEngine(settings, tasks, opts.now)
  const log = opts.log ?? (() => {})
  const records: ModelRequestRecord[] = []
  const sockets = new Set<Socket>()
  const stopping = new AbortController()
  const seen = new Set<string>()

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log(`error ${req.method} ${req.url}: ${(e as Error).message}`)
      if (!res.headersSent)
        sendJson(res, 500, errorBody(null, 500, `scripted model error: ${(e as Error).message}`))
      else res.destroy()
    })
  })
  server.on('connection', (s) => {
    s.setNoDelay(true)
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestTarget(req.url)
    if (url === null) {
      req.resume()
      sendJson(res, 400, errorBody(null, 400, 'the request target is not a URL'))
      return
    }
    const pathname = url.pathname.replace(/\/+$/, '') || '/'
    if (req.method === 'HEAD') {
      res.writeHead(200).end()
      return
    }
    if (req.method === 'GET') {
      answerGet(res, pathname, seen)
      return
    }
    const route = req.method === 'POST' ? routeOf(pathname) : null
    if (!route) {
      sendJson(res, 404, errorBody(null, 404, `no route for ${req.method} ${pathname}`))
      return
    }
    const api: WireApi =
      route === 'anthropic-count' ? 'anthropic' : route === 'gemini-count' ? 'gemini' : (route as WireApi)
    let body: Record<string, unknown>
    try {
      const raw = await readBody(req)
      const parsed: unknown = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'))
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new BodyError(400, 'expected a JSON object')
      body = parsed as Record<string, unknown>
    } catch (e) {
      const status = e instanceof BodyError ? e.status : 400
      // The rest of an oversized body is never read: the connection cannot carry another request.
      sendJson(
        res,
        status,
        errorBody(api, status, `invalid request body: ${(e as Error).message}`),
        status === 413 ? { connection: 'close' } : {},
      )
      return
    }
    if (route === 'anthropic-count') {
      engine.nextSeq()
      sendJson(res, 200, { input_tokens: engine.count('anthropic', body) })
      return
    }
    if (route === 'gemini-count') {
      engine.nextSeq()
      const inner = (body.generateContentRequest as Record<string, unknown> | undefined) ?? body
      const n = engine.count('gemini', inner)
      sendJson(res, 200, { totalTokens: n, promptTokensDetails: [{ modality: 'TEXT', tokenCount: n }] })
      return
    }
    const outcome = engine.generate(
      api,
      body,
      pathname,
      attributionOf(req),
      url.searchParams.get('alt') === 'sse',
    )
    seen.add(outcome.record.model)
    records.push(outcome.record)
    if (records.length > MAX_RECORDS) records.shift()
    log(describe(outcome))
    await pause(outcome.latencyMs)
    await deliver(res, outcome)
  }

  async function deliver(res: ServerResponse, outcome: Outcome): Promise<void> {
    if (outcome.kind === 'hang') return // never answered; close() drops the connection
    if (outcome.kind === 'error') {
      sendJson(res, outcome.status, outcome.body, outcome.headers)
      return
    }
    const { rendered, requestId } = outcome
    if (rendered.kind === 'json') {
      sendJson(res, 200, rendered.body, { 'x-request-id': requestId, 'request-id': requestId })
      return
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-request-id': requestId,
      'request-id': requestId,
    })
    res.flushHeaders()
    // "A little" latency between chunks: 1/20 of the response latency, at most 25 ms.
    const gap = Math.min(25, Math.floor(outcome.latencyMs / 20))
    for (const [i, frame] of rendered.frames.entries()) {
      if (res.destroyed) return
      if (i > 0 && gap > 0) await pause(gap)
      res.write(frame)
    }
    res.end()
  }

  async function pause(ms: number): Promise<void> {
    if (ms <= 0) return
    await sleep(ms, undefined, { signal: stopping.signal }).catch(() => {})
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new HwError(
          'port_unavailable',
          `cannot listen on 127.0.0.1:${opts.port ?? 0} (${e.code ?? e.message})`,
          {
            help: 'pick another --port, or 0 for any free port',
          },
        ),
      ),
    )
    server.listen({ port: opts.port ?? 0, host: '127.0.0.1' }, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  let closed: Promise<void> | null = null
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    records: () => records,
    close() {
      closed ??= new Promise<void>((resolve) => {
        stopping.abort()
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
        server.closeAllConnections()
      })
      return closed
    },
  }
}

function attributionOf(req: IncomingMessage): Attribution {
  const h = (name: string): string | undefined => {
    const v = req.headers[name]
    const s = Array.isArray(v) ? v[0] : v
    return s === undefined || s.trim() === '' ? undefined : s.trim()
  }
  const int = (s: string | undefined): number | undefined => {
    if (s === undefined || !/^\d+$/.test(s)) return undefined
    return Number(s)
  }
  return {
    instance: h('x-hw-instance'),
    cell: h('x-hw-cell'),
    trial: int(h('x-hw-trial')),
    attempt: int(h('x-hw-attempt')),
    round: int(h('x-hw-round')),
  }
}

function answerGet(res: ServerResponse, pathname: string, seen: Set<string>): void {
  const list = /\/models$/.test(pathname)
  const one = /\/models\/([^/:]+)$/.exec(pathname)?.[1]
  let id: string | undefined
  try {
    id = one === undefined ? undefined : decodeURIComponent(one)
  } catch {
    sendJson(res, 400, errorBody(null, 400, `malformed percent-encoding in GET ${pathname}`))
    return
  }
  if (list || id !== undefined) {
    const ids = id !== undefined ? [id] : ['scripted', ...[...seen].filter((m) => m !== 'scripted').sort()]
    const models = ids.map((id) => ({
      id,
      object: 'model',
      created: 0,
      owned_by: 'harness-watch',
      type: 'model',
      display_name: id,
      created_at: '1970-01-01T00:00:00Z',
      name: `models/${id}`,
      displayName: id,
      supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    }))
    if (id !== undefined) {
      sendJson(res, 200, models[0])
      return
    }
    sendJson(res, 200, {
      object: 'list',
      data: models,
      has_more: false,
      first_id: ids[0],
      last_id: ids.at(-1),
      models,
    })
    return
  }
  if (pathname === '/' || pathname === '/v1' || pathname === '/v1beta') {
    sendJson(res, 200, { ok: true })
    return
  }
  sendJson(res, 404, errorBody(null, 404, `no route for GET ${pathname}`))
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  })
  res.end(text)
}

/** One short log line: `#12 chat stream task=t1 cell=pi trial=0 step=1 → bash solve in=1234 read=1000 …`. */
function describe(o: Outcome): string {
  const r = o.record
  const head = `#${r.seq} ${r.api}${r.stream ? ' stream' : ''} task=${r.task ?? '-'} cell=${r.cell} trial=${r.trial} step=${r.step}`
  if (o.kind === 'hang') return `${head} → hang`
  if (o.kind === 'error') return `${head} → ${o.status} (fault)`
  const a = r.action
  const what = a === null ? '?' : a.kind === 'tool' ? `${a.tool} ${a.step}` : `text ${a.step}`
  const u = r.usage
  const tokens = u ? ` in=${u.inputTotal} read=${u.cacheRead} write=${u.cacheWrite} out=${u.output}` : ''
  return `${head}${r.success ? '' : ' (fail draw)'} → ${what}${tokens}`
}
