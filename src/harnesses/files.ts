import { mkdir, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { readBack } from '../sandbox/read-back.js'
import { HwError } from '../util/errors.js'

/**
 * Resolve `rel` inside `root`, refusing anything that would land outside it (absolute paths, `..`).
 * A leading `~/` means the root (the attempt's home). Throws HwError `bad_config_file`.
 */
export function resolveInside(root: string, rel: string, where = 'config.files'): string {
  const clean = rel.startsWith('~/') ? rel.slice(2) : rel
  const target = path.resolve(root, clean)
  const inside = path.relative(root, target)
  if (
    clean === '' ||
    path.isAbsolute(clean) ||
    inside === '' ||
    inside.startsWith('..') ||
    path.isAbsolute(inside)
  ) {
    throw new HwError('bad_config_file', `file "${rel}" is not a path inside the isolated home`, {
      where,
      help: 'use a relative path such as .config/tool/settings.json (it is written under the attempt HOME)',
    })
  }
  return target
}

/** Write a text file under `root` (creating folders). Returns the absolute path. */
export async function writeInside(root: string, rel: string, text: string, where?: string): Promise<string> {
  const target = resolveInside(root, rel, where)
  await mkdir(path.dirname(target), { recursive: true })
  await writeFile(target, text)
  return target
}

/** JSON with a trailing newline, as harness config files. */
export function jsonFile(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/**
 * Write the cell's `config.files` into the home. Called after the adapter's own config so a cell can
 * replace a rendered file on purpose.
 */
export async function writeCellFiles(
  home: string,
  files: Record<string, string> | undefined,
): Promise<string[]> {
  const written: string[] = []
  for (const [rel, text] of Object.entries(files ?? {})) {
    written.push(await writeInside(home, rel, text, `config.files["${rel}"]`))
  }
  return written
}

/**
 * A JSON file a harness wrote during the attempt (a usage report, a trajectory) under `within` (the
 * attempt's home or TMPDIR), parsed; null when it is missing or not JSON (a run killed mid-write), so
 * the parser reports what the run left, and when it is reached through a symbolic link (readBack:
 * never a file of the action's user).
 */
export async function readJsonOrNull(file: string, within: string): Promise<unknown> {
  const text = await readBack(file, within).catch(() => null)
  if (text === null) return null
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** Entry names of a folder a harness may have written (sessions, conversations), sorted; [] if missing. */
export async function sortedEntries(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch {
    return []
  }
}
