import { Transform, type TransformCallback } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { isLosslessNumber, parse, stringify } from 'lossless-json'

/**
 * The arguments of tools/call requests as the JSON text a harness sent. The MCP SDK hands the handler
 * parsed JSON, where `5.0` and `5` are the same number; graders that follow a checker telling them
 * apart (BFCL rejects a float where an integer is declared) need the literal. Each message is read
 * again with a parser that keeps number literals, and the arguments are written back as text with
 * every literal as sent.
 */

/** The key of a JSON-RPC id, as the SDK's `extra.requestId` gives it (a string or a number). */
export function idKey(id: unknown): string | null {
  if (typeof id === 'string') return `s:${id}`
  if (typeof id === 'number') return `n:${id}`
  if (isLosslessNumber(id)) return `n:${Number(id.value)}`
  return null
}

/** Every tools/call request of one message (or batch) by id key, with its arguments as text. */
export function callArgumentTexts(message: string): Map<string, string> {
  const out = new Map<string, string>()
  let doc: unknown
  try {
    doc = parse(message)
  } catch {
    return out
  }
  for (const m of Array.isArray(doc) ? doc : [doc]) {
    if (!m || typeof m !== 'object') continue
    const { method, id, params } = m as { method?: unknown; id?: unknown; params?: unknown }
    if (method !== 'tools/call' || !params || typeof params !== 'object') continue
    const key = idKey(id)
    const args = (params as { arguments?: unknown }).arguments
    if (key === null || args === undefined) continue
    const text = stringify(args)
    if (text !== undefined) out.set(key, text)
  }
  return out
}

/**
 * A pass-through for a newline-delimited JSON-RPC stream (MCP over stdio) that records each
 * tools/call's arguments text in `texts` before the line reaches the transport.
 */
export class ArgumentsTap extends Transform {
  private pending = ''
  private readonly decoder = new StringDecoder('utf8')
  constructor(readonly texts: Map<string, string>) {
    super()
  }
  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    this.pending += typeof chunk === 'string' ? chunk : this.decoder.write(chunk)
    let nl = this.pending.indexOf('\n')
    while (nl >= 0) {
      this.record(this.pending.slice(0, nl))
      this.pending = this.pending.slice(nl + 1)
      nl = this.pending.indexOf('\n')
    }
    done(null, chunk)
  }
  override _flush(done: TransformCallback): void {
    this.record(this.pending + this.decoder.end())
    this.pending = ''
    done()
  }
  private record(line: string): void {
    if (!line.includes('tools/call')) return
    for (const [k, v] of callArgumentTexts(line)) this.texts.set(k, v)
  }
}
