import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { HwError } from '../util/errors.js'
import { parseReferenceCalls } from './calls.js'
import { collapse } from './parse.js'
import type { TaskScript } from './types.js'

/**
 * Load the scripts of every task under the given folders. Each folder is either one Harbor-layout task
 * (it holds instruction.md) or a panel: a folder of task folders. From each task it reads
 * instruction.md, solution/solve.sh (optional), task.toml `[hw] test_command` (optional) and picks a
 * file of environment/ to inspect first. Validation of the task format is the panel's job; this loader
 * is lenient. Throws HwError `panel_invalid` for an unreadable folder or a folder with no task, and on
 * two tasks with the same id.
 */
export async function loadTaskScripts(dirs: string[]): Promise<Map<string, TaskScript>> {
  const tasks = new Map<string, TaskScript>()
  for (const dir of dirs) {
    const abs = path.resolve(dir)
    const taskDirs = (await isFile(path.join(abs, 'instruction.md'))) ? [abs] : await childTasks(abs)
    if (taskDirs.length === 0) {
      throw new HwError('panel_invalid', 'no task folders here (none holds an instruction.md)', {
        where: abs,
        help: 'pass a task folder or a folder of task folders (Harbor layout)',
      })
    }
    for (const t of taskDirs) {
      const script = await loadTaskScript(t)
      if (tasks.has(script.id)) {
        throw new HwError('panel_invalid', `two tasks named "${script.id}"`, { where: t })
      }
      tasks.set(script.id, script)
    }
  }
  return tasks
}

/** One task folder → its script. */
export async function loadTaskScript(dir: string): Promise<TaskScript> {
  const instruction = await readFile(path.join(dir, 'instruction.md'), 'utf8')
  const solve = await readFile(path.join(dir, 'solution', 'solve.sh'), 'utf8').catch(() => null)
  const toml = await readFile(path.join(dir, 'task.toml'), 'utf8').catch(() => null)
  let testCommand: string | null = null
  if (toml !== null) {
    try {
      const hw = (parseToml(toml) as { hw?: { test_command?: unknown } }).hw
      if (typeof hw?.test_command === 'string' && hw.test_command.trim() !== '') testCommand = hw.test_command
    } catch (e) {
      throw new HwError(
        'panel_invalid',
        `task.toml is not valid TOML: ${(e as Error).message.split('\n')[0]}`,
        {
          where: path.join(dir, 'task.toml'),
        },
      )
    }
  }
  const files = await listFiles(path.join(dir, 'environment'))
  const callsText = await readFile(path.join(dir, 'solution', 'calls.json'), 'utf8').catch(() => null)
  const answer = await readFile(path.join(dir, 'solution', 'answer.md'), 'utf8').catch(() => null)
  return {
    id: path.basename(dir),
    instruction,
    solve,
    testCommand,
    inspectFile: pickInspectFile(files, instruction),
    calls: callsText === null ? null : parseReferenceCalls(callsText),
    answer,
  }
}

/**
 * The file to read first: the one the instruction names first, else a README, else the
 * first file in sorted order; null when environment/ is empty.
 */
export function pickInspectFile(files: string[], instruction: string): string | null {
  const text = collapse(instruction)
  const at = (f: string): number => {
    const i = text.indexOf(f)
    return i >= 0 ? i : text.indexOf(path.posix.basename(f))
  }
  const named = files
    .filter((f) => at(f) >= 0)
    .sort((a, b) => at(a) - at(b) || b.length - a.length || a.localeCompare(b))
  return named[0] ?? files.find((f) => /^readme/i.test(path.posix.basename(f))) ?? files[0] ?? null
}

async function childTasks(dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (e) {
    throw new HwError('panel_invalid', `cannot read the folder (${(e as NodeJS.ErrnoException).code})`, {
      where: dir,
    })
  }
  const out: string[] = []
  for (const n of names.sort()) {
    if (!n.startsWith('.') && (await isFile(path.join(dir, n, 'instruction.md')))) out.push(path.join(dir, n))
  }
  return out
}

const SKIP_DIRS = new Set(['.git', 'node_modules', '__pycache__', '.venv'])

/** Relative POSIX paths of the regular files under `root` (sorted; [] when it does not exist). */
async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])
  const out: string[] = []
  for (const e of entries) {
    if (!e.isFile()) continue
    const rel = path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')
    if (rel.split('/').some((seg) => SKIP_DIRS.has(seg))) continue
    out.push(rel)
  }
  return out.sort()
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isFile() ?? false
}
