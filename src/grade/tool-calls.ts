import { z } from 'zod'
import type { TracedCall } from '../bridge/calls.js'
import { isBuiltin } from '../bridge/env-schema.js'
import { type Evidence, fail, type Grade, type Grader, pass } from './types.js'
import { jsonEqual } from './values.js'

/**
 * tool_calls: the calls the harness made match the expected ones, BFCL-style. `calls` is BFCL's
 * ground-truth shape: one `{ "<tool>": { "<param>": [allowed values…] } }` per expected call, where
 * `""` among the allowed values means the parameter may be omitted, and an allowed object whose values
 * are lists is matched the same way one level down. With `order: "any"` (default: parallel calls) an
 * assignment of recorded to expected calls is searched properly (bipartite matching, never greedy).
 * Calls answered `invalid_arguments` are left out unless `count_invalid`; any recorded call not
 * matched fails the grade unless `allow_extra`. Reasons name tools and parameters, never values sent.
 */
export const ToolCallsSpec = z.strictObject({
  calls: z
    .array(
      z
        .record(z.string(), z.record(z.string(), z.array(z.unknown())))
        .refine((c) => Object.keys(c).length === 1, 'each expected call names exactly one tool'),
    )
    .min(1),
  order: z.enum(['any', 'strict']).default('any'),
  allow_extra: z.boolean().default(false),
  count_invalid: z.boolean().default(false),
})
export type ToolCallsSpec = z.output<typeof ToolCallsSpec>

interface Expected {
  tool: string
  params: Record<string, unknown[]>
}

export const toolCalls: Grader<ToolCallsSpec> = {
  name: 'tool_calls',
  spec: ToolCallsSpec,
  async grade(spec, ev) {
    return gradeToolCalls(spec, ev)
  },
}

export function gradeToolCalls(spec: ToolCallsSpec, ev: Pick<Evidence, 'calls' | 'env'>): Grade {
  const expected: Expected[] = spec.calls.map((c) => {
    const [tool, params] = Object.entries(c)[0] as [string, Record<string, unknown[]>]
    return { tool, params }
  })
  const actual = ev.calls.filter((c) => spec.count_invalid || c.status !== 'invalid_arguments')
  const types = paramTypes(ev.env)
  const check = (e: Expected, a: TracedCall): string | null => callMismatch(e, a, types.get(e.tool) ?? {})
  if (spec.order === 'strict') {
    for (let i = 0; i < expected.length; i++) {
      const e = expected[i] as Expected
      const a = actual[i]
      if (!a) return fail('tool_calls:missing_call', `expected call ${i + 1} (${e.tool}) was not made`)
      const m = check(e, a)
      if (m) return fail(`tool_calls:${m.split(' ')[0]}`, `call ${i + 1}: ${m}`)
    }
    if (actual.length > expected.length && !spec.allow_extra) {
      return fail(
        'tool_calls:extra_call',
        `${actual.length - expected.length} call(s) beyond the ${expected.length} expected`,
      )
    }
    return pass(`${expected.length} call(s) in order`)
  }
  const ok = expected.map((e) => actual.map((a) => check(e, a) === null))
  const match = maximumMatching(ok, actual.length)
  const unmatched = expected.findIndex((_, i) => match[i] === -1)
  if (unmatched >= 0) {
    const e = expected[unmatched] as Expected
    const sameName = actual.filter((a) => a.tool === e.tool)
    if (sameName.length === 0) return fail('tool_calls:missing_call', `no call to ${e.tool}`)
    const m = check(e, sameName[0] as TracedCall) ?? 'ambiguous another expected call took the only match'
    return fail(`tool_calls:${m.split(' ')[0]}`, `${e.tool}: ${m}`)
  }
  if (actual.length > expected.length && !spec.allow_extra) {
    const used = new Set(match)
    const extra = actual.filter((_, j) => !used.has(j)).map((a) => a.tool)
    return fail('tool_calls:extra_call', `unexpected call(s): ${extra.join(', ')}`)
  }
  return pass(`${expected.length} expected call(s) matched`)
}

