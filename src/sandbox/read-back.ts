import { constants } from 'node:fs'
import { open, realpath } from 'node:fs/promises'
import path from 'node:path'

/**
 * Read, as UTF-8 text, a file that code in a sandbox wrote (a reward, a prompt, a patch, a harness's
 * transcript). The sandbox user owned its folder, so the name may have been made a symbolic link to a
 * file of the action's user (the action would read it with its own rights) or a FIFO (the read would
 * block): only a regular file is read (open with O_NOFOLLOW and O_NONBLOCK, then fstat). With
 * `within` (the folder the sandbox could write, e.g. the attempt's home), no folder between it and the
 * file may be a symbolic link either. Call it once the sandbox's processes are gone. Throws (ELOOP,
 * ENOENT, "not a regular file", "leaves <within>") otherwise.
 */
export async function readBack(file: string, within?: string): Promise<string> {
  return (await readBackBytes(file, within)).toString('utf8')
}

/** {@link readBack} as bytes (for text whose encoding is checked, not assumed). */
export async function readBackBytes(file: string, within?: string): Promise<Buffer> {
  if (within !== undefined) {
    const rel = path.relative(within, path.dirname(file))
    if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${file}: leaves ${within}`)
    const [root, dir] = await Promise.all([realpath(within), realpath(path.dirname(file))])
    if (dir !== path.join(root, rel)) throw new Error(`${file}: leaves ${within} through a symbolic link`)
  }
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    if (!(await fh.stat()).isFile()) throw new Error(`${file}: not a regular file`)
    return await fh.readFile()
  } finally {
    await fh.close()
  }
}
