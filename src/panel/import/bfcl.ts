import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { stringify as tomlStringify } from 'smol-toml'
import { z } from 'zod'
import { type BfclSpec, checkCall } from '../../grade/bfcl.js'
import { isNullMark, NULL_MARK } from '../../grade/bfcl-values.js'
import { quotePath } from '../../util/paths.js'
import { literalCandidates } from './bfcl-literals.js'

/**
 * BFCL v4 (Berkeley Function-Calling Leaderboard) rows to bridge task folders. A question file is JSON
 * Lines of `{id, question: [[{role, content}]], function: [{name, description, parameters}]}`; its
 * possible_answer file is JSON Lines of `{id, ground_truth: [{"<func>": {"<param>": [allowed…]}}]}`
 * (`""` = may be omitted). The grader is `bfcl`, in the mode BFCL's checker picks for the category.
 * A row that cannot be expressed is skipped alone, with its reason. Pure: rows in, files out.
 */

const Question = z.looseObject({
  id: z.string().min(1),
  question: z.array(z.array(z.looseObject({ role: z.string(), content: z.string() }))),
  function: z
    .array(
      z.looseObject({
        name: z.string().min(1),
        description: z.string().default(''),
        parameters: z.record(z.string(), z.unknown()),
      }),
    )
    .default([]),
})
const Answer = z.looseObject({ id: z.string().min(1), ground_truth: z.unknown() })
const AstTruth = z.array(
  z
    .record(z.string(), z.record(z.string(), z.array(z.unknown())))
    .refine((c) => Object.keys(c).length === 1, 'one function per expected call'),
)
export type BfclQuestion = z.output<typeof Question>
export type BfclAnswer = z.output<typeof Answer>

/** One task folder as relative path → text. */
export interface ImportedTask {
  id: string
  files: Record<string, string>
}

export interface Skipped {
  id: string
  reason: string
  /** The line is not a JSON object at all (not JSON, or a bare value): another kind of file. */
  notObject?: true
}

export interface ImportResult {
  tasks: ImportedTask[]
  /** Rows not converted, each with its reason (never dropped silently). */
  skipped: Skipped[]
}

/** One parsed line of a JSON Lines file, or where and why it could not be read. */
export type Line<T> = { ok: true; row: T; line: number } | ({ ok: false } & Skipped)

/** Parse JSON Lines row by row; a bad line is reported with file and line, never fatal. */
export function parseJsonLines<T>(text: string, file: string, schema: z.ZodType<T>): Line<T>[] {
  const out: Line<T>[] = []
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    const where = quotePath(`${file}:${i + 1}`)
    let v: unknown
    try {
      v = JSON.parse(line)
    } catch (e) {
      out.push({
        ok: false,
        id: `line ${i + 1}`,
        reason: `${where} not valid JSON: ${(e as Error).message}`,
        notObject: true,
      })
      return
    }
    const r = schema.safeParse(v)
    if (!r.success) {
      const is = r.error.issues[0]
      const id =
        v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string'
          ? (v as { id: string }).id
          : `line ${i + 1}`
      const notObject = v === null || typeof v !== 'object' || Array.isArray(v)
      out.push({
        ok: false,
        id,
        reason: `${where} ${is?.path.join('.') || '(row)'}: ${is?.message}`,
        ...(notObject ? { notObject } : {}),
      })
      return
    }
    out.push({ ok: true, row: r.data, line: i + 1 })
  })
  return out
}

export const BfclQuestionRow = Question
export const BfclAnswerRow = Answer

/** BFCL function name → bridge tool name (dots and other characters become "_", as BFCL does for FC models). */
export function toolName(name: string): string {
  const n = name.replace(/[^A-Za-z0-9_]/g, '_')
  return /^[A-Za-z]/.test(n) ? n.slice(0, 64) : `f_${n}`.slice(0, 64)
}

/** How BFCL grades a category's rows. */
export type CategoryKind =
  | { kind: 'ast'; mode: 'simple' | 'multiple' | 'parallel'; language: BfclSpec['language'] }
  | { kind: 'irrelevance' }
  | { kind: 'relevance' }
  | { kind: 'unsupported'; reason: string }

export function categoryKind(category: string): CategoryKind {
  if (category.startsWith('multi_turn'))
    return {
      kind: 'unsupported',
      reason: "multi-turn: graded against BFCL's stateful Python backends, which are not bridged",
    }
  if (category.startsWith('memory'))
    return {
      kind: 'unsupported',
      reason: "memory: needs BFCL's memory backend primed with its prerequisite conversations",
    }
  if (category.startsWith('web_search'))
    return { kind: 'unsupported', reason: "web search: needs BFCL's live web-search backend (the network)" }
  if (category.includes('irrelevance')) return { kind: 'irrelevance' }
  if (category.includes('relevance')) return { kind: 'relevance' }
  const language = category.includes('javascript')
    ? 'javascript'
    : category.includes('java')
      ? 'java'
      : 'python'
  const mode = category.includes('parallel')
    ? 'parallel'
    : category.includes('multiple')
      ? 'multiple'
      : 'simple'
  return { kind: 'ast', mode, language }
}

