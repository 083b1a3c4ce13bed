import { realpath } from 'node:fs/promises'
import path from 'node:path'

/** Why a path was refused (the message returned to the caller as a tool error). */
export class Refused extends Error {}

/**
 * The absolute path of `rel` inside the sandbox `root`, refusing what would leave it: an absolute path,
 * `..` out of the root, or a symlink (anywhere on the way, the last component included) resolving
 * outside. For a file that does not exist yet its nearest existing ancestor is checked. `root` must
 * be a real path (see `realRoot`).
 */
export async function confine(root: string, rel: string): Promise<string> {
  if (typeof rel !== 'string' || rel === '' || rel.includes('\0'))
    throw new Refused('path must be a non-empty string')
  if (path.isAbsolute(rel))
    throw new Refused(`${rel}: absolute paths are refused; give a path inside the sandbox`)
  const abs = path.resolve(root, rel)
  if (!inside(root, abs)) throw new Refused(`${rel}: outside the sandbox`)
  let probe = abs
  for (;;) {
    try {
      const real = await realpath(probe)
      if (!inside(root, real)) throw new Refused(`${rel}: resolves outside the sandbox`)
      return abs
    } catch (e) {
      if (e instanceof Refused) throw e
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e
      const up = path.dirname(probe)
      if (up === probe || !inside(root, up)) return abs
      probe = up
    }
  }
}

export async function realRoot(dir: string): Promise<string> {
  return realpath(path.resolve(dir))
}

function inside(root: string, p: string): boolean {
  const r = path.relative(root, p)
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r))
}
