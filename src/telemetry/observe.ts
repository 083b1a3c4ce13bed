import zlib from 'node:zlib'
import { SseParser } from './sse.js'

export type ObservedApi = 'chat' | 'responses' | 'anthropic' | 'gemini' | 'other'

/** What the proxy reads out of an upstream answer: never the text, only usage, model and error code. */
export interface ResponseObservation {
  /** The provider's usage object (`usage` or Gemini `usageMetadata`); Anthropic streams are merged. */
  usage: Record<string, unknown> | null
  /** The model named in the answer (`model`, Responses `response.model`, Gemini `modelVersion`). */
  model: string | null
  /** An error code/type found in an error body or inside a stream (`event: error`, `response.failed`). */
  error: string | null
  /** True when the answer could not be read (unknown encoding, over the size cap, not JSON). */
  unreadable: boolean
}

export interface ResponseObserver {
  /** A chunk exactly as forwarded to the client. Never throws. */
  write(chunk: Buffer): void
  /** Called once after the last chunk; resolves when any decoder has drained. */
  end(): Promise<ResponseObservation>
}

/** A non-stream answer larger than this is forwarded but not parsed (usage then counts as absent). */
export const MAX_JSON_COPY_BYTES = 64 * 1024 * 1024

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v.slice(0, 200) : null)

interface State {
  usage: Obj | null
  model: string | null
  error: string | null
}

function errorCode(e: unknown): string | null {
  const o = obj(e)
  if (!o) return str(e)
  // LiteLLM puts the HTTP status in `code` ("400"): the type says more then.
  const code = str(o.code)
  if (code && !/^\d+$/.test(code)) return code
  return str(o.status) ?? str(o.type) ?? code ?? (typeof o.code === 'number' ? String(o.code) : 'error')
}

/** Fold one parsed event (or a whole non-stream body) into the state, per wire API. */
export function absorb(api: ObservedApi, s: State, o: Obj): void {
  switch (api) {
    case 'anthropic': {
      const t = o.type
      if (t === 'message_start') {
        const m = obj(o.message)
        if (m) {
          s.model ??= str(m.model)
          if (obj(m.usage)) s.usage = { ...(m.usage as Obj) }
        }
      } else if (t === 'message_delta') {
        const u = obj(o.usage)
        if (u) s.usage = { ...(s.usage ?? {}), ...dropNulls(u) }
      } else if (t === 'message') {
        s.model ??= str(o.model)
        if (obj(o.usage)) s.usage = o.usage as Obj
      } else if (t === 'error') {
        s.error = errorCode(o.error)
      }
      return
    }
    case 'responses': {
      const r = o.object === 'response' ? o : obj(o.response)
      if (r) {
        if (str(r.model)) s.model = str(r.model)
        if (obj(r.usage)) s.usage = r.usage as Obj
      }
      if (o.type === 'error') s.error = errorCode(o) ?? 'stream_error'
      else if (o.type === 'response.failed') s.error = errorCode(obj(r?.error)) ?? 'response_failed'
      else if (obj(o.error) && !r) s.error = errorCode(o.error)
      return
    }
    case 'gemini': {
      s.model ??= str(o.modelVersion)
      if (obj(o.usageMetadata)) s.usage = o.usageMetadata as Obj
      if (obj(o.error)) s.error = errorCode(o.error)
      return
    }
    default: {
      s.model ??= str(o.model)
      if (obj(o.usage)) s.usage = o.usage as Obj
      if (obj(o.error)) s.error = errorCode(o.error)
    }
  }
}

/**
 * Which streamed events are worth parsing. Content deltas are the bulk of a stream and say nothing
 * about usage or model, so they are skipped by a substring test; usage-bearing chunks (chat, Gemini)
 * are deferred so only the last is parsed.
 */
export function sseInterest(
  api: ObservedApi,
  data: string,
  event: string,
  first: boolean,
): 'parse' | 'defer' | 'skip' {
  if (first || event === 'error' || data.includes('"error"')) return 'parse'
  switch (api) {
    case 'chat':
      return data.includes('"usage":{') || data.includes('"usage": {') ? 'defer' : 'skip'
    case 'gemini':
      return data.includes('"usageMetadata"') ? 'defer' : 'skip'
    case 'responses':
      return data.includes('response.completed') ||
        data.includes('response.incomplete') ||
        data.includes('response.failed') ||
        data.includes('response.created')
        ? 'parse'
        : 'skip'
    case 'anthropic':
      return data.includes('"message_start"') || data.includes('"message_delta"') ? 'parse' : 'skip'
    default:
      return 'parse'
  }
}

/**
 * Substrings without which a streamed event cannot matter to {@link sseInterest} (besides `error` and
 * the first event); an event holding none is dropped unparsed. Absent: every event is parsed.
 */
