import { z } from 'zod'
import type { TracedCall } from '../bridge/calls.js'
import {
  argumentsFromText,
  fromJson,
  isNullMark,
  JAVA_TYPES,
  JS_TYPES,
  javaValue,
  jsValue,
  type PyType,
  type PyValue,
  pyIn,
  pyItems,
  pyLen,
  standardize,
  Unconvertible,
} from './bfcl-values.js'
import { type Evidence, fail, type Grade, type Grader, pass, ungraded } from './types.js'

/**
 * bfcl: the calls graded as BFCL v4's AST checker grades them. `mode` is the checker BFCL picks from
 * the category: `simple` (exactly one call), `multiple` (one call, to the expected one of several
 * functions), `parallel` (as many calls as expected, in any order, each expected call taking the first
 * unmatched call that fits, as BFCL does), `irrelevance` (no call at all, and an answer given) and
 * `relevance` (at least one call the bridge accepted). `functions` keeps each offered function's
 * BFCL name (the visible mapping of dotted names), required parameters and declared BFCL types;
 * `calls` is the ground truth, `""` among the allowed values meaning "may be omitted" and `{ null =
 * true }` standing for JSON null (TOML has none): the parameter may be sent as null or omitted. With `semantics = "bfcl"` (default) strings are standardized, an
 * int is accepted where a Python float is declared, and Java/JavaScript arguments are source
 * literals converted by the declared type; `"exact"` compares strings as sent and keeps number types
 * strict. Calls the bridge answered `invalid_arguments` are left out unless `count_invalid`.
 */
const FunctionDecl = z.strictObject({
  tool: z.string().min(1),
  name: z.string().min(1),
  required: z.array(z.string()).default([]),
  types: z.record(z.string(), z.string()).default({}),
  items: z.record(z.string(), z.string()).default({}),
})
type FunctionDecl = z.output<typeof FunctionDecl>

export const BfclSpec = z
  .strictObject({
    mode: z.enum(['simple', 'multiple', 'parallel', 'irrelevance', 'relevance']),
    language: z.enum(['python', 'java', 'javascript']).default('python'),
    semantics: z.enum(['bfcl', 'exact']).default('bfcl'),
    functions: z.array(FunctionDecl).default([]),
    calls: z
      .array(
        z
          .record(z.string(), z.record(z.string(), z.array(z.unknown())))
          .refine((c) => Object.keys(c).length === 1, 'each expected call names exactly one tool'),
      )
      .default([]),
    count_invalid: z.boolean().default(false),
  })
  .refine((s) => s.mode === 'irrelevance' || s.mode === 'relevance' || s.calls.length > 0, {
    message: 'the simple, multiple and parallel modes need at least one expected call',
    path: ['calls'],
  })
  .refine((s) => s.functions.length > 0 || s.mode === 'irrelevance', {
    message: 'name the offered functions',
    path: ['functions'],
  })
export type BfclSpec = z.output<typeof BfclSpec>

export const bfcl: Grader<BfclSpec> = {
  name: 'bfcl',
  spec: BfclSpec,
  async grade(spec, ev) {
    return gradeBfcl(spec, ev)
  },
}

/** One call as the checker sees it. */
interface Call {
  tool: string
  args: Record<string, unknown>
}
interface Expected {
  tool: string
  params: Record<string, unknown[]>
}
type Miss = { code: string; detail: string }