const OPENAPI: Record<string, string> = {
  integer: 'integer',
  number: 'number',
  float: 'number',
  string: 'string',
  boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  dict: 'object',
  object: 'object',
  tuple: 'array',
  any: 'string',
  byte: 'integer',
  short: 'integer',
  long: 'integer',
  double: 'number',
  char: 'string',
  ArrayList: 'array',
  Array: 'array',
  HashMap: 'object',
  Hashtable: 'object',
  Queue: 'array',
  Stack: 'array',
  Any: 'string',
  String: 'string',
  Bigint: 'integer',
}

/** BFCL pseudo-types to JSON Schema types (BFCL's own mapping for function-calling models). */
export function convertSchema(s: unknown): unknown {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return s
  const src = s as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(src)) {
    if (k === 'type') continue
    if (k === 'properties' && v && typeof v === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([p, ps]) => [p, convertSchema(ps)]),
      )
    } else if (k === 'items') out.items = convertSchema(v)
    else if (k === 'optional' || k === 'default') continue
    else out[k] = v
  }
  const t = src.type
  if (typeof t === 'string') out.type = OPENAPI[t] ?? 'string'
  if (t === 'float' && typeof out.description === 'string')
    out.description = `${out.description} This is a float type value.`
  return out
}

/**
 * The function as BFCL shows it to a model for the category: a language hint in the description and,
 * for Java and JavaScript, every parameter a string holding a source literal.
 */
function presented(f: BfclQuestion['function'][number], language: BfclSpec['language']) {
  const params = structuredClone(f.parameters) as Record<string, unknown>
  const props = (params.properties ?? {}) as Record<string, Record<string, unknown>>
  const lang = language === 'java' ? 'Java' : 'JavaScript'
  if (language !== 'python') {
    for (const p of Object.values(props)) {
      const t = String(p.type)
      const d = typeof p.description === 'string' ? p.description : ''
      let desc =
        t === 'any'
          ? `${d} This parameter can be of any type of ${lang} object in string representation.`
          : `${d} This is ${lang} ${t} type parameter in string representation.`
      const items = p.items as { type?: string } | undefined
      if (t === 'ArrayList' || t === 'Array' || (language === 'javascript' && t === 'array')) {
        desc += ` The list elements are of type ${items?.type}; they are not in string representation.`
        delete p.items
      }
      if (language === 'javascript' && t === 'dict' && p.properties) {
        desc += ` The dictionary entries have the following schema; they are not in string representation. ${JSON.stringify(p.properties)}`
        delete p.properties
      }
      p.description = desc
      p.type = 'string'
    }
  }
  const hint =
    language === 'java'
      ? ' Note that the provided function is in Java 8 SDK syntax.'
      : language === 'javascript'
        ? ' Note that the provided function is in JavaScript syntax.'
        : ' Note that the provided function is in Python 3 syntax.'
  const schema = convertSchema(params) as Record<string, unknown>
  schema.type = 'object'
  return { description: `${f.description || f.name}${hint}`, parameters: schema }
}

function taskId(id: string): string {
  return (
    id
      .replace(/[^A-Za-z0-9._+@=-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 200) || 'task'
  )
}

/** JSON null → the TOML null mark, recursively (TOML has no null). */
function markNulls(v: unknown): unknown {
  if (v === null) return { ...NULL_MARK }
  if (Array.isArray(v)) return v.map(markNulls)
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, markNulls(x)]))
  return v
}

const ajv = new AjvJsonSchemaValidator()

const CATEGORIES = [
  'simple_python',
  'simple_java',
  'simple_javascript',
  'parallel_multiple',
  'multiple',
  'parallel',
  'live_simple',
  'live_multiple',
  'live_parallel_multiple',
  'live_parallel',
  'live_irrelevance',
  'live_relevance',
  'irrelevance',
  'multi_turn_base',
  'multi_turn_miss_func',
  'multi_turn_miss_param',
  'multi_turn_long_context',
  'memory',
  'web_search',
]

/** A row's category from its id, as BFCL reads it (`live_multiple_3-1-0` → live_multiple); else the file's. */
export function rowCategory(id: string, fileCategory: string): string {
  const hits = CATEGORIES.filter((c) => id.startsWith(`${c}_`))
  return hits.sort((a, b) => b.length - a.length)[0] ?? fileCategory
}