const SSE_MARKERS: Partial<Record<ObservedApi, string[]>> = {
  chat: ['"usage"'],
  gemini: ['"usageMetadata"'],
  responses: ['response.completed', 'response.incomplete', 'response.failed', 'response.created'],
  anthropic: ['"message_start"', '"message_delta"'],
}

/** An SSE answer up to this size is held and read once it ends; past it, it is read as it passes. */
export const SSE_HOLD_BYTES = 1024 * 1024

function dropNulls(o: Obj): Obj {
  const out: Obj = {}
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v
  return out
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * An observer for one upstream answer. `text/event-stream` answers are parsed event by event as they
 * pass (nothing is held back from the client); other answers are copied up to
 * {@link MAX_JSON_COPY_BYTES} and parsed at the end (a Gemini stream without `alt=sse` is a JSON
 * array). gzip, deflate and br copies are decoded; other encodings make the answer unreadable.
 */
export function observeResponse(
  api: ObservedApi,
  contentType: string | undefined,
  contentEncoding: string | undefined,
): ResponseObserver {
  const s: State = { usage: null, model: null, error: null }
  let unreadable = false
  const sse = (contentType ?? '').includes('text/event-stream')
  const text = new TextDecoder('utf-8')

  let sink: (chunk: Buffer) => void
  let finishSink: () => void
  if (sse) {
    let first = true
    // The newest event that may carry usage: parsed at the end, when it is known to be the last one.
    let deferred: string | null = null
    const take = (data: string, event: string): void => {
      const o = obj(parseJson(data))
      if (o) absorb(api, s, o)
      else if (event === 'error') s.error = 'stream_error'
    }
    const markers = SSE_MARKERS[api]
    const parser = new SseParser(
      (ev) => {
        if (ev.data === '[DONE]') return
        const what = sseInterest(api, ev.data, ev.event, first)
        first = false
        if (what === 'parse') take(ev.data, ev.event)
        else if (what === 'defer') {
          if (deferred !== null) take(deferred, '')
          deferred = ev.data
        }
      },
      markers && ((raw) => first || raw.includes('error') || markers.some((m) => raw.includes(m))),
    )
    // Chunks are held (not copied) and read at the end, off the forwarding path; a stream longer than
    // SSE_HOLD_BYTES is read as it passes from then on, so memory stays bounded.
    let held: Buffer[] | null = []
    let heldBytes = 0
    const read = (c: Buffer): void => parser.feed(text.decode(c, { stream: true }))
    sink = (c) => {
      if (held === null) return read(c)
      held.push(c)
      heldBytes += c.length
      if (heldBytes > SSE_HOLD_BYTES) {
        for (const h of held) read(h)
        held = null
      }
    }
    finishSink = () => {
      // Held whole: one decode (the decoder holds no partial character yet).
      if (held !== null)
        parser.feed(text.decode(held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held)))
      else parser.feed(text.decode())
      held = null
      parser.end()
      if (deferred !== null) take(deferred, '')
    }
  } else {
    const parts: Buffer[] = []
    let size = 0
    sink = (c) => {
      if (unreadable) return
      size += c.length
      if (size > MAX_JSON_COPY_BYTES) {
        unreadable = true
        parts.length = 0
      } else parts.push(c)
    }
    finishSink = () => {
      if (unreadable || size === 0) return
      const v = parseJson(Buffer.concat(parts).toString('utf8'))
      if (Array.isArray(v)) {
        for (const item of v) if (obj(item)) absorb(api, s, item as Obj)
      } else if (obj(v)) absorb(api, s, v as Obj)
      else unreadable = true
    }
  }

  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase()
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null = null
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = zlib.createGunzip()
  else if (encoding === 'deflate') decoder = zlib.createInflate()
  else if (encoding === 'br') decoder = zlib.createBrotliDecompress()
  else if (encoding !== 'identity' && encoding !== '') unreadable = true

  const safeSink = (c: Buffer): void => {
    try {
      sink(c)
    } catch {
      unreadable = true
    }
  }
  const done = (): ResponseObservation => {
    try {
      finishSink()
    } catch {
      unreadable = true
    }
    return { usage: s.usage, model: s.model, error: s.error, unreadable }
  }

  if (decoder) {
    const d = decoder
    d.on('data', safeSink)
    const drained = new Promise<void>((resolve) => {
      d.once('end', resolve)
      d.once('error', () => {
        unreadable = true
        resolve()
      })
    })
    return {
      write: (c) => {
        if (!d.destroyed) d.write(c)
      },
      end: async () => {
        d.end()
        await drained
        return done()
      },
    }
  }
  return {
    write: (c) => {
      if (encoding === 'identity' || encoding === '') safeSink(c)
    },
    end: async () => done(),
  }
}
