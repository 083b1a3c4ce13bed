/**
 * An HTTP request target as a URL: origin-form (`/v1/…`, kept whole even when it starts with `//`,
 * which `new URL(target, base)` would read as a host) or absolute-form (`http://host/v1/…`); null when
 * it cannot be parsed.
 */
export function requestTarget(target: string | undefined): URL | null {
  try {
    const t = target ?? '/'
    return t.startsWith('/') ? new URL(`http://127.0.0.1${t}`) : new URL(t)
  } catch {
    return null
  }
}