export function gradeBfcl(spec: BfclSpec, ev: Pick<Evidence, 'calls' | 'answer'>): Grade {
  const label = spec.semantics === 'bfcl' ? 'BFCL semantics' : 'exact semantics'
  if (spec.mode === 'irrelevance') {
    if (ev.calls.length > 0)
      return fail('bfcl:call_made', `${ev.calls.length} call(s) made where no function applies`)
    if (ev.answer === null) return ungraded('bfcl:no_answer', 'no final answer was captured')
    if (ev.answer.trim() === '') return fail('bfcl:no_answer', 'no call, but no answer either')
    return pass('no call made; answered instead')
  }
  if (spec.mode === 'relevance') {
    const ok = ev.calls.filter((c) => c.status !== 'invalid_arguments').length
    return ok > 0
      ? pass(`${ok} well-formed call(s) made`)
      : fail('bfcl:no_call', 'no well-formed call was made')
  }
  const outputs: Call[] = ev.calls
    .filter((c) => spec.count_invalid || c.status !== 'invalid_arguments')
    .map(asCall)
  const expected: Expected[] = spec.calls.map((c) => {
    const [tool, params] = Object.entries(c)[0] as [string, Record<string, unknown[]>]
    return { tool, params }
  })
  const fns = new Map(spec.functions.map((f) => [f.tool, f]))
  const shown = (tool: string): string => {
    const f = fns.get(tool)
    return f && f.name !== tool ? `${tool} (BFCL ${f.name})` : tool
  }
  const check = (fn: FunctionDecl | undefined, out: Call, exp: Expected): Miss | null => {
    if (!fn) return { code: 'bad_spec', detail: `no declaration of ${exp.tool}` }
    try {
      return checkCall(fn, out, exp, spec.language, spec.semantics === 'bfcl')
    } catch (e) {
      if (e instanceof Unconvertible) return { code: 'type_error', detail: e.message }
      throw e
    }
  }
  const failed = (m: Miss, where: string): Grade => fail(`bfcl:${m.code}`, `${where}: ${m.detail} (${label})`)
  if (spec.mode === 'parallel') {
    if (outputs.length !== expected.length)
      return fail(
        'bfcl:wrong_count',
        `${outputs.length} call(s) made, ${expected.length} expected (${label})`,
      )
    const taken = new Set<number>()
    for (const e of expected) {
      let last: Miss | null = null
      let hit = -1
      for (let j = 0; j < outputs.length; j++) {
        if (taken.has(j)) continue
        last = check(fns.get(e.tool), outputs[j] as Call, e)
        if (last === null) {
          hit = j
          break
        }
      }
      if (hit < 0) return failed(last ?? { code: 'no_match', detail: 'no call left' }, shown(e.tool))
      taken.add(hit)
    }
    return pass(`${expected.length} expected call(s) matched in any order (${label})`)
  }
  const want = expected.length === 1 ? 1 : expected.length
  if (outputs.length !== want)
    return fail('bfcl:wrong_count', `${outputs.length} call(s) made, ${want} expected (${label})`)
  const e = expected[0] as Expected
  const fn = spec.mode === 'simple' ? spec.functions[0] : fns.get(e.tool)
  const m = check(fn, outputs[0] as Call, e)
  return m ? failed(m, shown(e.tool)) : pass(`the call to ${shown(e.tool)} matches (${label})`)
}

/**
 * A traced call's arguments, from the JSON text the harness sent when the trace kept it (so `5.0`
 * stays a float, as BFCL's `json.loads` reads it); only the parameters the bridge passed on (it drops
 * a harness's injected ones) are kept. A trace without text gives the parsed arguments.
 */
function asCall(c: TracedCall): Call {
  const a = c.arguments
  const parsed = a && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : {}
  const fromText = c.arguments_text === undefined ? null : argumentsFromText(c.arguments_text)
  if (fromText === null) return { tool: c.tool, args: parsed }
  return {
    tool: c.tool,
    args: Object.fromEntries(Object.entries(fromText).filter(([k]) => Object.hasOwn(parsed, k))),
  }
}

const PY_TYPES: Record<string, PyType> = {
  string: 'str',
  integer: 'int',
  float: 'float',
  boolean: 'bool',
  array: 'list',
  tuple: 'list',
  dict: 'dict',
  any: 'str',
}
const NESTED_PY = new Set(['array', 'tuple'])
const NESTED_CONVERTED = new Set(['Array', 'ArrayList', 'array'])

