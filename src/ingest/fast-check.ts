import type { z } from 'zod'

/** A predicate over parsed JSON: true only when the schema accepts the value unchanged. */
export type FastCheck = (value: unknown) => boolean

// The parts of a zod 4 definition read here (zod's `_zod.def`, the same tree zod's own JIT reads).
interface Def {
  type: string
  checks?: Array<{
    _zod: {
      def: {
        check: string
        format?: string
        value?: unknown
        inclusive?: boolean
        maximum?: unknown
        minimum?: unknown
        pattern?: unknown
      }
    }
  }>
  innerType?: Schema
  element?: Schema
  shape?: Record<string, Schema>
  catchall?: Schema
  keyType?: Schema
  valueType?: Schema
  values?: unknown[]
  entries?: Record<string, unknown>
}
type Schema = { _zod: { def: Def } }

interface Compiled {
  check: FastCheck
  /** Body of `function (c) { … return check }`; `c` holds `constants`. */
  source: string
  constants: unknown[]
}

const cache = new WeakMap<object, Compiled | null>()

/**
 * A plain predicate compiled from a zod schema, for validating many JSON rows quickly: zod builds a
 * new copy of every row and collects issues on the way; this only answers yes or no, as one generated
 * function per object type (about ten times faster on our artifact rows).
 *
 * Contract: `check(v) === true` ⇒ `schema.safeParse(v)` succeeds with a value equal to `v` (same
 * fields and values; key order may differ). When it returns false the caller asks zod, which stays
 * the authority for the message and for values it accepts in another form. Covers the subset of zod
 * our artifact schemas use — strict objects, strings (with length limits and flag-free regular
 * expressions), finite numbers with the safe-integer format and lower and upper bounds, booleans,
 * literals, enums, nullable, optional keys, arrays (with length limits), records of unknown, unknown.
 * Returns null (no fast path) for any other type or check: refinements, transforms, defaults,
 * non-strict objects…
 */
export function fastCheck(schema: z.ZodType): FastCheck | null {
  return compiled(schema)?.check ?? null
}

/**
 * The source of `fastCheck(schema)` for another thread: the body of a function of one parameter that
 * returns the check (`new Function('c', source)([])`). Null when there is no fast check or it needs
 * constants that are not plain JSON literals.
 */
export function fastCheckSource(schema: z.ZodType): string | null {
  const c = compiled(schema)
  return c && c.constants.length === 0 ? c.source : null
}

function compiled(schema: z.ZodType): Compiled | null {
  const hit = cache.get(schema)
  if (hit !== undefined) return hit
  let c: Compiled | null = null
  try {
    c = generate(schema as unknown as Schema)
  } catch (e) {
    if (!(e instanceof Unsupported)) throw e
  }
  cache.set(schema, c)
  return c
}

class Unsupported extends Error {}

/** JavaScript source of the checker: `function f<i>(v)` per object or array type, `f0` the root. */
function generate(schema: Schema): Compiled {
  const functions: string[] = []
  const constants: unknown[] = []
  // Called once a body is complete, so a function's callees are always declared before it.
  const fn = (body: string): string => {
    const name = `f${functions.length}`
    functions.push(`function ${name}(v) {\n${body}\n}`)
    return name
  }
  // Regular expressions are written into the source (one each, made once), so it stays plain text.
  const regexes: string[] = []
  const regex = (r: RegExp): string => {
    if (r.global || r.sticky) throw new Unsupported('regex with state')
    regexes.push(
      `const r${regexes.length} = new RegExp(${JSON.stringify(r.source)}, ${JSON.stringify(r.flags)})`,
    )
    return `r${regexes.length - 1}`
  }
  const literal = (value: unknown): string => {
    if (typeof value === 'string' || typeof value === 'boolean' || value === null)
      return JSON.stringify(value)
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return String(value)
    constants.push(value)
    return `c[${constants.length - 1}]`
  }

  /** A boolean expression testing the variable `x`. */
  const expr = (s: Schema, x: string): string => {
    const def = s._zod.def
    switch (def.type) {
      case 'string':
        return stringExpr(def, x, regex)
      case 'boolean':
        noChecks(def)
        return `typeof ${x} === 'boolean'`
      case 'number':
        return numberExpr(def, x)
      case 'unknown':
        noChecks(def)
        return 'true'
      case 'literal':
      case 'enum': {
        noChecks(def)
        const values = def.type === 'literal' ? (def.values ?? []) : Object.values(def.entries ?? {})
        if (values.length === 0) throw new Unsupported('empty enum')
        return `(${values.map((v) => `${x} === ${literal(v)}`).join(' || ')})`
      }
      case 'nullable':
        noChecks(def)
        return `(${x} === null || ${expr(need(def.innerType), x)})`
      case 'array': {
        const limits = lengthChecks(def, 'v').join(' && ')
        const element = expr(need(def.element), 'x')
        const name = fn(
          `  if (!Array.isArray(v)) return false\n${limits ? `  if (!(${limits})) return false\n` : ''}  for (let i = 0; i < v.length; i++) {\n    const x = v[i]\n    if (!(${element})) return false\n  }\n  return true`,
        )
        return `${name}(${x})`
      }
      case 'record': {
        noChecks(def)
        const key = need(def.keyType)._zod.def
        const value = need(def.valueType)._zod.def
        if (key.type !== 'string' || (key.checks?.length ?? 0) > 0 || value.type !== 'unknown')
          throw new Unsupported('record other than string → unknown')
        // zod strips a `__proto__` key from records: such a value is not returned unchanged.
        return `(typeof ${x} === 'object' && ${x} !== null && !Array.isArray(${x}) && !Object.hasOwn(${x}, '__proto__'))`
      }
      case 'object':
        return `${objectFn(def)}(${x})`
      default:
        throw new Unsupported(def.type)
    }
  }

  /** Strict objects: every declared key present (unless optional) and valid, and no other key. */
  const objectFn = (def: Def): string => {
    noChecks(def)
    if (def.catchall?._zod.def.type !== 'never') throw new Unsupported('non-strict object')
    const lines = [
      `  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false`,
      '  let keys = 0',
      '  for (const _ in v) keys++',
      '  let x',
    ]
    let required = 0
    const optional: string[] = []
    for (const [key, s] of Object.entries(def.shape ?? {})) {
      // Keys Object.prototype also has would read through to it when absent: leave those to zod.
      if (key in Object.prototype || key === '__proto__') throw new Unsupported(`key ${key}`)
      const d = s._zod.def
      const k = JSON.stringify(key)
      if (d.type === 'optional') {
        noChecks(d)
        optional.push(
          `  x = v[${k}]\n  if (x !== undefined) {\n    keys--\n    if (!(${expr(need(d.innerType), 'x')})) return false\n  }`,
        )
      } else {
        required++
        // JSON holds no `undefined`: an undefined property is an absent key.
        lines.push(`  x = v[${k}]\n  if (x === undefined || !(${expr(s, 'x')})) return false`)
      }
    }
    // Every own key is a present required key, a present optional key, or an unknown one.
    lines.push(...optional, `  return keys === ${required}`)
    return fn(lines.join('\n'))
  }

  const root = expr(schema, 'x')
  const source = `${[...regexes, ...functions].join('\n')}\nreturn function check(x) {\n  return ${root}\n}`
  return { check: new Function('c', source)(constants) as FastCheck, source, constants }
}

