import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../../util/errors.js'
import { quotePath } from '../../util/paths.js'
import {
  type BfclAnswer,
  BfclAnswerRow,
  BfclQuestionRow,
  bfclToTasks,
  categoryKind,
  type ImportedTask,
  parseJsonLines,
  rowCategory,
  type Skipped,
} from './bfcl.js'

export interface FileImport {
  file: string
  category: string
  imported: number
  skipped: Skipped[]
}

export interface BfclImport {
  tasks: ImportedTask[]
  skipped: Skipped[]
  files: FileImport[]
}

/**
 * `panel import bfcl`: a BFCL question file and its possible_answer file (default: the file of the same
 * name in a sibling `possible_answer/` folder), or a BFCL data folder (every `BFCL_v<n>_*.json` in it),
 * written as one bridge task folder per convertible row under `out`. Every other row is listed as
 * skipped with its reason. Refuses to overwrite an existing task folder.
 */
export async function importBfcl(source: string, out: string, answersFile?: string): Promise<BfclImport> {
  const info = await stat(source).catch(() => null)
  if (!info) throw new HwError('bfcl_missing', `${quotePath(source)}: no such file or folder`)
  let files: string[]
  if (info.isDirectory()) {
    if (answersFile) throw new HwError('usage', '--answers goes with one question file, not a folder')
    files = (await readdir(source))
      .filter((f) => /^BFCL_v\d+_.+\.jsonl?$/.test(f))
      .sort()
      .map((f) => path.join(source, f))
    if (files.length === 0)
      throw new HwError(
        'bfcl_missing',
        `${quotePath(source)}: no BFCL_v<n>_<category>.json file in this folder`,
      )
  } else files = [source]
  const result: BfclImport = { tasks: [], skipped: [], files: [] }
  for (const f of files) {
    const r = await importFile(f, files.length === 1 ? answersFile : undefined, files.length === 1)
    result.files.push({ file: f, category: r.category, imported: r.tasks.length, skipped: r.skipped })
    result.tasks.push(...r.tasks)
    result.skipped.push(...r.skipped)
  }
  const ids = new Set<string>()
  const dup: ImportedTask[] = []
  result.tasks = result.tasks.filter((t) => {
    if (ids.has(t.id)) {
      dup.push(t)
      return false
    }
    ids.add(t.id)
    return true
  })
  for (const t of dup) result.skipped.push({ id: t.id, reason: `duplicate task id ${t.id}` })
  const clash: string[] = []
  for (const t of result.tasks) {
    if (await stat(path.join(out, t.id)).catch(() => null)) clash.push(t.id)
  }
  if (clash.length > 0) {
    throw new HwError('bfcl_exists', `${clash.length} task folder(s) already exist in ${quotePath(out)}`, {
      details: clash.slice(0, 20),
      help: 'import into an empty folder',
    })
  }
  for (const t of result.tasks) {
    for (const [rel, text] of Object.entries(t.files)) {
      const p = path.join(out, t.id, rel)
      await mkdir(path.dirname(p), { recursive: true })
      await writeFile(p, text)
    }
  }
  return result
}

async function importFile(
  file: string,
  answersFile: string | undefined,
  alone: boolean,
): Promise<{ category: string; tasks: ImportedTask[]; skipped: Skipped[] }> {
  const category = path
    .basename(file)
    .replace(/\.jsonl?$/, '')
    .replace(/^BFCL_v\d+_/, '')
  const text = await readFile(file, 'utf8').catch(() => {
    throw new HwError('bfcl_missing', `${quotePath(file)}: cannot read the question file`)
  })
  const ids = formatSensitivityIds(text)
  if (ids) {
    return {
      category,
      tasks: [],
      skipped: ids.map(([cat, id]) => ({
        id,
        reason: `format sensitivity: re-asks ${cat} row ${id} with prompt-mode output formats, which tool calls do not have; import ${cat} for it`,
      })),
    }
  }
  const lines = parseJsonLines(text, file, BfclQuestionRow)
  const skipped: Skipped[] = lines.flatMap((l) => (l.ok ? [] : [skippedLine(l)]))
  const questions = lines.flatMap((l) => (l.ok ? [l.row] : []))
  let answers: Map<string, BfclAnswer> | null = null
  if (questions.some((q) => categoryKind(rowCategory(q.id, category)).kind === 'ast')) {
    const answersPath = answersFile ?? path.join(path.dirname(file), 'possible_answer', path.basename(file))
    const answerText = await readFile(answersPath, 'utf8').catch(() => null)
    if (answerText === null) {
      if (alone)
        throw new HwError('bfcl_missing', `${quotePath(answersPath)}: cannot read the answers file`, {
          help: 'pass --answers <possible_answer file>',
        })
      return {
        category,
        tasks: [],
        skipped: [
          ...skipped,
          ...questions.map((q) => ({ id: q.id, reason: `no answers file (${path.basename(answersPath)})` })),
        ],
      }
    }
    const rows = parseJsonLines(answerText, answersPath, BfclAnswerRow)
    for (const l of rows) if (!l.ok) skipped.push(skippedLine(l))
    answers = new Map(rows.flatMap((l) => (l.ok ? [[l.row.id, l.row] as const] : [])))
    const asked = new Set(questions.map((q) => q.id))
    for (const id of answers.keys())
      if (!asked.has(id)) skipped.push({ id, reason: 'ground truth without a question row' })
  }
  const r = bfclToTasks(questions, answers, category)
  return { category, tasks: r.tasks, skipped: [...skipped, ...r.skipped] }
}

/** BFCL's format_sensitivity file: one JSON object of category → row ids (not JSON Lines). */
function formatSensitivityIds(text: string): [string, string][] | null {
  if (!text.trimStart().startsWith('{') || text.trim().split('\n').length < 2) return null
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return null
  }
  if (!v || typeof v !== 'object' || Array.isArray(v) || 'id' in v) return null
  const out: [string, string][] = []
  for (const [cat, ids] of Object.entries(v)) {
    if (!Array.isArray(ids)) return null
    for (const id of ids) out.push([cat, String(id)])
  }
  return out
}

/** A skipped row's reason without its particulars, for the count per reason. */
export function reasonKind(reason: string): string {
  if (/ turns: only single-turn/.test(reason)) return 'more than one turn'
  if (/^"?.*:\d+"? not valid JSON/.test(reason) || /^"?[^ ]*:\d+"? /.test(reason)) return 'malformed row'
  if (reason.startsWith('ground truth call') && reason.includes('no allowed value'))
    return "no allowed value passes BFCL's check"
  if (reason.startsWith('format sensitivity')) return 'format sensitivity (prompt-mode formats)'
  if (reason.startsWith('no answers file')) return 'no answers file'
  if (reason.startsWith('duplicate task id')) return 'duplicate task id'
  if (reason.startsWith('function ') && reason.includes('JSON Schema'))
    return 'parameters not a valid JSON Schema'
  if (reason.startsWith('ground truth calls "')) return 'ground truth calls an undeclared function'
  return reason.split(':')[0] as string
}

/** Count per reason kind, largest first. */
export function countReasons(skipped: Skipped[]): [string, number][] {
  const m = new Map<string, number>()
  for (const s of skipped) m.set(reasonKind(s.reason), (m.get(reasonKind(s.reason)) ?? 0) + 1)
  return [...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
}

/** A line that could not be read, as the import lists it. */
function skippedLine({ ok: _ok, ...skipped }: { ok: false } & Skipped): Skipped {
  return skipped
}
