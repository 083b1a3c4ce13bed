import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'

/** Most skill folders listed from one place. */
const MAX_SKILLS = 200

/**
 * The skills in a `skills` folder: each sub-folder holding a SKILL.md, by name, sorted. `absent` when
 * the folder does not exist; `refused` when it (or a folder on the way inside `root`) is a symbolic link.
 * Only names are read, never a skill's text.
 */
export async function skillFolders(
  root: string,
  rel: string,
): Promise<{ names: string[] } | 'absent' | { refused: string }> {
  let at = path.resolve(root)
  for (const part of rel.split('/').filter(Boolean)) {
    at = path.join(at, part)
    const st = await lstat(at).catch(() => null)
    if (!st) return 'absent'
    if (st.isSymbolicLink()) return { refused: `${rel} is a symbolic link` }
    if (!st.isDirectory()) return 'absent'
  }
  const names: string[] = []
  for (const entry of (await readdir(at, { withFileTypes: true }).catch(() => [])).slice(0, 10_000)) {
    if (!entry.isDirectory()) continue
    const skill = await lstat(path.join(at, entry.name, 'SKILL.md')).catch(() => null)
    if (skill?.isFile()) names.push(entry.name.slice(0, 200))
    if (names.length >= MAX_SKILLS) break
  }
  return { names: names.sort() }
}
