import { realpathSync } from 'node:fs'
import path from 'node:path'
import { HwError } from './errors.js'

/**
 * Paths read from an artifact (decision.json's `runs[].comparison`, `confirmation.plan`, a plan's
 * artifact names) are untrusted: a forged artifact could name `../../.git/config`, an absolute path,
 * or a symlink to a file outside the download folder. These keep such a path inside `root`.
 */

function inside(root: string, p: string): boolean {
  const rel = path.relative(root, p)
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel))
}

function real(p: string): string | null {
  try {
    return realpathSync(p)
  } catch {
    return null
  }
}

/**
 * True when `p` (absolute or relative to the working folder) lies inside `root`, both as written and
 * after resolving symlinks (a path that does not exist yet is judged by its nearest existing parent).
 */
export function isContained(root: string, p: string): boolean {
  const r = path.resolve(root)
  const abs = path.resolve(p)
  if (!inside(r, abs)) return false
  const realRoot = real(r) ?? r
  let probe = abs
  for (;;) {
    const rp = real(probe)
    if (rp) return inside(realRoot, rp)
    const up = path.dirname(probe)
    if (up === probe) return true
    probe = up
  }
}

/**
 * Resolve `rel` (a relative path read from an artifact) against `base` and check that the result stays
 * inside `root`. Throws HwError `artifact_path_outside` (naming the field it came from) for an absolute
 * path, `..` out of `root`, or a symlink that leads out of it.
 */
export function containedPath(root: string, base: string, rel: string, field: string): string {
  if (path.isAbsolute(rel) || /^[A-Za-z]:[\\/]/.test(rel)) {
    throw new HwError('artifact_path_outside', `${field} is an absolute path ("${rel}"): refused`, {
      help: 'paths in artifacts are relative to the file that names them; this artifact may be forged',
    })
  }
  const abs = path.resolve(base, rel)
  if (!isContained(root, abs)) {
    throw new HwError(
      'artifact_path_outside',
      `${field} ("${rel}") leads outside ${path.resolve(root)}: refused`,
      { help: 'paths in artifacts must stay inside the download folder; this artifact may be forged' },
    )
  }
  return abs
}
