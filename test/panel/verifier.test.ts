import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadTask, type Task } from '../../src/panel/task.js'
import { parseReward, runTaskVerifier, verifierBaseEnv } from '../../src/panel/verifier.js'
import { runProcessGroup } from '../../src/process/exec.js'
import { removeDir, taskFiles, writePanel } from './fixture.js'

/** True while `pid` is a live (non-zombie) process. Reads /proc, so Linux only. */
function alive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return false
  try {
    const text = readFileSync(stat, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function waitDead(pids: number[], ms = 3000): Promise<number[]> {
  const until = Date.now() + ms
  let living = pids.filter(alive)
  while (living.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50))
    living = living.filter(alive)
  }
  return living
}

describe('runTaskVerifier', () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const d of dirs.splice(0)) await removeDir(d)
  })

  async function task(testSh: string, extra: Record<string, string> = {}): Promise<{ t: Task; ws: string }> {
    const root = await writePanel({ t: taskFiles({ 'tests/test.sh': testSh, ...extra }) })
    const ws = await mkdtemp(path.join(os.tmpdir(), 'hw-verifier-ws-'))
    dirs.push(root, ws)
    return { t: await loadTask(path.join(root, 't')), ws }
  }

  it('passes on exit 0 and fails on other exit codes, with cwd = the workspace', async () => {
    const { t, ws } = await task('#!/usr/bin/env bash\ntest "$PWD" = "$HW_WORKSPACE" && test -f marker\n')
    const before = await runTaskVerifier(t, ws)
    expect(before).toMatchObject({ status: 'fail', exitCode: 1, reward: null, reason: null })
    await import('node:fs/promises').then((fs) => fs.writeFile(path.join(ws, 'marker'), ''))
    const after = await runTaskVerifier(t, ws)
    expect(after).toMatchObject({ status: 'pass', exitCode: 0, reward: null })
    expect(after.durationMs).toBeGreaterThan(0)
  })

  it('gives the script HW_TESTS_DIR, the task [verifier] env and caller env, and logs its output', async () => {
    const { t, ws } = await task(
      '#!/usr/bin/env bash\necho "tests=$HW_TESTS_DIR k=$K extra=$EXTRA pyc=$PYTHONDONTWRITEBYTECODE"\ncat "$HW_TESTS_DIR/data.txt"\n',
      {
        'tests/data.txt': 'hidden data\n',
        'task.toml': `${taskFiles()['task.toml']?.replace('timeout_sec = 20\n\n[agent]', 'timeout_sec = 20\nenv = { K = "from-toml" }\n\n[agent]')}`,
      },
    )
    const log = path.join(ws, '..', `${path.basename(ws)}-verifier.log`)
    dirs.push(log)
    const r = await runTaskVerifier(t, ws, { logFile: log, env: { EXTRA: 'x' } })
    expect(r.status).toBe('pass')
    expect(await readFile(log, 'utf8')).toBe(
      `tests=${path.join(t.dir, 'tests')} k=from-toml extra=x pyc=1\nhidden data\n`,
    )
  })

  it('grades under an allowlisted environment: runner secrets never reach the graded code', async () => {
    const { t, ws } = await task('#!/usr/bin/env bash\nenv | sort > "$HW_WORKSPACE/env.txt"\n')
    process.env.HW_TEST_SECRET_TOKEN = 's3cret'
    try {
      expect((await runTaskVerifier(t, ws)).status).toBe('pass')
    } finally {
      delete process.env.HW_TEST_SECRET_TOKEN
    }
    const env = readFileSync(path.join(ws, 'env.txt'), 'utf8')
    expect(env).not.toContain('s3cret')
    expect(env).toContain('\nLC_ALL=C.UTF-8\n')
    expect(env).toContain('\nTZ=UTC\n')
    expect(env).toContain(`\nPATH=${process.env.PATH}\n`)
  })

  it('verifierBaseEnv keeps locators and drops everything else', () => {
    expect(
      verifierBaseEnv({
        PATH: '/p',
        HOME: '/h',
        PYENV_ROOT: '/py',
        OPENAI_API_KEY: 'k',
        GITHUB_TOKEN: 'g',
        LANG: 'fr_FR',
      }),
    ).toEqual({
      PATH: '/p',
      HOME: '/h',
      PYENV_ROOT: '/py',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'dumb',
      TZ: 'UTC',
    })
  })

  it('a written reward decides over the exit code', async () => {
    const { t, ws } = await task('#!/usr/bin/env bash\necho "$R" > "$HW_REWARD_FILE"\nexit $((CODE + 0))\n')
    expect(await runTaskVerifier(t, ws, { env: { R: '1', CODE: '3' } })).toMatchObject({
      status: 'pass',
      reward: 1,
      exitCode: 3,
    })
    expect(await runTaskVerifier(t, ws, { env: { R: '0.25' } })).toMatchObject({
      status: 'fail',
      reward: 0.25,
    })
    expect(await runTaskVerifier(t, ws, { env: { R: '1.5' } })).toMatchObject({
      status: 'error',
      reward: null,
      reason: 'bad reward "1.5"',
    })
    expect(await runTaskVerifier(t, ws, { env: { R: 'NaN' } })).toMatchObject({ status: 'error' })
  })

  it('a missing command is an error, not a failure', async () => {
    const { t, ws } = await task('#!/usr/bin/env bash\nhw-no-such-command-xyz\n')
    expect(await runTaskVerifier(t, ws)).toMatchObject({
      status: 'error',
      exitCode: 127,
      reason: 'test.sh exited 127 (command not runnable)',
    })
  })

  it('a missing workspace is an error with the reason', async () => {
    const { t } = await task('#!/usr/bin/env bash\nexit 0\n')
    const r = await runTaskVerifier(t, path.join(os.tmpdir(), 'hw-no-such-workspace-xyz'))
    expect(r.status).toBe('error')
    expect(r.reason).toMatch(/ENOENT|no such file/i)
  })

  it('on timeout kills the whole process group: no orphan survives', async () => {
    const { t, ws } = await task(
      '#!/usr/bin/env bash\n' +
        'sleep 1000 &\necho $! > "$HW_WORKSPACE/child.pid"\n' +
        'bash -c \'trap "" TERM; sleep 1000\' &\necho $! > "$HW_WORKSPACE/stubborn.pid"\n' +
        'echo $$ > "$HW_WORKSPACE/leader.pid"\nsleep 1000\n',
    )
    const t0 = Date.now()
    const r = await runTaskVerifier(t, ws, { timeoutS: 1 })
    expect(r).toMatchObject({ status: 'timeout', exitCode: null, reward: null })
    expect(Date.now() - t0).toBeLessThan(15_000)
    const pids = ['child', 'stubborn', 'leader'].map((n) =>
      Number(readFileSync(path.join(ws, `${n}.pid`), 'utf8')),
    )
    expect(pids.every((p) => p > 1)).toBe(true)
    expect(await waitDead(pids)).toEqual([])
  })

  it('a child left running after the script exits is killed and does not hold the run open', async () => {
    const { t, ws } = await task(
      '#!/usr/bin/env bash\nsleep 1000 &\necho $! > "$HW_WORKSPACE/bg.pid"\nexit 0\n',
    )
    const t0 = Date.now()
    const r = await runTaskVerifier(t, ws, { timeoutS: 30, logFile: path.join(ws, 'v.log') })
    expect(r.status).toBe('pass')
    expect(Date.now() - t0).toBeLessThan(10_000)
    const bg = Number(readFileSync(path.join(ws, 'bg.pid'), 'utf8'))
    expect(await waitDead([bg])).toEqual([])
  })
})

describe('runProcessGroup', () => {
  it('reports a missing executable as a spawn error', async () => {
    const r = await runProcessGroup('hw-no-such-binary-xyz', [], { cwd: os.tmpdir(), timeoutMs: 5000 })
    expect(r.exitCode).toBeNull()
    expect(r.timedOut).toBe(false)
    expect(r.spawnError).toMatch(/ENOENT/)
  })
})

describe('parseReward', () => {
  it('accepts numbers in [0, 1] only', () => {
    expect(['1', '0', '0.5\n', ' 1.0 ', '.75', '1e0'].map(parseReward)).toEqual([1, 0, 0.5, 1, 0.75, 1])
    expect(['', '-0.1', '1.01', 'NaN', 'Infinity', 'pass', '0x1', '1,0'].map(parseReward)).toEqual(
      Array(8).fill(null),
    )
  })
})
