import { constants } from 'node:fs'
import { lstat, mkdir, open } from 'node:fs/promises'
import path from 'node:path'
import type { ToolOutcome } from '../provider.js'
import { confine, Refused } from './confine.js'

/** Largest file read_file returns whole; a larger one is refused (read it in pieces with bash). */
export const MAX_READ_BYTES = 1 << 20

export const READ_FILE_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string', description: 'file path relative to the working folder' } },
  required: ['path'],
  additionalProperties: false,
}
export const WRITE_FILE_SCHEMA = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'file path relative to the working folder' },
    content: { type: 'string', description: 'the whole new content of the file' },
  },
  required: ['path', 'content'],
  additionalProperties: false,
}

/** read_file: a UTF-8 file inside the sandbox. The last component is opened without following links. */
export async function readFileTool(root: string, args: { path: string }): Promise<ToolOutcome> {
  return guarded(async () => {
    const abs = await confine(root, args.path)
    const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      const st = await fh.stat()
      if (!st.isFile())
        return { status: 'error', code: 'not_a_file', text: `${args.path}: not a regular file` }
      if (st.size > MAX_READ_BYTES) {
        return {
          status: 'error',
          code: 'too_large',
          text: `${args.path}: ${st.size} bytes, over ${MAX_READ_BYTES}`,
        }
      }
      return { status: 'ok', text: await fh.readFile('utf8') }
    } finally {
      await fh.close()
    }
  })
}

/** write_file: create or replace a file inside the sandbox, creating its folders; links are refused. */
export async function writeFileTool(
  root: string,
  args: { path: string; content: string },
): Promise<ToolOutcome> {
  return guarded(async () => {
    const abs = await confine(root, args.path)
    await mkdir(path.dirname(abs), { recursive: true })
    // The folders were created after the check: check again before opening.
    await confine(root, args.path)
    const st = await lstat(abs).catch(() => null)
    if (st?.isSymbolicLink()) throw new Refused(`${args.path}: is a symbolic link`)
    const fh = await open(
      abs,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o644,
    )
    try {
      await fh.writeFile(args.content, 'utf8')
    } finally {
      await fh.close()
    }
    return { status: 'ok', text: `wrote ${Buffer.byteLength(args.content)} bytes to ${args.path}` }
  })
}

async function guarded(f: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await f()
  } catch (e) {
    if (e instanceof Refused) return { status: 'error', code: 'refused', text: e.message }
    const err = e as NodeJS.ErrnoException
    if (err.code === 'ELOOP') return { status: 'error', code: 'refused', text: 'symbolic links are refused' }
    if (err.code === 'ENOENT') return { status: 'error', code: 'not_found', text: 'no such file' }
    if (err.code === 'EISDIR') return { status: 'error', code: 'not_a_file', text: 'is a folder' }
    return { status: 'error', code: err.code ?? 'io_error', text: err.code ?? 'input/output error' }
  }
}
