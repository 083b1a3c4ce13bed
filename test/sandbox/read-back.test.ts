import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { loadTask } from '../../src/panel/task.js'
import { runTaskVerifier } from '../../src/panel/verifier.js'
import { readBack } from '../../src/sandbox/read-back.js'
import { BACKENDS } from '../../src/sandbox/select.js'

// What sandboxed code leaves for the action to read (a reward, a prompt, a patch) is read only as a
// regular file: a symbolic link to one of the action user's files, or a FIFO, is refused.

let dir = ''
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})
let nsProbe: { ok: boolean; reason: string | null } = { ok: false, reason: 'not probed' }
beforeAll(async () => {
  nsProbe = await BACKENDS['namespace+uid'].probe()
})

describe('readBack', () => {
  it('reads a regular file, refuses a symbolic link and a FIFO (without blocking)', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-readback-'))
    writeFileSync(path.join(dir, 'secret'), 'hwsentinel-host\n')
    writeFileSync(path.join(dir, 'reward.txt'), '1\n')
    symlinkSync(path.join(dir, 'secret'), path.join(dir, 'link.txt'))
    execFileSync('mkfifo', [path.join(dir, 'fifo')])
    expect(await readBack(path.join(dir, 'reward.txt'))).toBe('1\n')
    await expect(readBack(path.join(dir, 'link.txt'))).rejects.toMatchObject({ code: 'ELOOP' })
    await expect(readBack(path.join(dir, 'fifo'))).rejects.toThrow('not a regular file')
    await expect(readBack(path.join(dir, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('within a folder: refuses a file reached through a symbolic link folder or outside it', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-readback-'))
    const home = path.join(dir, 'home')
    const outside = path.join(dir, 'outside')
    mkdirSync(path.join(home, '.tool', 'sessions'), { recursive: true })
    mkdirSync(outside)
    writeFileSync(path.join(home, '.tool', 'sessions', 'a.json'), '{"ok":true}')
    writeFileSync(path.join(outside, 'a.json'), '{"secret":"hwsentinel-dir-link"}')
    // The harness replaced a folder of its home by a link to one of the action's folders.
    symlinkSync(outside, path.join(home, '.linked'))
    expect(await readBack(path.join(home, '.tool', 'sessions', 'a.json'), home)).toBe('{"ok":true}')
    await expect(readBack(path.join(home, '.linked', 'a.json'), home)).rejects.toThrow('symbolic link')
    await expect(readBack(path.join(outside, 'a.json'), home)).rejects.toThrow('leaves')
    // Transcript readers of the adapters go through it.
    const { readJsonOrNull } = await import('../../src/harnesses/files.js')
    const { readCopilotSessionEvents } = await import('../../src/harnesses/copilot.js')
    expect(await readJsonOrNull(path.join(home, '.linked', 'a.json'), home)).toBeNull()
    mkdirSync(path.join(outside, 's1'))
    writeFileSync(path.join(outside, 's1', 'events.jsonl'), '{"type":"hwsentinel-copilot"}\n')
    mkdirSync(path.join(home, '.copilot'))
    symlinkSync(outside, path.join(home, '.copilot', 'session-state'))
    expect(await readCopilotSessionEvents(home)).toEqual([])
  })

  it('namespace+uid: a verifier that links its reward file to a file of the action gets no content out', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-readback-'))
    const secret = path.join(dir, 'host-secret')
    writeFileSync(secret, 'hwsentinel-reward-link\n', { mode: 0o600 })
    const task = path.join(dir, 'task')
    const files: Record<string, string> = {
      'task.toml':
        'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\nlanguage = "none"\ncategory = "bugfix"\n\n[verifier]\ntimeout_sec = 30\n\n[agent]\ntimeout_sec = 30\n',
      'instruction.md': 'x\n',
      'environment/README.md': 'x\n',
      // The graded code's revenge: the reward file becomes a link to a file only the action may read.
      'tests/test.sh': `ln -sf ${JSON.stringify(secret)} "$HW_REWARD_FILE"\nexit 1\n`,
    }
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(task, rel)), { recursive: true })
      writeFileSync(path.join(task, rel), text, { mode: 0o755 })
    }
    const ws = path.join(dir, 'ws')
    mkdirSync(ws)
    const r = await runTaskVerifier(await loadTask(task), ws, { sandbox: BACKENDS['namespace+uid'] })
    expect(JSON.stringify(r)).not.toContain('hwsentinel')
    // No reward was read: the exit code decides.
    expect(r).toMatchObject({ status: 'fail', reward: null, exitCode: 1 })
  })
})
