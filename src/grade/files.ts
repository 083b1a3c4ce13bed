import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { confine, Refused } from '../bridge/builtins/confine.js'
import { type Evidence, fail, type Grade, type Grader, pass, ungraded } from './types.js'

const FileCheck = z
  .strictObject({
    contains: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    exact: z.string().optional(),
    absent: z.literal(true).optional(),
  })
  .refine((c) => [c.contains, c.exact, c.absent].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of contains, exact, absent',
  })

/**
 * files: each path (relative to the workspace; symlinks out and traversal refused) holds text that
 * contains the given string(s), equals `exact` (a trailing newline is ignored on both sides), or is
 * `absent`. All checks must hold.
 */
export const FilesSpec = z.strictObject({ files: z.record(z.string().min(1), FileCheck) })
export type FilesSpec = z.output<typeof FilesSpec>

export const files: Grader<FilesSpec> = {
  name: 'files',
  spec: FilesSpec,
  async grade(spec, ev) {
    return gradeFiles(spec, ev)
  },
}

export async function gradeFiles(spec: FilesSpec, ev: Pick<Evidence, 'workspace'>): Promise<Grade> {
  const entries = Object.entries(spec.files)
  for (const [rel, check] of entries) {
    let text: string | null
    try {
      text = await readFile(await confine(ev.workspace, rel), 'utf8')
    } catch (e) {
      if (e instanceof Refused) return ungraded('files:bad_path', `${rel}: ${e.message}`)
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') throw e
      text = null
    }
    if (check.absent) {
      if (text !== null) return fail('files:present', `${rel} exists`)
      continue
    }
    if (text === null) return fail('files:missing', `${rel} does not exist`)
    if (check.exact !== undefined && text.replace(/\n$/, '') !== check.exact.replace(/\n$/, '')) {
      return fail('files:differs', `${rel} differs from the expected text`)
    }
    const wanted =
      check.contains === undefined ? [] : Array.isArray(check.contains) ? check.contains : [check.contains]
    const missing = wanted.findIndex((w) => !text.includes(w))
    if (missing >= 0)
      return fail('files:lacks', `${rel} lacks expected text ${missing + 1} of ${wanted.length}`)
  }
  return pass(`${entries.length} file check(s) hold`)
}
