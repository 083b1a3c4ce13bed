/**
 * Values as BFCL's checker sees them. BFCL compares Python objects, where 1 and 1.0 have different
 * types but compare equal, and True == 1; a JSON value is therefore lifted into a tagged value that
 * keeps the Python type. Java and JavaScript arguments arrive as source literals (BFCL's own
 * convention for those categories) and are converted by the rules of BFCL's type converters: a
 * literal that does not fit the declared type stays a string.
 */

import { isLosslessNumber, parse } from 'lossless-json'

export type PyValue =
  | { t: 'int' | 'float'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'str'; v: string }
  | { t: 'none' }
  | { t: 'list'; v: PyValue[] }
  | { t: 'dict'; v: Record<string, PyValue> }
  /** What BFCL's converters cannot produce as a value: compared with nothing. */
  | { t: 'set'; v: PyValue[] }

export type PyType = PyValue['t']

/** The JSON null of a BFCL answer, as written in a TOML task file (TOML has no null). */
export const NULL_MARK = { null: true } as const

export function isNullMark(v: unknown): boolean {
  return (
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    (v as Record<string, unknown>).null === true
  )
}

/**
 * A JSON value (with the TOML null mark) as a Python value. A number read from JSON text with its
 * literal kept (lossless-json's LosslessNumber) has the type Python's `json.loads` gives it: `5` is an
 * int, `5.0` and `5e0` are floats. A number already parsed is an int when integral (the literal is lost).
 */
export function fromJson(v: unknown): PyValue {
  if (v === null || v === undefined || isNullMark(v)) return { t: 'none' }
  if (typeof v === 'boolean') return { t: 'bool', v }
  if (typeof v === 'number') return { t: Number.isInteger(v) ? 'int' : 'float', v }
  if (isLosslessNumber(v)) return { t: /^-?\d+$/.test(v.value) ? 'int' : 'float', v: Number(v.value) }
  if (typeof v === 'string') return { t: 'str', v }
  if (Array.isArray(v)) return { t: 'list', v: v.map(fromJson) }
  return {
    t: 'dict',
    v: Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, fromJson(x)])),
  }
}

/**
 * Call arguments read from the JSON text a harness sent, number literals kept (see fromJson); null when
 * the text is not a JSON object.
 */