function need(s: Schema | undefined): Schema {
  if (!s) throw new Unsupported('incomplete definition')
  return s
}

function noChecks(def: Def): void {
  if (def.checks && def.checks.length > 0) throw new Unsupported(`${def.type} with checks`)
}

/** Strings with zod's length limits (see lengthLimits) and flag-free regular expressions. */
function stringExpr(def: Def, x: string, regex: (r: RegExp) => string): string {
  const parts = [`typeof ${x} === 'string'`]
  for (const c of def.checks ?? []) {
    const d = c._zod.def
    if (d.check === 'string_format' && d.format === 'regex' && d.pattern instanceof RegExp)
      parts.push(`${regex(d.pattern)}.test(${x})`)
    else if (d.check !== 'max_length' && d.check !== 'min_length')
      throw new Unsupported(`string check ${d.check}`)
  }
  // Length limits are joined with &&: each expression is true when the limit holds.
  return `(${[...parts.slice(0, 1), ...lengthLimits(def, x, true), ...parts.slice(1)].join(' && ')})`
}

/**
 * Length limits as conditions that hold only when zod's does. Arrays: `x.length`. Strings: zod counts
 * code points where UTF-16 units leave it in doubt, and a code point is one or two units, so
 * `length <= max` suffices; `length >= min` suffices with no surrogate in the string or at twice the
 * floor. A string these leave undecided is judged by zod (the contract allows a false here).
 */
function lengthLimits(def: Def, x: string, string = false): string[] {
  const out: string[] = []
  for (const c of def.checks ?? []) {
    const d = c._zod.def
    if (d.check === 'max_length' && Number.isSafeInteger(d.maximum)) out.push(`${x}.length <= ${d.maximum}`)
    else if (d.check === 'min_length' && Number.isSafeInteger(d.minimum))
      out.push(
        string
          ? `${x}.length >= ${d.minimum} && (${x}.length >= ${2 * (d.minimum as number)} || !/[\\uD800-\\uDFFF]/.test(${x}))`
          : `${x}.length >= ${d.minimum}`,
      )
    else if (d.check === 'max_length' || d.check === 'min_length') throw new Unsupported('length limit')
  }
  return out
}

/** Array length limits as one condition each; any check other than a length limit is unsupported. */
function lengthChecks(def: Def, x: string): string[] {
  for (const c of def.checks ?? []) {
    const check = c._zod.def.check
    if (check !== 'max_length' && check !== 'min_length') throw new Unsupported(`array check ${check}`)
  }
  return lengthLimits(def, x)
}

/** Finite numbers (JSON holds no others) with zod's safe-integer format and lower bounds. */
function numberExpr(def: Def, x: string): string {
  let integer = false
  const bounds: string[] = []
  for (const c of def.checks ?? []) {
    const d = c._zod.def
    if (d.check === 'number_format' && d.format === 'safeint') integer = true
    else if (d.check === 'greater_than' && typeof d.value === 'number' && Number.isFinite(d.value))
      bounds.push(`${x} ${d.inclusive ? '>=' : '>'} ${d.value}`)
    else if (d.check === 'less_than' && typeof d.value === 'number' && Number.isFinite(d.value))
      bounds.push(`${x} ${d.inclusive ? '<=' : '<'} ${d.value}`)
    else throw new Unsupported(`number check ${d.check}`)
  }
  const base = integer ? `Number.isSafeInteger(${x})` : `(typeof ${x} === 'number' && Number.isFinite(${x}))`
  return `(${[base, ...bounds].join(' && ')})`
}
