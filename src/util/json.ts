import { createHash, webcrypto } from 'node:crypto'

/**
 * Canonical JSON: object keys sorted recursively, no whitespace. Used for hashes (config hash,
 * manifest sha256) so that key order in a manifest never changes an identity.
 * Throws on NaN/Infinity: they have no JSON form.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

function sortKeys(v: unknown): unknown {
  if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`non-finite number ${v} has no JSON form`)
  if (Array.isArray(v)) return v.map(sortKeys)
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v as Record<string, unknown>).sort()) {
      const x = (v as Record<string, unknown>)[k]
      if (x !== undefined) out[k] = sortKeys(x)
    }
    return out
  }
  return v
}

/** sha256 hex of a string or buffer. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** SHA-256 (hex) of bytes, computed on libuv's thread pool (Web Crypto) while this thread goes on. */
export async function sha256OffThread(data: Uint8Array): Promise<string> {
  return Buffer.from(await webcrypto.subtle.digest('SHA-256', data)).toString('hex')
}

/**
 * Strict pretty JSON for artifacts: 2-space indent, trailing newline. Throws if any number is NaN or
 * ±Infinity (an undefined statistic must be `null` with a reason, never a non-finite number).
 */
export function strictJson(value: unknown, indent = 2): string {
  return `${JSON.stringify(
    value,
    (key, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) {
        throw new Error(`non-finite number ${v} at key "${key}": use null with a reason`)
      }
      return v
    },
    indent,
  )}\n`
}
