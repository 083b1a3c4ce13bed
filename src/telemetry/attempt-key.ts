import { randomBytes } from 'node:crypto'
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'

/** Where a harness put its key. Each SDK has its own habit (harnesses.md). */
export type KeyPlace = 'authorization' | 'x-api-key' | 'x-goog-api-key' | 'api-key' | 'query' | 'path'

export interface KeyCandidate {
  key: string
  place: KeyPlace
}

/** A fresh per-attempt key. `sk-` prefixed because some SDKs check the prefix; 128 random bits. */
export function newAttemptKey(): string {
  return `sk-hw-${randomBytes(16).toString('hex')}`
}

const HEADER_PLACES = ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key'] as const

/**
 * Every key a request carries, in the order checked: path prefix `/a/<token>`, `Authorization: Bearer`,
 * `x-api-key` (Anthropic), `x-goog-api-key` (Gemini), `api-key` (Azure), `?key=` (Gemini REST).
 */
export function keyCandidates(
  headers: IncomingHttpHeaders,
  query: URLSearchParams | null,
  pathToken: string | null,
): KeyCandidate[] {
  const out: KeyCandidate[] = []
  if (pathToken) out.push({ key: pathToken, place: 'path' })
  for (const h of HEADER_PLACES) {
    const raw = headers[h]
    const v = Array.isArray(raw) ? raw[0] : raw
    if (!v) continue
    const key = h === 'authorization' ? v.replace(/^Bearer\s+/i, '').trim() : v.trim()
    if (key) out.push({ key, place: h })
  }
  const q = query?.get('key')
  if (q) out.push({ key: q, place: 'query' })
  return out
}

/** Hop-by-hop headers are the connection's, not the message's: never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'host',
])

/**
 * The request headers sent upstream: the client's, minus hop-by-hop ones, with every header that
 * carried the per-attempt key rewritten to carry `upstreamKey` in the same style (so a harness never
 * holds the real key). With no `upstreamKey` the client's key headers pass through unchanged.
 */
export function upstreamHeaders(
  headers: IncomingHttpHeaders,
  attemptKey: string | null,
  upstreamKey: string | undefined,
  extra: Record<string, string> | undefined,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k)) continue
    out[k] = v
  }
  if (upstreamKey !== undefined && attemptKey !== null) {
    for (const h of HEADER_PLACES) {
      const v = out[h]
      if (typeof v !== 'string') continue
      const bare = h === 'authorization' ? v.replace(/^Bearer\s+/i, '').trim() : v.trim()
      if (bare !== attemptKey) continue
      out[h] = h === 'authorization' ? `Bearer ${upstreamKey}` : upstreamKey
    }
  }
  if (extra) for (const [k, v] of Object.entries(extra)) out[k] = v
  return out
}

/**
 * The query string sent upstream: `key=<attempt key>` becomes `key=<upstream key>`; everything else
 * is kept byte for byte.
 */
export function upstreamSearch(
  search: string,
  attemptKey: string | null,
  upstreamKey: string | undefined,
): string {
  if (!search || upstreamKey === undefined || attemptKey === null) return search
  const q = new URLSearchParams(search)
  if (q.get('key') !== attemptKey) return search
  q.set('key', upstreamKey)
  return `?${q.toString()}`
}

/** The header a wire API carries its key in: Anthropic `x-api-key`, Gemini `x-goog-api-key`, else Bearer. */
export function keyHeaderFor(api: string, key: string): [string, string] {
  if (api === 'anthropic') return ['x-api-key', key]
  if (api === 'gemini') return ['x-goog-api-key', key]
  return ['authorization', `Bearer ${key}`]
}
