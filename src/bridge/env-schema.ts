import { readFile } from 'node:fs/promises'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { isMap, isSeq, LineCounter, type Node, parseDocument } from 'yaml'
import { z } from 'zod'
import { fieldPath } from '../manifest/load.js'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import { parsePath, placeholders } from './paths.js'

/** A JSON Schema object as a tool's `parameters` (checked to compile at load). */
const JsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === 'object', { message: 'parameters must be a JSON Schema with "type": "object"' })

/**
 * An effect on the world (a JSON store). `path` is dotted (`orders.{order_id}.status`); a `{name}`
 * segment is replaced by the argument `name`. `value` (set, append) may hold `"{name}"` strings: a
 * whole-string placeholder takes the argument's value with its type, an embedded one is interpolated.
 * `result` (set, append) is what the caller gets back, with the same substitution; by default the
 * value written.
 */
export const EffectSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('return'), path: z.string().min(1) }),
  z.strictObject({
    op: z.literal('set'),
    path: z.string().min(1),
    value: z.unknown(),
    result: z.unknown().optional(),
  }),
  z.strictObject({
    op: z.literal('append'),
    path: z.string().min(1),
    value: z.unknown(),
    result: z.unknown().optional(),
  }),
])
export type Effect = z.output<typeof EffectSchema>

const ToolName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'a tool name is a letter then letters, digits or _ (at most 64)')

const EffectTool = z.strictObject({
  name: ToolName,
  description: z.string().min(1),
  parameters: JsonSchemaObject,
  effect: EffectSchema,
})
export const BUILTINS = ['bash', 'read_file', 'write_file'] as const
export type BuiltinName = (typeof BUILTINS)[number]
const BuiltinTool = z.strictObject({
  name: ToolName,
  description: z.string().min(1).optional(),
  builtin: z.enum(BUILTINS),
  /** bash only: seconds before the command's process group is killed. */
  timeout_s: z.number().positive().max(600).default(30),
})

export const ToolDeclSchema = z.union([EffectTool, BuiltinTool])
export type ToolDecl = z.output<typeof ToolDeclSchema>
export type EffectToolDecl = z.output<typeof EffectTool>
export type BuiltinToolDecl = z.output<typeof BuiltinTool>

/** environment/bridge.json: the initial world and the tools served over it. */
export const EnvironmentSchema = z.strictObject({
  version: z.literal(1),
  world: z.record(z.string(), z.unknown()).default({}),
  tools: z.array(ToolDeclSchema).min(1),
})
export type Environment = z.output<typeof EnvironmentSchema>

export function isBuiltin(t: ToolDecl): t is BuiltinToolDecl {
  return 'builtin' in t
}

interface Problem {
  path: (string | number)[]
  message: string
}

/**
 * Read and validate an environment file. Throws HwError `bridge_env_invalid` with one detail per
 * problem as `<file>:<line>:<col> <field>: <message>` (unknown effect, tool without a schema, duplicate
 * tool name, path outside the store, placeholder naming no parameter, a schema that does not compile).
 */
export async function loadEnvironment(file: string): Promise<Environment> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('bridge_env_missing', `${quotePath(file)}: cannot read the environment file`, {
      details: [(e as Error).message],
    })
  }
  return parseEnvironment(text, file)
}

/** Validate environment text; `file` is only used in messages. */
export function parseEnvironment(text: string, file: string): Environment {
  const lc = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: true })
  if (doc.errors.length > 0) {
    const details = doc.errors.map((e) => {
      const pos = e.linePos?.[0]
      return `${quotePath(pos ? `${file}:${pos.line}:${pos.col}` : file)} ${e.message.split('\n')[0]}`
    })
    throw new HwError('bridge_env_invalid', `${quotePath(file)}: not valid JSON`, { details })
  }
  const at = (p: readonly PropertyKey[]): string => {
    const off = nodeAt(doc.contents, p)
    const pos = lc.linePos(off)
    return quotePath(`${file}:${pos.line}:${pos.col}`)
  }
  const fail = (problems: Problem[]): never => {
    throw new HwError(
      'bridge_env_invalid',
      `${quotePath(file)}: ${problems.length} problem(s) in the environment`,
      {
        details: problems.map((p) => `${at(p.path)} ${fieldPath(p.path)}: ${p.message}`),
        help: 'see docs/bridge.md for the environment file format',
      },
    )
  }
  const raw = doc.toJS() as unknown
  const parsed = EnvironmentSchema.safeParse(raw)
  if (!parsed.success) {
    fail(parsed.error.issues.map((i) => ({ path: i.path as (string | number)[], message: describe(i, raw) })))
  }
  const env = (parsed as { data: Environment }).data
  const problems = semanticProblems(env)
  if (problems.length > 0) fail(problems)
  return env
}

