import zlib from 'node:zlib'
import type { LedgerRow } from '../records/ledger.js'
import type { ObservedApi } from './observe.js'

export type RequestShape = NonNullable<LedgerRow['request_shape']>

/** What a request path says: its wire API, a call type for the ledger, and (Gemini) model and stream. */
export interface PathInfo {
  api: ObservedApi
  callType: string
  /** Gemini puts the model in the path. */
  model: string | null
  /** Gemini puts streaming in the method name. */
  stream: boolean | null
}

const GEMINI = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/

/**
 * Classify a request by its path suffix, so any prefix works (`/v1`, `/v1beta`, `/openai/v1`, none).
 * Inference routes: `…/chat/completions` and `…/completions` (chat), `…/responses`, `…/messages`
 * (Anthropic), `…/models/<m>:generateContent|streamGenerateContent` (Gemini). Everything else
 * (count_tokens, model lists, probes) is `other`.
 */
export function classifyPath(method: string, pathname: string): PathInfo {
  const p = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname
  if (method === 'POST') {
    if (p.endsWith('/chat/completions'))
      return { api: 'chat', callType: 'chat.completions', model: null, stream: null }
    if (p.endsWith('/responses'))
      return { api: 'responses', callType: 'responses', model: null, stream: null }
    if (p.endsWith('/messages')) return { api: 'anthropic', callType: 'messages', model: null, stream: null }
    if (p.endsWith('/messages/count_tokens'))
      return { api: 'other', callType: 'count_tokens', model: null, stream: false }
    if (p.endsWith('/completions')) return { api: 'chat', callType: 'completions', model: null, stream: null }
    const g = GEMINI.exec(p)
    if (g) {
      const model = decodeSafe(g[1] ?? '')
      if (g[2] === 'countTokens') return { api: 'other', callType: 'countTokens', model, stream: false }
      const stream = g[2] === 'streamGenerateContent'
      return { api: 'gemini', callType: g[2] ?? 'generateContent', model, stream }
    }
  }
  const tail = p.split('/').filter(Boolean).slice(-1)[0] ?? ''
  return { api: 'other', callType: `${method} ${tail}`.slice(0, 80).trim(), model: null, stream: null }
}

