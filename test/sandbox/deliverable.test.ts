import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { collectDeliverable, commitBaseline } from '../../src/run/workspace.js'
import { BACKENDS } from '../../src/sandbox/select.js'

// After the harness, the deliverable is taken with `git add -A` and `git diff` in the workspace the
// harness could change. A harness that sets `core.fsmonitor` or a filter driver in the repository's
// config makes git run its command: under namespace+uid that command must run in the sandbox (it can
// neither write the action's files nor run as its user); without a sandbox it runs as the action's
// user (shown here, so the test can fail).

let base = ''
let nsProbe: { ok: boolean; reason: string | null } = { ok: false, reason: 'not probed' }
beforeAll(async () => {
  nsProbe = await BACKENDS['namespace+uid'].probe()
})
afterEach(() => {
  if (base) rmSync(base, { recursive: true, force: true })
})

/** A committed workspace whose config runs a command on `git add`, and the file that command writes. */
async function plantedWorkspace(): Promise<{ ws: string; commit: string; ran: string }> {
  base = mkdtempSync(path.join(os.tmpdir(), 'hw-deliverable-'))
  const ws = path.join(base, 'ws')
  mkdirSync(ws)
  writeFileSync(path.join(ws, 'a.txt'), 'one\n')
  const commit = await commitBaseline(ws)
  const ran = path.join(base, 'ran.txt')
  // What a harness can do with write access to its workspace: repository config and attributes.
  appendFileSync(
    path.join(ws, '.git', 'config'),
    `[core]\n\tfsmonitor = "id -u >> ${ran}; false"\n[filter "probe"]\n\tclean = "id -u >> ${ran}; cat"\n`,
  )
  writeFileSync(path.join(ws, '.gitattributes'), '*.txt filter=probe\n')
  writeFileSync(path.join(ws, 'a.txt'), 'two\n')
  return { ws, commit, ran }
}

describe('the deliverable: git over a workspace the harness could change', () => {
  it('namespace+uid: commands planted in the repository config run in the sandbox, not as the action', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const { ws, commit, ran } = await plantedWorkspace()
    const del = await collectDeliverable(ws, commit, BACKENDS['namespace+uid'])
    expect(del.error).toBeNull()
    expect(del.patch).toContain('+two')
    expect(del.files_changed).toBe(2)
    // The planted commands could not reach the action's files (its /tmp is hidden in the sandbox).
    expect(existsSync(ran)).toBe(false)
  })

  it('without a sandbox the same planted commands run as the action user (the vector is real)', async () => {
    const { ws, commit, ran } = await plantedWorkspace()
    const del = await collectDeliverable(ws, commit)
    expect(del.patch).toContain('+two')
    expect(readFileSync(ran, 'utf8')).toContain(String(process.getuid?.()))
  })

  it('a base that is not a commit id gives an error, never a shell command', async () => {
    const { ws, ran } = await plantedWorkspace()
    const del = await collectDeliverable(ws, `HEAD; touch ${ran}`)
    expect(del).toMatchObject({ patch: '', bytes: 0, error: expect.stringContaining('not a commit id') })
  })

  it('the patch never carries ignored files or binaries; what it left out is listed', async () => {
    base = mkdtempSync(path.join(os.tmpdir(), 'hw-deliverable-'))
    const ws = path.join(base, 'ws')
    mkdirSync(ws)
    writeFileSync(path.join(ws, '.gitignore'), '*.pyc\nbuild/\n')
    writeFileSync(path.join(ws, 'calc.py'), 'value = 1\n')
    writeFileSync(path.join(ws, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]))
    const commit = await commitBaseline(ws)
    writeFileSync(path.join(ws, 'calc.py'), 'value = 2\n')
    writeFileSync(path.join(ws, 'calc.pyc'), Buffer.from([0x42, 0x0d, 0x0d, 0x0a, 0, 0]))
    mkdirSync(path.join(ws, 'build'))
    writeFileSync(path.join(ws, 'build', 'out.o'), 'obj')
    writeFileSync(path.join(ws, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9]))
    writeFileSync(path.join(ws, 'new.bin'), Buffer.from([0, 1, 2, 0, 255]))
    const del = await collectDeliverable(ws, commit)
    expect(del.error).toBeNull()
    expect(del.patch).toContain('+value = 2')
    expect(del.files_changed).toBe(1)
    expect(del.patch).not.toMatch(/calc\.pyc|out\.o|logo\.png|new\.bin/)
    expect(del.excluded).toEqual([
      { path: 'logo.png', why: 'binary' },
      { path: 'new.bin', why: 'binary' },
      { path: 'build/', why: 'ignored' },
      { path: 'calc.pyc', why: 'ignored' },
    ])
  })
})