/** Problems zod cannot see: duplicates, paths outside the store, placeholders, uncompilable schemas. */
export function semanticProblems(env: Environment): Problem[] {
  const out: Problem[] = []
  const seen = new Map<string, number>()
  const ajv = new AjvJsonSchemaValidator()
  env.tools.forEach((t, i) => {
    const first = seen.get(t.name)
    if (first !== undefined) {
      out.push({
        path: ['tools', i, 'name'],
        message: `duplicate tool name "${t.name}" (first at tools[${first}])`,
      })
    } else seen.set(t.name, i)
    if (isBuiltin(t)) return
    try {
      ajv.getValidator(t.parameters as never)
    } catch (e) {
      out.push({
        path: ['tools', i, 'parameters'],
        message: `not a valid JSON Schema: ${(e as Error).message}`,
      })
    }
    const declared = new Set(
      Object.keys((t.parameters.properties as Record<string, unknown> | undefined) ?? {}),
    )
    const segs = parsePath(t.effect.path)
    if (typeof segs === 'string') {
      out.push({ path: ['tools', i, 'effect', 'path'], message: segs })
    } else {
      const root = segs[0]
      if (root?.kind === 'arg' || (root && !Object.hasOwn(env.world, root.name))) {
        out.push({
          path: ['tools', i, 'effect', 'path'],
          message: `"${t.effect.path}" is outside the store: its first segment must be a top-level key of "world" (${Object.keys(env.world).join(', ') || 'none'})`,
        })
      }
      for (const s of segs) {
        if (s.kind === 'arg' && !declared.has(s.name)) {
          out.push({
            path: ['tools', i, 'effect', 'path'],
            message: `placeholder {${s.name}} names no parameter`,
          })
        }
      }
    }
    if (t.effect.op !== 'return') {
      for (const field of ['value', 'result'] as const) {
        for (const name of placeholders(t.effect[field])) {
          if (!declared.has(name)) {
            out.push({
              path: ['tools', i, 'effect', field],
              message: `placeholder {${name}} names no parameter`,
            })
          }
        }
      }
    }
  })
  return out
}

function describe(issue: z.core.$ZodIssue, raw: unknown): string {
  const p = issue.path
  const last = p[p.length - 1]
  if (issue.code === 'invalid_union' && p[0] === 'tools' && p.length === 2) {
    const t = (raw as { tools: Record<string, unknown>[] }).tools[p[1] as number] ?? {}
    if (typeof t !== 'object' || t === null) return 'a tool is an object'
    if (!('builtin' in t) && !('parameters' in t))
      return 'tool has no "parameters" JSON Schema (or "builtin")'
    if (!('builtin' in t) && !('effect' in t)) return 'tool has neither "effect" nor "builtin"'
    const effect = (t as { effect?: { op?: unknown } }).effect
    if (effect && !['return', 'set', 'append'].includes(String(effect.op))) {
      return `unknown effect "${String(effect.op)}": expected return, set or append`
    }
    const sub = (issue as { errors?: z.core.$ZodIssue[][] }).errors ?? []
    const best = sub.map((e) => e[0]).find((e) => e !== undefined)
    return best ? `${fieldPath(best.path)}: ${best.message}` : issue.message
  }
  if (issue.code === 'invalid_union' && last === 'effect')
    return 'unknown effect: "op" must be return, set or append'
  return issue.message
}

/** Offset of the node at `p` (a mapping's key for a field), or of its nearest existing ancestor. */
function nodeAt(root: unknown, p: readonly PropertyKey[]): number {
  let node = root as Node | null
  let off = node?.range?.[0] ?? 0
  for (const k of p) {
    if (isMap(node)) {
      const item = node.items.find(
        (it) => String((it.key as { value?: unknown } | null)?.value) === String(k),
      )
      if (!item) return off
      off = (item.key as Node).range?.[0] ?? off
      node = item.value as Node | null
    } else if (isSeq(node) && typeof k === 'number') {
      const item = node.items[k] as Node | undefined
      if (!item) return off
      off = item.range?.[0] ?? off
      node = item
    } else return off
  }
  return off
}