/** Convert the rows of one category file (questions with their answers) into bridge tasks. */
export function bfclToTasks(
  questions: BfclQuestion[],
  answers: Map<string, BfclAnswer> | null,
  category: string,
): ImportResult {
  const tasks: ImportedTask[] = []
  const skipped: Skipped[] = []
  const seen = new Set<string>()
  for (const q of questions) {
    const cat = rowCategory(q.id, category)
    const kind = categoryKind(cat)
    if (kind.kind === 'unsupported') {
      skipped.push({ id: q.id, reason: kind.reason })
      continue
    }
    const r = convertRow(q, answers, cat, kind)
    if (typeof r === 'string') {
      skipped.push({ id: q.id, reason: r })
      continue
    }
    if (seen.has(r.id)) {
      skipped.push({ id: q.id, reason: `duplicate task id ${r.id}` })
      continue
    }
    seen.add(r.id)
    tasks.push(r)
  }
  return { tasks, skipped }
}

function convertRow(
  q: BfclQuestion,
  answers: Map<string, BfclAnswer> | null,
  category: string,
  kind: Exclude<CategoryKind, { kind: 'unsupported' }>,
): ImportedTask | string {
  if (q.question.length !== 1) return `${q.question.length} turns: only single-turn rows are imported`
  if (q.function.length === 0)
    return 'the row offers no function (a bridge environment needs at least one tool)'
  const language = kind.kind === 'ast' ? kind.language : 'python'
  const names = new Map(q.function.map((f) => [f.name, toolName(f.name)]))
  if (new Set(names.values()).size !== names.size) return 'two functions map to the same tool name'
  const tools = q.function.map((f) => ({
    name: names.get(f.name) as string,
    ...presented(f, language),
    effect: { op: 'return', path: 'results.ok' },
  }))
  for (const t of tools) {
    try {
      ajv.getValidator(t.parameters as never)
    } catch (e) {
      return `function ${t.name}: its parameters are not a valid JSON Schema (${(e as Error).message})`
    }
  }
  const functions = q.function.map((f) => {
    const props = (f.parameters.properties ?? {}) as Record<
      string,
      { type?: unknown; items?: { type?: unknown } }
    >
    return {
      tool: names.get(f.name) as string,
      name: f.name,
      required: Array.isArray(f.parameters.required) ? (f.parameters.required as string[]) : [],
      types: Object.fromEntries(Object.entries(props).map(([p, d]) => [p, String(d?.type)])),
      items: Object.fromEntries(
        Object.entries(props)
          .filter(([, d]) => d?.items?.type !== undefined)
          .map(([p, d]) => [p, String(d.items?.type)]),
      ),
    }
  })
  let grader: Record<string, unknown>
  let reference: { tool: string; arguments: Record<string, unknown> }[]
  let answer: string | null = null
  if (kind.kind === 'irrelevance') {
    grader = { name: 'bfcl', mode: 'irrelevance', functions }
    reference = []
    answer = 'None of the offered functions fits this request.'
  } else if (kind.kind === 'relevance') {
    grader = { name: 'bfcl', mode: 'relevance', functions }
    const call = exampleCall(tools[0] as (typeof tools)[number])
    if (typeof call === 'string') return call
    reference = [call]
  } else {
    const a = answers?.get(q.id)
    if (!a) return 'no ground truth in the answers file'
    const truth = AstTruth.safeParse(a.ground_truth)
    if (!truth.success)
      return `ground_truth: ${truth.error.issues[0]?.message ?? 'not BFCL AST ground truth'}`
    if (truth.data.length === 0) return 'no expected call'
    const expected = truth.data.map((c) => {
      const [fn, params] = Object.entries(c)[0] as [string, Record<string, unknown[]>]
      return { fn, params }
    })
    const unknown = expected.find((e) => !names.has(e.fn))
    if (unknown) return `ground truth calls "${unknown.fn}", which the row does not declare`
    const calls = expected.map((e) => ({
      [names.get(e.fn) as string]: markNulls(e.params) as Record<string, unknown[]>,
    }))
    grader = { name: 'bfcl', mode: kind.mode, language, functions, calls }
    reference = []
    for (const [i, e] of expected.entries()) {
      const tool = names.get(e.fn) as string
      const fn = functions.find((f) => f.tool === tool) as (typeof functions)[number]
      const schema = tools.find((t) => t.name === tool)?.parameters as Record<string, unknown>
      const args = referenceArguments(fn, schema, calls[i]?.[tool] as Record<string, unknown[]>, language)
      if (typeof args === 'string') return `ground truth call ${i + 1} (${e.fn}): ${args}`
      reference.push({ tool, arguments: args })
    }
  }
  // BFCL's checker judges the arguments and never validated them against the schema: neither does the bridge.
  const env = { version: 1, world: { results: { ok: 'done' } }, tools, validate_arguments: false }
  const prompt = (q.question[0] ?? [])
    .filter((m) => m.role !== 'assistant')
    .map((m) => m.content)
    .join('\n\n')
  const toml = tomlStringify({
    version: '1.0',
    metadata: {
      difficulty: 'easy',
      language: 'none',
      category: 'tool-use',
      tags: ['bfcl', category],
    },
    hw: { kind: 'bridge', graders: [grader] },
  })
  const files: Record<string, string> = {
    'instruction.md': `${prompt.trim()}\n`,
    'task.toml': `# Imported from BFCL row ${JSON.stringify(q.id)}; graded as BFCL's checker grades it.\n${toml}\n`,
    'environment/bridge.json': `${JSON.stringify(env, null, 2)}\n`,
    'solution/calls.json': `${JSON.stringify(reference, null, 2)}\n`,
  }
  if (answer !== null) files['solution/answer.md'] = `${answer}\n`
  return { id: taskId(q.id), files }
}

