import type { Effect } from './env-schema.js'
import { parsePath, substitute } from './paths.js'

/** The JSON store a bridge environment's tools read and change. */
export type World = Record<string, unknown>

/** A call that could not take effect; returned to the caller as an MCP tool error. */
export interface ToolError {
  kind: 'tool_error'
  /** `missing_path` (nothing at the path), `bad_path` (an argument is not a usable key), `not_array`. */
  code: 'missing_path' | 'bad_path' | 'not_array'
  message: string
}

export interface Applied {
  world: World
  result: unknown
}

export function isToolError(r: Applied | ToolError): r is ToolError {
  return (r as ToolError).kind === 'tool_error'
}

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor'])

/**
 * Apply one effect to `world` with the call's (already validated) arguments. Pure: `world` is never
 * changed; a changed world is a new object. `return` gives the value at the path; `set` replaces (or
 * adds) the last key under an existing parent; `append` pushes onto an existing array. Errors: the path
 * or its parent does not exist, an argument used as a key is not a string or integer, the target of
 * `append` is not an array.
 */
export function applyEffect(
  world: World,
  effect: Effect,
  args: Record<string, unknown>,
): Applied | ToolError {
  const keys = resolveKeys(effect.path, args)
  if (!Array.isArray(keys)) return keys
  if (effect.op === 'return') {
    const found = lookup(world, keys)
    if (!found.ok) return missing(keys, found.depth)
    return { world, result: structuredClone(found.value) }
  }
  const next = structuredClone(world)
  const parentKeys = keys.slice(0, -1)
  const last = keys[keys.length - 1] as string
  const parent = lookup(next, parentKeys)
  if (!parent.ok) return missing(keys, parent.depth)
  const container = parent.value
  const value = substitute(effect.value, args)
  const result = effect.result === undefined ? structuredClone(value) : substitute(effect.result, args)
  if (effect.op === 'set') {
    if (Array.isArray(container)) {
      const i = arrayIndex(container, last, true)
      if (i === null) return missing(keys, keys.length - 1)
      container[i] = value
    } else if (isObject(container)) {
      container[last] = value
    } else return missing(keys, keys.length - 1)
    return { world: next, result }
  }
  const target = childOf(container, last)
  if (!target.ok) return missing(keys, keys.length - 1)
  if (!Array.isArray(target.value)) {
    return { kind: 'tool_error', code: 'not_array', message: `${keys.join('.')} is not a list` }
  }
  target.value.push(value)
  return { world: next, result }
}

/** The path's keys with placeholders replaced by argument values, or a bad_path error. */
function resolveKeys(p: string, args: Record<string, unknown>): string[] | ToolError {
  const segs = parsePath(p)
  if (typeof segs === 'string') return { kind: 'tool_error', code: 'bad_path', message: segs }
  const out: string[] = []
  for (const s of segs) {
    if (s.kind === 'key') {
      out.push(s.name)
      continue
    }
    const a = args[s.name]
    const key = typeof a === 'string' ? a : Number.isInteger(a) ? String(a) : null
    if (key === null || key === '' || FORBIDDEN.has(key)) {
      return { kind: 'tool_error', code: 'bad_path', message: `argument "${s.name}" cannot be used as a key` }
    }
    out.push(key)
  }
  return out
}

type Found = { ok: true; value: unknown } | { ok: false; depth: number }

function lookup(root: unknown, keys: string[]): Found {
  let cur: unknown = root
  for (let d = 0; d < keys.length; d++) {
    const c = childOf(cur, keys[d] as string)
    if (!c.ok) return { ok: false, depth: d }
    cur = c.value
  }
  return { ok: true, value: cur }
}

function childOf(container: unknown, key: string): { ok: true; value: unknown } | { ok: false } {
  if (Array.isArray(container)) {
    const i = arrayIndex(container, key, false)
    return i === null ? { ok: false } : { ok: true, value: container[i] }
  }
  if (isObject(container) && Object.hasOwn(container, key)) return { ok: true, value: container[key] }
  return { ok: false }
}

function arrayIndex(a: unknown[], key: string, allowEnd: boolean): number | null {
  if (!/^(0|[1-9][0-9]*)$/.test(key)) return null
  const i = Number(key)
  return i < a.length || (allowEnd && i === a.length) ? i : null
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function missing(keys: string[], depth: number): ToolError {
  return {
    kind: 'tool_error',
    code: 'missing_path',
    message: `not found: ${keys.slice(0, depth + 1).join('.')}`,
  }
}
