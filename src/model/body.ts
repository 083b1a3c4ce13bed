import { spawnSync } from 'node:child_process'
import type { IncomingMessage } from 'node:http'
import zlib from 'node:zlib'

/** Largest request body accepted, bytes (the biggest harness first request seen is ~80 KB). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

/** A request body could not be read or decoded; `status` is the HTTP answer to give. */
export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** Read a request body and undo its `content-encoding` (gzip, deflate, br, zstd). Throws BodyError. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new BodyError(413, `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  return decode(Buffer.concat(chunks), String(req.headers['content-encoding'] ?? ''))
}

function decode(buf: Buffer, encoding: string): Buffer {
  const enc = encoding.toLowerCase().trim()
  // A decompressed body is capped like a plain one: a compression bomb stops at the limit.
  const opts = { maxOutputLength: MAX_BODY_BYTES }
  try {
    if (enc === '' || enc === 'identity') return buf
    if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(buf, opts)
    if (enc === 'deflate') return zlib.inflateSync(buf, opts)
    if (enc === 'br') return zlib.brotliDecompressSync(buf, opts)
    if (enc === 'zstd') return zstd(buf)
  } catch (e) {
    if (e instanceof BodyError) throw e
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new BodyError(413, `decompressed request body over ${MAX_BODY_BYTES} bytes`)
    }
    throw new BodyError(400, `cannot decode ${enc} body: ${(e as Error).message}`)
  }
  throw new BodyError(415, `unsupported content-encoding "${encoding}"`)
}

// Node 20 has no zstd in zlib (added in 22.15); fall back to the zstd command when it is installed.
function zstd(buf: Buffer): Buffer {
  const native = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync
  if (typeof native === 'function') return native(buf)
  const r = spawnSync('zstd', ['-d', '-c', '-q'], { input: buf, maxBuffer: MAX_BODY_BYTES })
  if (r.error || r.status !== 0)
    throw new BodyError(415, 'zstd body: this Node has no zstd and no zstd command')
  return r.stdout
}