/**
 * The reference arguments of one expected call: per parameter, the first allowed value (as a source
 * literal for Java and JavaScript) that both the bridge's schema and BFCL's check accept; omitted
 * when none is needed. A string says why no such value exists.
 */
function referenceArguments(
  fn: Parameters<typeof checkCall>[0],
  schema: Record<string, unknown>,
  params: Record<string, unknown[]>,
  language: BfclSpec['language'],
): Record<string, unknown> | string {
  const props = (schema.properties ?? {}) as Record<string, unknown>
  const args: Record<string, unknown> = {}
  for (const [p, allowed] of Object.entries(params)) {
    const mayOmit = allowed.some((a) => a === '' || isNullMark(a)) && !fn.required.includes(p)
    const propSchema = props[p]
    const validate = propSchema
      ? ajv.getValidator({ type: 'object', properties: { [p]: propSchema } } as never)
      : null
    let chosen: { v: unknown } | null = null
    let unchecked: { v: unknown } | null = null
    for (const a of allowed) {
      if (a === '' || isNullMark(a)) continue
      const cands =
        language === 'python'
          ? [concrete(a)]
          : literalCandidates(a, fn.types[p] ?? 'any', fn.items[p], language)
      for (const cand of cands) {
        const miss = checkCall(
          { ...fn, required: [] },
          { tool: fn.tool, args: { [p]: cand } },
          {
            tool: fn.tool,
            params: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, k === p ? v : ['']])),
          },
          language,
          true,
        )
        if (miss !== null) continue
        if (!validate || validate({ [p]: cand }).valid) {
          chosen = { v: cand }
          break
        }
        unchecked ??= { v: cand }
      }
      if (chosen) break
    }
    // A ground truth that contradicts its own schema (an enum or a type) still grades as BFCL grades it.
    chosen ??= mayOmit ? null : unchecked
    if (chosen) args[p] = chosen.v
    else if (!mayOmit) return `no allowed value of ${p} passes BFCL's check`
  }
  return args
}

/** A concrete value from an allowed one: an object of lists takes each key's first value (or omits it). */
function concrete(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(concrete)
  if (isNullMark(v)) return null
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, opts] of Object.entries(v)) {
      if (Array.isArray(opts)) {
        const first = opts.find((o) => o !== '')
        if (first !== undefined) out[k] = concrete(first)
      } else out[k] = opts
    }
    return out
  }
  return v
}

/** A call that satisfies a tool's schema (for live_relevance, where BFCL keeps no ground truth). */
function exampleCall(tool: { name: string; parameters: Record<string, unknown> }):
  | {
      tool: string
      arguments: Record<string, unknown>
    }
  | string {
  const props = (tool.parameters.properties ?? {}) as Record<string, Record<string, unknown>>
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : []
  const args: Record<string, unknown> = {}
  for (const p of required) {
    const s = props[p]
    if (!s) return `required parameter ${p} is not declared`
    args[p] = example(s)
  }
  const v = ajv.getValidator(tool.parameters as never)(args)
  return v.valid ? { tool: tool.name, arguments: args } : `no example call satisfies ${tool.name}'s schema`
}

function example(s: Record<string, unknown>): unknown {
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if (s.default !== undefined) return s.default
  switch (s.type) {
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Record<string, unknown>>
      const req = Array.isArray(s.required) ? (s.required as string[]) : []
      return Object.fromEntries(
        req.filter((k) => props[k]).map((k) => [k, example(props[k] as Record<string, unknown>)]),
      )
    }
    default:
      return 'example'
  }
}
