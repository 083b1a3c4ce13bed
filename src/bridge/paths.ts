/**
 * Dotted paths into the world (`orders.{order_id}.status`) and `{name}` argument placeholders.
 * Pure; shared by validation (env-schema.ts) and the effects (effects.ts).
 */

export type Segment = { kind: 'key'; name: string } | { kind: 'arg'; name: string }

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor'])
const ARG = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/

/** Segments of a dotted path, or a message saying why the path is not one. */
export function parsePath(p: string): Segment[] | string {
  if (p.startsWith('.') || p.endsWith('.') || p.includes('..')) return `"${p}" has an empty segment`
  const out: Segment[] = []
  for (const part of p.split('.')) {
    const m = ARG.exec(part)
    if (m?.[1]) out.push({ kind: 'arg', name: m[1] })
    else if (/[{}/\\]/.test(part)) return `"${part}" in "${p}" is neither a key nor a whole {placeholder}`
    else if (FORBIDDEN.has(part)) return `"${part}" is not allowed in a path`
    else out.push({ kind: 'key', name: part })
  }
  return out
}

/** Placeholder names used in strings anywhere inside `v`. */
export function placeholders(v: unknown): string[] {
  const out: string[] = []
  const walk = (x: unknown): void => {
    if (typeof x === 'string')
      for (const m of x.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) out.push(m[1] as string)
    else if (Array.isArray(x)) x.forEach(walk)
    else if (x && typeof x === 'object') Object.values(x).forEach(walk)
  }
  walk(v)
  return out
}

/**
 * `v` with placeholders replaced from `args`: a string that is exactly `{name}` becomes the argument's
 * value (any type; an omitted argument becomes null); an embedded `{name}` is replaced by the argument's
 * text (JSON for non-strings, empty when omitted).
 */
export function substitute(v: unknown, args: Record<string, unknown>): unknown {
  if (typeof v === 'string') {
    const whole = ARG.exec(v)
    if (whole?.[1]) return structuredClone(args[whole[1]] ?? null)
    return v.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const a = args[name]
      if (a === undefined || a === null) return ''
      return typeof a === 'string' ? a : JSON.stringify(a)
    })
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, args))
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, args)]))
  }
  return v
}