/** BFCL's check of one call against one expected call; null when it holds. */
export function checkCall(
  fn: FunctionDecl,
  out: Call,
  exp: Expected,
  language: BfclSpec['language'],
  bfclSemantics: boolean,
): Miss | null {
  const std = bfclSemantics ? standardize : (s: string) => s
  if (out.tool !== fn.tool) return { code: 'wrong_func_name', detail: `called ${out.tool}` }
  for (const p of fn.required) {
    if (!Object.hasOwn(out.args, p)) return { code: 'missing_required', detail: `parameter ${p} missing` }
  }
  for (const [param, raw] of Object.entries(out.args)) {
    const declared = fn.types[param]
    if (declared === undefined || !Object.hasOwn(exp.params, param))
      return { code: 'unexpected_param', detail: `unexpected parameter ${param}` }
    const allowed = (exp.params[param] as unknown[]).map(fromJson)
    let value: PyValue
    let expectedType: PyType
    let nestedType: PyType | null = null
    if (language === 'python') {
      const t = PY_TYPES[declared]
      if (!t) throw new Unconvertible(`parameter ${param}: BFCL declares an unknown type ${declared}`)
      expectedType = t
      if (NESTED_PY.has(declared)) {
        const n = PY_TYPES[fn.items[param] ?? '']
        if (!n) throw new Unconvertible(`parameter ${param}: unknown item type`)
        nestedType = n
      }
      value = fromJson(raw)
      if (bfclSemantics && declared === 'float' && value.t === 'int') value = { t: 'float', v: value.v }
    } else {
      const table = language === 'java' ? JAVA_TYPES : JS_TYPES
      const convert = language === 'java' ? javaValue : jsValue
      const t = table[declared]
      if (!t) throw new Unconvertible(`parameter ${param}: unknown ${language} type ${declared}`)
      expectedType = t
      if (typeof raw !== 'string')
        return { code: 'type_error', detail: `parameter ${param} must be a ${language} literal in a string` }
      if (NESTED_CONVERTED.has(declared)) {
        const n = fn.items[param] ?? ''
        const nt = table[n]
        if (!nt) throw new Unconvertible(`parameter ${param}: unknown item type ${n}`)
        nestedType = nt
        value = convert(raw, declared, n)
      } else value = convert(raw, declared)
    }
    const tc = typeCheck(value, allowed, expectedType, nestedType)
    if (!tc.valid) return { code: 'type_error', detail: `parameter ${param} is not ${declared}` }
    let ok: boolean
    if (!tc.isVariable && expectedType === 'dict') ok = dictMatches(value, allowed, std)
    else if (!tc.isVariable && expectedType === 'list' && nestedType === 'dict')
      ok = listOfDictsMatches(value, allowed, std)
    else if (!tc.isVariable && expectedType === 'str')
      ok =
        value.t === 'str' &&
        allowed.some((a) => a.t === 'str' && std(a.v) === std((value as { v: string }).v))
    else if (!tc.isVariable && expectedType === 'list') ok = listMatches(value, allowed, std)
    else ok = pyIn(value, allowed)
    if (!ok) return { code: 'wrong_value', detail: `parameter ${param} has a value not among the allowed` }
  }
  for (const [param, allowed] of Object.entries(exp.params)) {
    if (!Object.hasOwn(out.args, param) && !allowed.some((a) => a === '' || isNullMark(a)))
      return { code: 'missing_optional', detail: `parameter ${param} missing` }
  }
  return null
}

/** The Python type of the first allowed value that is not "" (the omission marker). */
function answerType(allowed: PyValue[]): PyType | null {
  const a = allowed.find((x) => !(x.t === 'str' && x.v === ''))
  return a ? a.t : null
}

/**
 * BFCL's type check. A value of the declared type passes (list items are checked one level down);
 * a value of the ground truth's own type also passes and marks the parameter a "variable" (compared
 * as is, without the string, list or dict rules).
 */
function typeCheck(
  value: PyValue,
  allowed: PyValue[],
  expected: PyType,
  nested: PyType | null,
): { valid: boolean; isVariable: boolean } {
  const aType = answerType(allowed)
  const isVariable = aType !== null && aType !== expected
  if (value.t === expected) {
    if (nested === null) return { valid: true, isVariable }
    for (const a of allowed) {
      let flag = true
      if (a.t === 'list') {
        for (const item of pyItems(value)) {
          if (!typeCheck(item, a.v, nested, null).valid) {
            flag = false
            break
          }
        }
      }
      if (flag) return { valid: true, isVariable }
    }
    return { valid: false, isVariable }
  }
  if (aType !== null && value.t === aType) return { valid: true, isVariable: true }
  return { valid: false, isVariable }
}

const stdItem = (v: PyValue, std: (s: string) => string): PyValue =>
  v.t === 'str' ? { t: 'str', v: std(v.v) } : v

function listMatches(value: PyValue, allowed: PyValue[], std: (s: string) => string): boolean {
  const out: PyValue = { t: 'list', v: pyItems(value).map((x) => stdItem(x, std)) }
  return allowed.some((a) => pyIn(out, [{ t: 'list', v: pyItems(a).map((x) => stdItem(x, std)) }]))
}

function dictMatches(value: PyValue, allowed: PyValue[], std: (s: string) => string): boolean {
  if (value.t !== 'dict') return false
  for (const a of allowed) {
    if (a.t === 'str' && a.v === '') continue
    if (a.t !== 'dict') continue
    let flag = true
    for (const [k, v] of Object.entries(value.v)) {
      const opts = a.v[k]
      if (!opts) {
        flag = false
        break
      }
      if (
        !pyIn(
          stdItem(v, std),
          pyItems(opts).map((o) => stdItem(o, std)),
        )
      ) {
        flag = false
        break
      }
    }
    if (flag) {
      for (const [k, opts] of Object.entries(a.v)) {
        if (!Object.hasOwn(value.v, k) && !pyIn({ t: 'str', v: '' }, pyItems(opts))) {
          flag = false
          break
        }
      }
    }
    if (flag) return true
  }
  return false
}

function listOfDictsMatches(value: PyValue, allowed: PyValue[], std: (s: string) => string): boolean {
  const items = pyItems(value)
  for (const a of allowed) {
    if (pyLen(a) !== items.length) continue
    const dicts = pyItems(a)
    if (items.every((d, i) => dictMatches(d, [dicts[i] as PyValue], std))) return true
  }
  return false
}
