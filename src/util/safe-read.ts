import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs'
import { lstat, open } from 'node:fs/promises'
import path from 'node:path'

/**
 * Reading files named by untrusted artifacts (a downloaded leg folder, a record's `logs_dir`): a file
 * is opened only when it is a regular file inside the folder, reached without following any symbolic
 * link (each component is checked with lstat; the file is opened with O_NOFOLLOW and checked again
 * with fstat). The folder itself (`root`, given by the user) may be anything.
 */

/** The file's bytes, `missing` when it (or a folder on the way) does not exist, or why it was refused. */
export type InsideRead = { bytes: Buffer } | 'missing' | { refused: string }

/**
 * Why `rel` may not be read inside `root` (a sentence naming the offending part), `missing`, or null
 * when it is a regular file reached through real folders only.
 */
export function checkInside(root: string, rel: string): string | 'missing' | null {
  const parts = splitRel(rel)
  if (typeof parts === 'string') return parts
  let at = path.resolve(root)
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part)
    let st: ReturnType<typeof lstatSync>
    try {
      st = lstatSync(at)
    } catch {
      return 'missing'
    }
    const shown = parts.slice(0, i + 1).join('/')
    if (st.isSymbolicLink()) return `${shown} is a symbolic link: not followed out of the folder`
    const last = i === parts.length - 1
    if (!last && !st.isDirectory()) return 'missing'
    if (last && !st.isFile()) return `${shown} is not a regular file: not read`
  }
  return null
}

/**
 * Read `rel` inside `root` on the terms of {@link checkInside} (async). `folders`, when given, holds
 * the folders already found to be real folders (no link) by earlier reads of the same batch, so a
 * run of tens of thousands of files under a few leg folders checks each shared folder once; `absent`
 * likewise holds the folders found missing, so the files of a folder that is not there are missing
 * without another failed lstat each. The artifacts do not change while one batch reads them, and the
 * file itself is always checked.
 */
export async function readInside(
  root: string,
  rel: string,
  folders?: Set<string>,
  absent?: Set<string>,
): Promise<InsideRead> {
  const parts = splitRel(rel)
  if (typeof parts === 'string') return { refused: parts }
  let at = path.resolve(root)
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part)
    const last = i === parts.length - 1
    if (!last && folders?.has(at)) continue
    if (!last && absent?.has(at)) return 'missing'
    const st = await lstat(at).catch(() => null)
    if (!st) {
      if (!last) absent?.add(at)
      return 'missing'
    }
    const shown = parts.slice(0, i + 1).join('/')
    if (st.isSymbolicLink()) return { refused: `${shown} is a symbolic link: not followed out of the folder` }
    if (!last && !st.isDirectory()) return 'missing'
    if (last && !st.isFile()) return { refused: `${shown} is not a regular file: not read` }
    if (!last) folders?.add(at)
  }
  let fh: Awaited<ReturnType<typeof open>>
  try {
    fh = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ELOOP'
      ? { refused: `${parts.join('/')} is a symbolic link: not followed out of the folder` }
      : 'missing'
  }
  try {
    if (!(await fh.stat()).isFile()) return { refused: `${parts.join('/')} is not a regular file: not read` }
    return { bytes: await fh.readFile() }
  } finally {
    await fh.close()
  }
}

/** Read `rel` inside `root` on the terms of {@link checkInside} (sync). */
export function readInsideSync(root: string, rel: string): InsideRead {
  const why = checkInside(root, rel)
  if (why === 'missing') return 'missing'
  if (why !== null) return { refused: why }
  const parts = splitRel(rel) as string[]
  let fd: number
  try {
    fd = openSync(path.join(path.resolve(root), ...parts), constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return 'missing'
  }
  try {
    if (!fstatSync(fd).isFile()) return { refused: `${parts.join('/')} is not a regular file: not read` }
    return { bytes: readFileSync(fd) }
  } finally {
    closeSync(fd)
  }
}

/** The components of a relative path, or why it is refused (absolute, or `..` out of the folder). */
function splitRel(rel: string): string[] | string {
  if (path.isAbsolute(rel) || /^[A-Za-z]:[\\/]/.test(rel)) return `${rel} is an absolute path: refused`
  const parts = rel.split(/[\\/]+/).filter((p) => p !== '' && p !== '.')
  if (parts.length === 0) return `"${rel}" names no file: refused`
  if (parts.includes('..')) return `${rel} leads out of the folder (..): refused`
  return parts
}