export function argumentsFromText(text: string): Record<string, unknown> | null {
  try {
    const v = parse(text)
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/** Python `==`: bool, int and float compare by number; lists element-wise; dicts by keys and values. */
export function pyEqual(a: PyValue, b: PyValue): boolean {
  const num = (x: PyValue): number | null =>
    x.t === 'int' || x.t === 'float' ? x.v : x.t === 'bool' ? Number(x.v) : null
  const na = num(a)
  const nb = num(b)
  if (na !== null || nb !== null) return na !== null && nb !== null && na === nb
  if (a.t !== b.t) return false
  switch (a.t) {
    case 'str':
      return a.v === (b as typeof a).v
    case 'none':
      return true
    case 'list':
    case 'set': {
      const bv = (b as typeof a).v
      return a.v.length === bv.length && a.v.every((x, i) => pyEqual(x, bv[i] as PyValue))
    }
    case 'dict': {
      const bv = (b as typeof a).v
      const ka = Object.keys(a.v)
      return (
        ka.length === Object.keys(bv).length &&
        ka.every((k) => Object.hasOwn(bv, k) && pyEqual(a.v[k] as PyValue, bv[k] as PyValue))
      )
    }
    default:
      return false
  }
}

/** Python `x in list`. */
export const pyIn = (x: PyValue, list: PyValue[]): boolean => list.some((y) => pyEqual(x, y))

/** Python `len()` of a value used as a sequence (a string counts its characters); null when none. */
export function pyLen(v: PyValue): number | null {
  if (v.t === 'str') return [...v.v].length
  if (v.t === 'list' || v.t === 'set') return v.v.length
  if (v.t === 'dict') return Object.keys(v.v).length
  return null
}

/** Iterate a value as a sequence (a string yields its characters). */
export function pyItems(v: PyValue): PyValue[] {
  if (v.t === 'str') return [...v.v].map((c) => ({ t: 'str', v: c }))
  if (v.t === 'list' || v.t === 'set') return v.v
  if (v.t === 'dict') return Object.keys(v.v).map((k) => ({ t: 'str', v: k }))
  return []
}

/**
 * BFCL's string standardization: drop spaces and the characters `,./-_*^`, lower-case, single quotes
 * to double quotes — "April 1, 2024" and "april 1 2024" are the same answer.
 */
export function standardize(s: string): string {
  return s
    .replace(/[ ,./\-_*^]/g, '')
    .toLowerCase()
    .replace(/'/g, '"')
}

// ---- Python literal parsing (int(), float()) ----

/** Python `int(s)`, or null where Python raises. */
export function pyInt(s: string): number | null {
  const t = s.trim()
  if (!/^[-+]?\d+(_\d+)*$/.test(t)) return null
  return Number(t.replace(/_/g, ''))
}

/** Python `float(s)`, or null where Python raises. */
export function pyFloat(s: string): number | null {
  const t = s.trim().replace(/(\d)_(?=\d)/g, '$1')
  if (/^[-+]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity
  if (/^[-+]?nan$/i.test(t)) return Number.NaN
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return null
  return Number(t)
}

const str = (v: string): PyValue => ({ t: 'str', v })
const int = (v: number): PyValue => ({ t: 'int', v })
const float = (v: number): PyValue => ({ t: 'float', v })

// ---- Java ----

/** Java parameter types BFCL knows, with the Python type a converted value has. */
export const JAVA_TYPES: Record<string, PyType> = {
  byte: 'int',
  short: 'int',
  integer: 'int',
  float: 'float',
  double: 'float',
  long: 'int',
  boolean: 'bool',
  char: 'str',
  Array: 'list',
  ArrayList: 'list',
  Set: 'set',
  HashMap: 'dict',
  Hashtable: 'dict',
  Queue: 'list',
  Stack: 'list',
  String: 'str',
  any: 'str',
}

/** Thrown where BFCL's converter raises (an unsupported type); the checker treats it as a failed call. */
export class Unconvertible extends Error {}

/** A Java source literal converted for the declared type, as BFCL's Java converter does. */
export function javaValue(value: string, type: string, nested?: string): PyValue {
  if (!Object.hasOwn(JAVA_TYPES, type)) throw new Unconvertible(`unsupported Java type ${type}`)
  switch (type) {
    case 'byte':
    case 'short':
    case 'integer':
      return /^-?\d+$/.test(value) ? int(Number(value)) : str(value)
    case 'float':
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$/.test(value)
        ? float(Number(value.replace(/[fF]$/, '')))
        : str(value)
    case 'double':
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value) ? float(Number(value)) : str(value)
    case 'long':
      return /^-?\d+[lL]$/.test(value) ? int(Number(value.replace(/[lL]$/, ''))) : str(value)
    case 'boolean':
      return value === 'true' || value === 'false' ? { t: 'bool', v: value === 'true' } : str(value)
    case 'Array':
      return javaArray(value, nested)
    case 'ArrayList':
      return javaArrayList(value, nested)
    case 'HashMap':
      return javaHashMap(value)
    case 'char':
    case 'String':
    case 'any':
      return str(value)
    default:
      throw new Unconvertible(`${type} values are not converted`)
  }
}

function javaElement(s: string, nested?: string): PyValue {
  if (nested === 'char' || nested === 'String') return str(s.slice(1, -1))
  return nested ? javaValue(s, nested) : javaPlain(s)
}

function javaArrayList(s: string, nested?: string): PyValue {
  const asList = /new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)/.exec(s)
  if (asList)
    return { t: 'list', v: (asList[1] as string).split(',').map((e) => javaElement(e.trim(), nested)) }
  const adds = /new\s+ArrayList<\w*>\(\)\s*\{\{\s*([\s\S]+?)\s*\}\}/.exec(s)
  if (adds) {
    const items = [...(adds[1] as string).matchAll(/add\((.+?)\)/g)].map((m) => (m[1] as string).trim())
    return { t: 'list', v: items.map((e) => javaElement(e, nested)) }
  }
  if (/new\s+ArrayList<\w*>\(\)/.test(s)) return { t: 'list', v: [] }
  return str(s)
}

function javaArray(s: string, nested?: string): PyValue {
  const m = /new\s+\w+\[\]\s*\{(.*?)\}/.exec(s)
  if (!m) return str(s)
  const parts = (m[1] as string).split(',').filter((x) => x.trim() !== '')
  return { t: 'list', v: parts.map((x) => (nested ? javaValue(x.trim(), nested) : javaPlain(x.trim()))) }
}

function javaHashMap(s: string): PyValue {
  const m = /new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*([\s\S]*?)\s*\}?\s*\}/.exec(s)
  if (m) {
    const out: Record<string, PyValue> = {}
    const body = m[1] as string
    if (body.trim() !== '') {
      for (const p of body.matchAll(/put\("(.*?)",\s*(.*?)\)/g))
        out[p[1] as string] = javaPlain((p[2] as string).trim())
    }
    return { t: 'dict', v: out }
  }
  if (/new\s+HashMap<.*?>\s*\(\)/.test(s)) return { t: 'dict', v: {} }
  return str(s)
}

