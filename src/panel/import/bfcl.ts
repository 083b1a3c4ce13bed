import { stringify as tomlStringify } from 'smol-toml'
import { z } from 'zod'
import { HwError } from '../../util/errors.js'
import { quotePath } from '../../util/paths.js'

/**
 * BFCL (Berkeley Function-Calling Leaderboard) rows to bridge task folders. Formats as documented in
 * design/rig.md §4: a question file is JSON Lines of `{id, question: [[{role, content}]], function:
 * [{name, description, parameters}]}`; a possible_answer file is JSON Lines of `{id, ground_truth:
 * [{"<func>": {"<param>": [allowed…]}}]}` where `""` means "may be omitted". Pure: text in, files out.
 */

const Question = z.looseObject({
  id: z.string().min(1),
  question: z.array(z.array(z.looseObject({ role: z.string(), content: z.string() }))),
  function: z.array(
    z.looseObject({
      name: z.string().min(1),
      description: z.string().default(''),
      parameters: z.record(z.string(), z.unknown()),
    }),
  ),
})
const Answer = z.looseObject({
  id: z.string().min(1),
  ground_truth: z.array(z.record(z.string(), z.record(z.string(), z.array(z.unknown())))),
})

/** One task folder as relative path → text. */
export interface ImportedTask {
  id: string
  files: Record<string, string>
}

export interface ImportResult {
  tasks: ImportedTask[]
  /** Rows not converted, each with its reason (never dropped silently). */
  skipped: { id: string; reason: string }[]
}

/** Parse JSON Lines; a bad line is an HwError naming file and line. */
export function parseJsonLines<T>(text: string, file: string, schema: z.ZodType<T>): T[] {
  const out: T[] = []
  const problems: string[] = []
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    let v: unknown
    try {
      v = JSON.parse(line)
    } catch (e) {
      problems.push(`${quotePath(`${file}:${i + 1}`)} not valid JSON: ${(e as Error).message}`)
      return
    }
    const r = schema.safeParse(v)
    if (!r.success) {
      const is = r.error.issues[0]
      problems.push(`${quotePath(`${file}:${i + 1}`)} ${is?.path.join('.') || '(row)'}: ${is?.message}`)
      return
    }
    out.push(r.data)
  })
  if (problems.length > 0) {
    throw new HwError('bfcl_invalid', `${quotePath(file)}: ${problems.length} bad line(s)`, {
      details: problems,
      help: 'BFCL data files are JSON Lines despite the .json suffix: one object per line',
    })
  }
  return out
}

/** BFCL function name → bridge tool name (dots and other characters become "_"). */
export function toolName(name: string): string {
  const n = name.replace(/[^A-Za-z0-9_]/g, '_')
  return /^[A-Za-z]/.test(n) ? n.slice(0, 64) : `f_${n}`.slice(0, 64)
}

/** BFCL pseudo-types to JSON Schema (dict→object, float→number, tuple→array, any and others→string). */
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
  const mapped =
    t === 'dict' || t === 'object'
      ? 'object'
      : t === 'float' || t === 'number'
        ? 'number'
        : t === 'tuple' || t === 'array'
          ? 'array'
          : t === 'integer'
            ? 'integer'
            : t === 'boolean'
              ? 'boolean'
              : t === undefined
                ? undefined
                : 'string'
  if (mapped) out.type = mapped
  if (t === 'float' && typeof out.description === 'string')
    out.description = `${out.description} This is a float type value.`
  return out
}

/** A concrete reference value from an allowed-values list: the first that is not "" (omitted). */
function pick(allowed: unknown[]): { value: unknown } | null {
  const v = allowed.find((a) => a !== '')
  if (v === undefined) return null
  return { value: concrete(v) }
}
function concrete(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(concrete)
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, opts] of Object.entries(v)) {
      if (Array.isArray(opts)) {
        const p = pick(opts)
        if (p) out[k] = p.value
      } else out[k] = opts
    }
    return out
  }
  return v
}

function taskId(id: string): string {
  return (
    id
      .replace(/[^A-Za-z0-9._+@=-]/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 200) || 'task'
  )
}

/** Convert matched question and answer rows into bridge tasks. */
export function bfclToTasks(
  questions: z.output<typeof Question>[],
  answers: z.output<typeof Answer>[],
  category: string,
): ImportResult {
  const byId = new Map(answers.map((a) => [a.id, a]))
  const tasks: ImportedTask[] = []
  const skipped: ImportResult['skipped'] = []
  const seen = new Set<string>()
  for (const q of questions) {
    const a = byId.get(q.id)
    if (!a) {
      skipped.push({ id: q.id, reason: 'no ground truth in the answers file' })
      continue
    }
    if (q.question.length !== 1) {
      skipped.push({ id: q.id, reason: `${q.question.length} turns: only single-turn rows are imported` })
      continue
    }
    if (a.ground_truth.length === 0) {
      skipped.push({ id: q.id, reason: 'no expected call (irrelevance rows are not imported)' })
      continue
    }
    const names = new Map(q.function.map((f) => [f.name, toolName(f.name)]))
    if (new Set(names.values()).size !== names.size) {
      skipped.push({ id: q.id, reason: 'two functions map to the same tool name' })
      continue
    }
    const unknown = a.ground_truth.flatMap((c) => Object.keys(c)).find((n) => !names.has(n))
    if (unknown) {
      skipped.push({ id: q.id, reason: `ground truth calls "${unknown}", which the row does not declare` })
      continue
    }
    const id = taskId(q.id)
    if (seen.has(id)) {
      skipped.push({ id: q.id, reason: `duplicate task id ${id}` })
      continue
    }
    seen.add(id)
    const tools = q.function.map((f) => {
      const params = convertSchema(f.parameters) as Record<string, unknown>
      params.type = 'object'
      return {
        name: names.get(f.name) as string,
        description: f.description || f.name,
        parameters: params,
        effect: { op: 'return', path: 'results.ok' },
      }
    })
    const env = { version: 1, world: { results: { ok: 'done' } }, tools }
    const expected = a.ground_truth.map((c) => {
      const [fn, params] = Object.entries(c)[0] as [string, Record<string, unknown[]>]
      return { [names.get(fn) as string]: params }
    })
    const reference = a.ground_truth.map((c) => {
      const [fn, params] = Object.entries(c)[0] as [string, Record<string, unknown[]>]
      const args: Record<string, unknown> = {}
      for (const [p, allowed] of Object.entries(params)) {
        const v = pick(allowed)
        if (v) args[p] = v.value
      }
      return { tool: names.get(fn) as string, arguments: args }
    })
    const prompt = (q.question[0] ?? [])
      .filter((m) => m.role !== 'assistant')
      .map((m) => m.content)
      .join('\n\n')
    const toml = tomlStringify({
      version: '1.0',
      metadata: { difficulty: 'easy', language: 'none', category: 'tool-use', tags: ['bfcl', category] },
      hw: { kind: 'bridge', graders: [{ name: 'tool_calls', calls: expected, order: 'any' }] },
    })
    tasks.push({
      id,
      files: {
        'instruction.md': `${prompt.trim()}\n`,
        'task.toml': `# Imported from BFCL row ${JSON.stringify(q.id)}.\n${toml}\n`,
        'environment/bridge.json': `${JSON.stringify(env, null, 2)}\n`,
        'solution/calls.json': `${JSON.stringify(reference, null, 2)}\n`,
      },
    })
  }
  return { tasks, skipped }
}

export const BfclQuestion = Question
export const BfclAnswer = Answer
