import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { SandboxBackend } from '../../src/sandbox/contract.js'
import { isolates, runSandboxJob } from '../../src/sandbox/job.js'
import { BACKENDS } from '../../src/sandbox/select.js'

// One sandboxed tool job (install, probe, setup, verifier): commands in order, stopping at the first
// failure, output kept outside the sandbox and appended to the log, the sandbox closed whatever happens.

let dir = ''
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})
const env = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }

describe('runSandboxJob', () => {
  it('runs commands in order, stops at the first failure, and appends each output to the log', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-jobtest-'))
    const log = path.join(dir, 'job.log')
    const runs = await runSandboxJob(
      BACKENDS['env-only'],
      { writable: [dir], readOnly: [] },
      [
        { command: 'sh', args: ['-c', 'echo one; echo err-one >&2'], cwd: dir, env },
        { command: 'sh', args: ['-c', 'echo two; exit 4'], cwd: dir, env },
        { command: 'sh', args: ['-c', 'touch never'], cwd: dir, env },
      ],
      { timeoutMs: 10_000, logFile: log },
    )
    expect(runs.map((r) => [r.exitCode, r.output])).toEqual([
      [0, 'one\nerr-one\n'],
      [4, 'two\n'],
    ])
    expect(readFileSync(log, 'utf8')).toBe('one\nerr-one\ntwo\n')
    expect(existsSync(path.join(dir, 'never'))).toBe(false)
  })

  it('a command over its limit is reported timed out; a missing program is a spawn error', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-jobtest-'))
    const [slow] = await runSandboxJob(
      undefined,
      { writable: [dir], readOnly: [] },
      [{ command: 'sleep', args: ['5'], cwd: dir, env }],
      { timeoutMs: 200, graceMs: 100 },
    )
    expect(slow).toMatchObject({ timedOut: true, exitCode: null })
    const [missing] = await runSandboxJob(
      undefined,
      { writable: [dir], readOnly: [] },
      [{ command: 'no-such-program-hw', args: [], cwd: dir, env }],
      { timeoutMs: 5000 },
    )
    expect(missing?.spawnError).toBe('ENOENT')
  })

  it('a sandbox that cannot be opened throws and leaves no output folder behind', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-jobtest-'))
    const broken: SandboxBackend = {
      ...BACKENDS.none,
      open: async () => {
        throw new Error('cannot open')
      },
    }
    // The job's output folder is made under os.tmpdir(), i.e. $TMPDIR: here a folder of the test's own.
    const saved = process.env.TMPDIR
    process.env.TMPDIR = dir
    try {
      await expect(
        runSandboxJob(broken, { writable: [], readOnly: [] }, [], { timeoutMs: 1000 }),
      ).rejects.toThrow('cannot open')
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
    expect(readdirSync(dir)).toEqual([])
  })

  it('only a backend with a separate user isolates a job', () => {
    expect(isolates(BACKENDS['namespace+uid'])).toBe(true)
    expect(isolates(BACKENDS['env-only'])).toBe(false)
    expect(isolates(BACKENDS.none)).toBe(false)
    expect(isolates(undefined)).toBe(false)
  })
})
