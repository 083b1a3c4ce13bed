import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../../util/errors.js'
import { quotePath } from '../../util/paths.js'
import { BfclAnswer, BfclQuestion, bfclToTasks, type ImportResult, parseJsonLines } from './bfcl.js'

/**
 * `panel import bfcl`: read a BFCL question file and its possible_answer file (default: the file of the
 * same name in a sibling `possible_answer/` folder), write one bridge task folder per convertible row
 * under `out`. Refuses to overwrite an existing task folder.
 */
export async function importBfcl(file: string, out: string, answersFile?: string): Promise<ImportResult> {
  const answers = answersFile ?? path.join(path.dirname(file), 'possible_answer', path.basename(file))
  const read = async (f: string, what: string): Promise<string> => {
    try {
      return await readFile(f, 'utf8')
    } catch {
      throw new HwError('bfcl_missing', `${quotePath(f)}: cannot read the ${what}`, {
        help: what === 'answers file' ? 'pass --answers <possible_answer file>' : undefined,
      })
    }
  }
  const questions = parseJsonLines(await read(file, 'question file'), file, BfclQuestion)
  const truth = parseJsonLines(await read(answers, 'answers file'), answers, BfclAnswer)
  const category = path
    .basename(file)
    .replace(/\.jsonl?$/, '')
    .replace(/^BFCL_v\d+_/, '')
  const result = bfclToTasks(questions, truth, category)
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
