import { constants } from 'node:fs'
import { open } from 'node:fs/promises'

/**
 * Read, as UTF-8 text, a file that code in a sandbox wrote (a reward, a prompt, a patch). The sandbox
 * user owned its folder, so the name may have been made a symbolic link to a file of the action's
 * user (the action would read it with its own rights) or a FIFO (the read would block): only a regular
 * file is read (open with O_NOFOLLOW and O_NONBLOCK, then fstat). Throws (ELOOP, ENOENT, "not a
 * regular file") otherwise.
 */
export async function readBack(file: string): Promise<string> {
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    if (!(await fh.stat()).isFile()) throw new Error(`${file}: not a regular file`)
    return await fh.readFile('utf8')
  } finally {
    await fh.close()
  }
}