/** `decodeURIComponent`, or the text unchanged when its percent-encoding is malformed. */
export function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** Default cap on a request body after decompression, bytes (64 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024

/**
 * The request body with its content-encoding (gzip, deflate, br; zstd where Node has it) undone,
 * never more than `maxBytes` bytes of output: `too_large` when the decoded body would exceed it (a
 * compression bomb stops there), `undecodable` when it cannot be decoded.
 */
export function decodeBody(
  body: Buffer,
  contentEncoding: string | undefined,
  maxBytes = DEFAULT_MAX_BODY_BYTES,
): Buffer | 'too_large' | 'undecodable' {
  if (body.length > maxBytes) return 'too_large'
  const enc = (contentEncoding ?? '').trim().toLowerCase()
  const opts = { maxOutputLength: Math.max(1, maxBytes) }
  try {
    if (enc === '' || enc === 'identity') return body
    if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(body, opts)
    if (enc === 'deflate') return zlib.inflateSync(body, opts)
    if (enc === 'br') return zlib.brotliDecompressSync(body, opts)
    if (enc === 'zstd') {
      // Node ≥ 22.15 has zstd; on Node 20 the shape of a zstd body stays unknown.
      const z = (zlib as unknown as { zstdDecompressSync?: (b: Buffer, o: object) => Buffer })
        .zstdDecompressSync
      return z ? z(body, opts) : 'undecodable'
    }
    return 'undecodable'
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' ? 'too_large' : 'undecodable'
  }
}

/** The request body as JSON, decoding gzip/deflate/br/zstd bodies; undefined when unreadable or over `maxBytes`. */
export function decodeJsonBody(
  body: Buffer,
  contentEncoding: string | undefined,
  maxBytes = DEFAULT_MAX_BODY_BYTES,
): unknown {
  if (body.length === 0) return undefined
  const raw = decodeBody(body, contentEncoding, maxBytes)
  if (typeof raw === 'string') return undefined
  try {
    return JSON.parse(raw.toString('utf8'))
  } catch {
    return undefined
  }
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const arr = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : null)
/** A string JSON writes as `"` + itself + `"`: no quote, backslash, control or surrogate character. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * Deepest nesting a request summary walks into. Real requests nest a handful of levels (message →
 * content part → tool schema); anything deeper is not summarized (the row says so) rather than recursed.
 */
export const MAX_SUMMARY_DEPTH = 64

/** Most values a request summary visits in one measurement; beyond it the figure is not summarized. */
export const MAX_SUMMARY_NODES = 1_000_000

/** A value the summary did not measure (too deep or too many values): its figure is null and flagged. */
export class Unsummarizable extends Error {}

/**
 * UTF-8 bytes of `JSON.stringify(v)` (0 for undefined), exactly, walked with an explicit stack: no
 * recursion on request content, at most {@link MAX_SUMMARY_DEPTH} levels and
 * {@link MAX_SUMMARY_NODES} values, else {@link Unsummarizable}. Strings JSON writes verbatim are
 * counted without being serialised.
 */
function jsonBytes(v: unknown): number {
  if (v === undefined) return 0
  let bytes = 0
  let nodes = 0
  const stack: [unknown, number][] = [[v, 0]]
  while (stack.length > 0) {
    const [x, depth] = stack.pop() as [unknown, number]
    if (++nodes > MAX_SUMMARY_NODES) throw new Unsummarizable('too many values')
    if (x === null || typeof x === 'boolean' || typeof x === 'number') {
      bytes += Buffer.byteLength(JSON.stringify(x))
      continue
    }
    if (typeof x === 'string') {
      bytes += NEEDS_ESCAPE.test(x) ? Buffer.byteLength(JSON.stringify(x)) : Buffer.byteLength(x) + 2
      continue
    }
    if (typeof x !== 'object') continue
    if (depth >= MAX_SUMMARY_DEPTH) throw new Unsummarizable('nested too deep')
    if (Array.isArray(x)) {
      // [ ] and a comma between items; JSON writes undefined items as null (not in parsed JSON).
      bytes += 2 + Math.max(0, x.length - 1)
      for (const item of x) stack.push([item, depth + 1])
      continue
    }
    const entries = Object.entries(x as Obj).filter(([, val]) => val !== undefined)
    bytes += 2 + Math.max(0, entries.length - 1)
    for (const [k, val] of entries) {
      bytes += Buffer.byteLength(JSON.stringify(k)) + 1
      stack.push([val, depth + 1])
    }
  }
  return bytes
}
const isSystemRole = (m: unknown): boolean => {
  const role = obj(m)?.role
  return role === 'system' || role === 'developer'
}

/** Model requested, stream flag and shape (sizes and counts only) of one request body. */
export interface RequestInfo {
  model: string | null
  stream: boolean | null
  shape: RequestShape
  /** The request's declared output ceiling (`max_tokens`, `max_completion_tokens`, …), when it has one. */
  maxOutputTokens: number | null
  /** A figure of the shape was not measured (nesting beyond the bound): it is null, and the row is flagged. */
  unsummarized: boolean
}

/** Flag of a row whose request shape could not be fully summarized (too deep or too many values). */
export const REQUEST_UNSUMMARIZED_FLAG = 'request_unsummarized'

const positiveInt = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null

/** The declared output ceiling of a request body, by its API's field names. */
function declaredMaxOutput(b: Obj): number | null {
  const gen = obj(b.generationConfig) ?? obj(b.generation_config)
  return (
    positiveInt(b.max_completion_tokens) ??
    positiveInt(b.max_tokens) ??
    positiveInt(b.max_output_tokens) ??
    positiveInt(gen?.maxOutputTokens) ??
    positiveInt(gen?.max_output_tokens)
  )
}

/**
 * Read a request body for the ledger: the requested model, whether it streams, and its shape —
 * wire bytes, number of tools (Gemini: function declarations), messages (chat `messages`, Responses
 * `input` items, Anthropic `messages`, Gemini `contents`) and system bytes (chat system/developer
 * messages, Responses `instructions` + system/developer items, Anthropic `system`, Gemini
 * `systemInstruction`). Never keeps any content.
 */
export function inspectRequest(
  path: PathInfo,
  body: Buffer,
  contentEncoding: string | undefined,
): RequestInfo {
  return inspectParsed(path, body.length, decodeJsonBody(body, contentEncoding))
}

/** {@link inspectRequest} of a body already decoded (`parsed`: its JSON, or undefined when unreadable). */
export function inspectParsed(path: PathInfo, bytes: number, parsed: unknown): RequestInfo {
  const shape: RequestShape = { bytes, tools: null, messages: null, system_bytes: null }
  const b = obj(parsed)
  if (!b) return { model: path.model, stream: path.stream, shape, maxOutputTokens: null, unsummarized: false }
  let unsummarized = false
  /** The system bytes measured by `measure`, or null (flagged) when they cannot be summarized. */
  const systemBytes = (measure: () => number): number | null => {
    try {
      return measure()
    } catch (e) {
      if (!(e instanceof Unsummarizable)) throw e
      unsummarized = true
      return null
    }
  }
  const model = path.model ?? (typeof b.model === 'string' ? b.model.slice(0, 200) : null)
  const stream = path.stream ?? (path.api === 'other' ? null : b.stream === true)
  switch (path.api) {
    case 'chat': {
      const msgs = arr(b.messages)
      shape.tools = (arr(b.tools)?.length ?? 0) + (arr(b.functions)?.length ?? 0)
      shape.messages = msgs?.length ?? (b.prompt !== undefined ? 1 : 0)
      shape.system_bytes = systemBytes(() =>
        (msgs ?? []).filter(isSystemRole).reduce((n: number, m) => n + jsonBytes(m), 0),
      )
      break
    }
    case 'responses': {
      const input = b.input
      const items = arr(input)
      shape.tools = arr(b.tools)?.length ?? 0
      shape.messages = items ? items.length : input === undefined ? 0 : 1
      shape.system_bytes = systemBytes(
        () =>
          jsonBytes(b.instructions ?? undefined) +
          (items ?? []).filter(isSystemRole).reduce((n: number, m) => n + jsonBytes(m), 0),
      )
      break
    }
    case 'anthropic': {
      const msgs = arr(b.messages)
      shape.tools = arr(b.tools)?.length ?? 0
      shape.messages = msgs?.length ?? 0
      shape.system_bytes = systemBytes(
        () =>
          jsonBytes(b.system ?? undefined) +
          (msgs ?? []).filter(isSystemRole).reduce((n: number, m) => n + jsonBytes(m), 0),
      )
      break
    }
    case 'gemini': {
      const tools = arr(b.tools) ?? []
      shape.tools = tools.reduce((n: number, t) => {
        const o = obj(t)
        const decls = arr(o?.functionDeclarations) ?? arr(o?.function_declarations)
        return n + (decls ? decls.length : 1)
      }, 0)
      shape.messages = arr(b.contents)?.length ?? 0
      shape.system_bytes = systemBytes(() =>
        jsonBytes(b.systemInstruction ?? b.system_instruction ?? undefined),
      )
      break
    }
    default:
      break
  }
  return { model, stream, shape, maxOutputTokens: declaredMaxOutput(b), unsummarized }
}