/** First mismatch of a recorded call against an expected one, as `<code> <detail>`, or null. */
function callMismatch(e: Expected, a: TracedCall, types: Record<string, string | undefined>): string | null {
  if (a.tool !== e.tool) return `wrong_tool called ${a.tool}`
  const args =
    a.arguments && typeof a.arguments === 'object' && !Array.isArray(a.arguments)
      ? (a.arguments as Record<string, unknown>)
      : {}
  for (const k of Object.keys(args)) {
    if (!Object.hasOwn(e.params, k)) return `unexpected_param ${k}`
  }
  for (const [k, allowed] of Object.entries(e.params)) {
    if (!Object.hasOwn(args, k)) {
      if (allowed.includes('')) continue
      return `missing_param ${k}`
    }
    const v = args[k]
    const t = types[k]
    if (t && !hasType(v, t)) return `type_error ${k} (expected ${t})`
    if (!allowed.some((al) => matchesAllowed(v, al))) return `wrong_value ${k}`
  }
  return null
}

/** JSON Schema type of each parameter of each effect tool (first type of a type list). */
function paramTypes(env: Evidence['env']): Map<string, Record<string, string | undefined>> {
  const out = new Map<string, Record<string, string | undefined>>()
  for (const t of env.tools) {
    if (isBuiltin(t)) continue
    const props = (t.parameters.properties ?? {}) as Record<string, { type?: unknown }>
    out.set(
      t.name,
      Object.fromEntries(
        Object.entries(props).map(([k, p]) => [
          k,
          Array.isArray(p?.type) ? undefined : (p?.type as string | undefined),
        ]),
      ),
    )
  }
  return out
}

/** AST type check as in BFCL: an integer is accepted where a number (float) is expected. */
function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string'
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v)
    case 'number':
      return typeof v === 'number'
    case 'boolean':
      return typeof v === 'boolean'
    case 'array':
      return Array.isArray(v)
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v)
    case 'null':
      return v === null
    default:
      return true
  }
}

/**
 * `v` matches one allowed value: equal as JSON; or, for an allowed object whose values are all lists,
 * an object with no other keys whose each value matches one of the listed values (a key may be
 * absent when its list holds ""); or, element-wise, a list of such.
 */
export function matchesAllowed(v: unknown, allowed: unknown): boolean {
  if (jsonEqual(v, allowed)) return true
  if (Array.isArray(allowed) && Array.isArray(v)) {
    return allowed.length === v.length && allowed.every((al, i) => matchesAllowed(v[i], al))
  }
  if (isPlainObject(allowed) && isPlainObject(v) && Object.values(allowed).every(Array.isArray)) {
    const lists = allowed as Record<string, unknown[]>
    if (Object.keys(v).some((k) => !Object.hasOwn(lists, k))) return false
    return Object.entries(lists).every(([k, options]) =>
      Object.hasOwn(v, k) ? options.some((o) => matchesAllowed(v[k], o)) : options.includes(''),
    )
  }
  return false
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * Maximum bipartite matching (Kuhn's augmenting paths): `ok[i][j]` says expected i may take recorded
 * call j. Returns, per expected call, the recorded call index or -1.
 */
export function maximumMatching(ok: boolean[][], columns: number): number[] {
  const ofColumn = new Array<number>(columns).fill(-1)
  const tryRow = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < columns; j++) {
      if (!ok[i]?.[j] || seen[j]) continue
      seen[j] = true
      if (ofColumn[j] === -1 || tryRow(ofColumn[j] as number, seen)) {
        ofColumn[j] = i
        return true
      }
    }
    return false
  }
  for (let i = 0; i < ok.length; i++) tryRow(i, new Array<boolean>(columns).fill(false))
  const ofRow = new Array<number>(ok.length).fill(-1)
  ofColumn.forEach((i, j) => {
    if (i >= 0) ofRow[i] = j
  })
  return ofRow
}