/** A Java literal read without a declared type. */
function javaPlain(s: string): PyValue {
  if (s === 'true' || s === 'false') return { t: 'bool', v: s === 'true' }
  if (s.startsWith('"') && s.endsWith('"')) return str(s.slice(1, -1))
  if (/^-?\d+[lL]$/.test(s)) return int(Number(s.slice(0, -1)))
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$/.test(s)) return float(Number(s.replace(/[fF]$/, '')))
  const i = pyInt(s)
  if (i !== null) return int(i)
  const f = pyFloat(s)
  return f !== null ? float(f) : str(s)
}

// ---- JavaScript ----

export const JS_TYPES: Record<string, PyType> = {
  String: 'str',
  integer: 'int',
  float: 'float',
  Bigint: 'int',
  Boolean: 'bool',
  dict: 'dict',
  array: 'list',
  any: 'str',
}

/** A JavaScript source literal converted for the declared type, as BFCL's JavaScript converter does. */
export function jsValue(value: string, type: string, nested?: string): PyValue {
  if (!Object.hasOwn(JS_TYPES, type)) throw new Unconvertible(`unsupported JavaScript type ${type}`)
  switch (type) {
    case 'String':
      return (value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))
        ? str(value.slice(1, -1))
        : str(value)
    case 'integer':
      return /^-?\d+$/.test(value) ? int(Number(value)) : str(value)
    case 'float':
      return /^-?\d+(\.\d+)?$/.test(value) ? float(Number(value)) : str(value)
    case 'Bigint':
      return /^-?\d+n$/.test(value) ? int(Number(value.slice(0, -1))) : str(value)
    case 'Boolean':
      return value === 'true' || value === 'false' ? { t: 'bool', v: value === 'true' } : str(value)
    case 'dict':
      return jsDict(value)
    case 'array':
      return jsArray(value, nested)
    default:
      return str(value)
  }
}

function jsArray(raw: string, nested?: string): PyValue {
  const code = raw.trim()
  const twoD = /^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))/.exec(
    code,
  )
  try {
    if (twoD) {
      const inner = [...twoD[0].matchAll(/\[(.*?)\]/g)].map((m) => m[1] as string)
      return {
        t: 'list',
        v: inner.map((s, idx) => {
          let t = s.trim()
          if (idx === 0 && t.startsWith('[')) t = t.slice(1)
          return { t: 'list', v: t.split(',').map((e) => jsPlain(e.trim())) } as PyValue
        }),
      }
    }
    const one = /^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))/.exec(code)
    if (!one) return str(code)
    const body = one[1] ?? one[2]
    const parts = body === undefined || body.trim() === '' ? [] : body.trim().split(',')
    return {
      t: 'list',
      v: parts.map((e) => {
        const t = e.trim()
        if (!nested) return jsPlain(t)
        return t.startsWith("'") || t.startsWith('"') ? jsValue(t, nested, 'String') : jsValue(t, nested)
      }),
    }
  } catch {
    return str(code)
  }
}

function jsDict(raw: string): PyValue {
  const code = raw.trim()
  if (code === '{}') return { t: 'dict', v: {} }
  const m = /^\{(.*?)\}/.exec(code)
  if (!m) return str(code)
  const out: Record<string, PyValue> = {}
  for (const p of (m[1] as string).matchAll(/([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)/g)) {
    const key = stripChars((p[1] as string).trim(), '\'"')
    const value = (p[2] as string).trim()
    if (value.startsWith('[') && value.endsWith(']')) out[key] = jsArray(value)
    else if (value.startsWith('{') && value.endsWith('}')) out[key] = jsDict(value)
    else out[key] = jsPlain(stripChars(value, '\'"'))
  }
  return { t: 'dict', v: out }
}

function jsPlain(raw: string): PyValue {
  const s = raw.trim()
  if (s === 'true' || s === 'false') return { t: 'bool', v: s === 'true' }
  if ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'")))
    return str(s.slice(1, -1))
  const i = pyInt(s)
  if (i !== null) return int(i)
  const f = pyFloat(s)
  return f !== null ? float(f) : str(s)
}

/** Python `s.strip(chars)`. */
function stripChars(s: string, chars: string): string {
  let a = 0
  let b = s.length
  while (a < b && chars.includes(s[a] as string)) a++
  while (b > a && chars.includes(s[b - 1] as string)) b--
  return s.slice(a, b)
}
