import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runHarnessProcess } from '../../src/process/exec.js'
import type { AttemptRecord, LegRecord } from '../../src/records/attempt.js'
import { harnessEnv } from '../../src/run/env.js'
import { formatAttemptLine, formatLegSummary } from '../../src/run/progress.js'
import { resumeState } from '../../src/run/resume.js'
import { emptyTelemetry } from '../../src/run/telemetry.js'
import {
  buildTemplate,
  collectDeliverable,
  commitBaseline,
  copyTemplate,
  makeAttemptDirs,
} from '../../src/run/workspace.js'

const made: string[] = []
const tmp = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), 'hw-unit-'))
  made.push(d)
  return d
}
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

describe('harnessEnv', () => {
  const dirs = {
    home: '/r/h/abc',
    tmp: '/r/h/abc/tmp',
    xdgConfig: '/r/h/abc/.config',
    xdgData: '/r/h/abc/.local/share',
    xdgCache: '/r/h/abc/.cache',
    xdgState: '/r/h/abc/.local/state',
  }
  it('builds an allowlist and never lets anything replace the isolated home', () => {
    const { env, missing } = harnessEnv({
      dirs,
      runnerEnv: { PATH: '/bin', HOME: '/home/me', SECRET: 's', PASSED: 'p' },
      invocationEnv: { HW_MODEL: 'm', HOME: '/elsewhere' },
      configEnv: { CELL: 'c', XDG_CONFIG_HOME: '/home/me/.config' },
      passEnv: ['PASSED', 'ABSENT'],
    })
    expect(env).toEqual({
      PATH: '/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'dumb',
      HW_MODEL: 'm',
      CELL: 'c',
      PASSED: 'p',
      HOME: '/r/h/abc',
      XDG_CONFIG_HOME: '/r/h/abc/.config',
      XDG_DATA_HOME: '/r/h/abc/.local/share',
      XDG_CACHE_HOME: '/r/h/abc/.cache',
      XDG_STATE_HOME: '/r/h/abc/.local/state',
      TMPDIR: '/r/h/abc/tmp',
    })
    expect(missing).toEqual(['ABSENT'])
  })
})

describe('workspace', () => {
  it('uses same-length paths and a reproducible baseline commit', async () => {
    const root = tmp()
    const a = await makeAttemptDirs(root)
    const b = await makeAttemptDirs(root)
    expect(a.workspace).not.toBe(b.workspace)
    expect(a.workspace.length).toBe(b.workspace.length)
    expect(a.home.length).toBe(b.home.length)
    for (const d of [a, b]) {
      await writeFile(path.join(d.workspace, 'x.txt'), 'x\n')
      await mkdir(path.join(d.workspace, 'sub'))
      await writeFile(path.join(d.workspace, 'sub', 'y.txt'), 'y\n')
    }
    const ca = await commitBaseline(a.workspace)
    const cb = await commitBaseline(b.workspace)
    expect(ca).toMatch(/^[0-9a-f]{40}$/)
    expect(ca).toBe(cb)
  })

  it('takes everything the harness changed: edits, new and ignored files, deletions and commits', async () => {
    const root = tmp()
    const d = await makeAttemptDirs(root)
    await writeFile(path.join(d.workspace, 'a.txt'), 'a\n')
    await writeFile(path.join(d.workspace, 'gone.txt'), 'bye\n')
    await writeFile(path.join(d.workspace, '.gitignore'), '*.log\n')
    const base = await commitBaseline(d.workspace)
    expect((await collectDeliverable(d.workspace, base)).bytes).toBe(0)
    await writeFile(path.join(d.workspace, 'a.txt'), 'a2\n')
    await writeFile(path.join(d.workspace, 'new.txt'), 'new\n')
    await writeFile(path.join(d.workspace, 'debug.log'), 'ignored but written\n')
    await writeFile(path.join(d.workspace, 'gone.txt'), '')
    execFileSync('rm', [path.join(d.workspace, 'gone.txt')])
    // A harness that commits its own work (the repo config names a committer; HOME is empty).
    await writeFile(path.join(d.workspace, 'committed.txt'), 'c\n')
    execFileSync('sh', ['-c', 'git add committed.txt && git commit -qm work'], {
      cwd: d.workspace,
      env: { PATH: process.env.PATH ?? '', HOME: d.home, GIT_CONFIG_NOSYSTEM: '1' },
    })
    const del = await collectDeliverable(d.workspace, base)
    expect(del.error).toBeNull()
    expect(del.files_changed).toBe(5)
    for (const f of ['a.txt', 'new.txt', 'debug.log', 'gone.txt', 'committed.txt'])
      expect(del.patch).toContain(`b/${f}`)
    expect(del.sha256).toMatch(/^[0-9a-f]{64}$/)
    // The patch applies to the baseline and reproduces the workspace.
    const check = await makeAttemptDirs(root)
    execFileSync('sh', ['-c', `git clone -q ${d.workspace} . && git checkout -q ${base}`], {
      cwd: check.workspace,
    })
    const patchFile = path.join(root, 'p.diff')
    writeFileSync(patchFile, del.patch)
    execFileSync('git', ['apply', patchFile], { cwd: check.workspace })
    expect(readFileSync(path.join(check.workspace, 'debug.log'), 'utf8')).toBe('ignored but written\n')
  })

  it('copies a committed template per attempt and still sees a same-size edit made at once', async () => {
    const root = tmp()
    const src = path.join(root, 'env')
    await mkdir(src)
    await writeFile(path.join(src, 'add.js'), 'module.exports = (a, b) => a - b\n')
    const tpl = path.join(root, 'tpl')
    const base = await buildTemplate(src, tpl)
    for (let i = 0; i < 2; i++) {
      const d = await makeAttemptDirs(root)
      await copyTemplate(tpl, d.workspace)
      expect(statSync(path.join(d.workspace, 'add.js')).mtime.toISOString()).toBe('2000-01-01T00:00:00.000Z')
      expect((await collectDeliverable(d.workspace, base)).bytes).toBe(0)
      await writeFile(path.join(d.workspace, 'add.js'), 'module.exports = (a, b) => a + b\n')
      const del = await collectDeliverable(d.workspace, base)
      expect(del.files_changed).toBe(1)
      expect(del.patch).toContain('+module.exports = (a, b) => a + b')
    }
    // The baseline is the same commit a fresh copy-and-commit gives.
    const fresh = await makeAttemptDirs(root)
    await copyTemplate(src, fresh.workspace)
    execFileSync('sh', ['-c', 'find . -exec touch -h -d 2000-01-01T00:00:00Z {} +'], { cwd: fresh.workspace })
    expect(await commitBaseline(fresh.workspace)).toBe(base)
  })

  it('reports an unreadable repo as an empty deliverable with the reason', async () => {
    const d = await makeAttemptDirs(tmp())
    const del = await collectDeliverable(d.workspace, 'f'.repeat(40))
    expect(del.bytes).toBe(0)
    expect(del.error).toMatch(/^git diff failed/)
  })
})

describe('runHarnessProcess', () => {
  it('writes stdin then closes it, and captures stdout and stderr to files', async () => {
    const dir = tmp()
    const r = await runHarnessProcess(
      {
        command: 'sh',
        args: ['-c', 'cat; echo err >&2; exit 3'],
        cwd: dir,
        env: { PATH: '/usr/bin:/bin' },
        stdin: 'hi\n',
      },
      { timeoutMs: 5000, graceMs: 100, stdoutFile: path.join(dir, 'o'), stderrFile: path.join(dir, 'e') },
    )
    expect(r).toMatchObject({ exitCode: 3, signal: null, timedOut: false, aborted: false, spawnError: null })
    expect(readFileSync(path.join(dir, 'o'), 'utf8')).toBe('hi\n')
    expect(readFileSync(path.join(dir, 'e'), 'utf8')).toBe('err\n')
  })

  it('reports a program that cannot start', async () => {
    const dir = tmp()
    const r = await runHarnessProcess(
      { command: '/no/such/program', args: [], cwd: dir, env: {} },
      { timeoutMs: 5000, graceMs: 100, stdoutFile: path.join(dir, 'o'), stderrFile: path.join(dir, 'e') },
    )
    expect(r.spawnError).toBe('ENOENT')
    expect(r.exitCode).toBeNull()
  })

  it('ends the process tree on abort and reports it', async () => {
    const dir = tmp()
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 200)
    const r = await runHarnessProcess(
      { command: 'sh', args: ['-c', 'sleep 30 & wait'], cwd: dir, env: { PATH: '/usr/bin:/bin' } },
      {
        timeoutMs: 30_000,
        graceMs: 100,
        stdoutFile: path.join(dir, 'o'),
        stderrFile: path.join(dir, 'e'),
        signal: ac.signal,
      },
    )
    expect(r.aborted).toBe(true)
    expect(r.timedOut).toBe(false)
    expect(r.durationMs).toBeLessThan(5000)
  })
})

function rec(over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    schema_version: 1,
    experiment_id: 'e',
    run_id: 'r',
    round: 0,
    leg: 'pi-s0',
    cell_id: 'pi',
    harness: 'pi',
    harness_version: '0.73.1',
    config_hash: 'h',
    model: 'm',
    instance_id: 'js-fix-slugify',
    trial: 0,
    attempt: 1,
    final: true,
    quarantined: false,
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:00:14.200Z',
    phases_ms: { setup: 1, harness: 2, verifier: 3 },
    exit: { class: 'clean', code: 0, signal: null, reason: null },
    timed_out: false,
    outcome: 'resolved',
    verifier: { status: 'pass', exit_code: 0, reward: null, duration_ms: 3 },
    deliverable: { bytes: 1, sha256: null, files_changed: 1 },
    telemetry: {
      ...emptyTelemetry('ledger', 'unknown', 'x'),
      coverage: 'complete',
      reason: null,
      rows: 6,
      proxy_requests: 6,
      spend_usd: 0.0031,
    },
    self_report: null,
    final_message: null,
    logs_dir: 'logs/js-fix-slugify/0-1',
    ...over,
  }
}

describe('progress lines', () => {
  it('formats one attempt like the documented example', () => {
    expect(formatAttemptLine(12, 30, rec())).toBe(
      '[12/30] pi js-fix-slugify trial 0 attempt 1: resolved (clean) 14.2s, 6 requests, $0.0031',
    )
  })

  it('says unknown instead of zero when telemetry is not known, and names retries', () => {
    const r = rec({
      outcome: 'infra_error',
      exit: { class: 'infra', code: null, signal: null, reason: 'proxy down' },
      telemetry: emptyTelemetry('ledger', 'missing', 'capture failed'),
    })
    expect(formatAttemptLine(1, 2, r, true)).toBe(
      '[1/2] pi js-fix-slugify trial 0 attempt 1: infra_error (infra: proxy down) 14.2s, requests unknown, ' +
        'spend unknown, telemetry missing → retrying',
    )
  })

  it('summarises a leg over its final attempts, with lower bounds when telemetry is incomplete', () => {
    const leg = {
      leg: 'pi-s0',
      status: 'complete',
      error: null,
      attempts: 3,
      planned_instances: ['a', 'b'],
      started_at: '2026-01-01T00:00:00.000Z',
      ended_at: '2026-01-01T00:01:00.000Z',
    } as unknown as LegRecord
    const finals = [
      rec(),
      rec({ outcome: 'unresolved', telemetry: emptyTelemetry('ledger', 'missing', 'x') }),
    ]
    expect(formatLegSummary(leg, finals)).toBe(
      'leg pi-s0 complete: 1/2 resolved, 1 unresolved, 0 infra_error, 0 ungraded; 3 attempts over 2 instances; ' +
        '60.0s; ≥6 requests, ≥$0.0031 (telemetry complete for 1/2)',
    )
    // A resume that ran nothing: the recorded time, never the time since the leg first started.
    expect(formatLegSummary(leg, finals, { attempts: 0, seconds: 0.4, resumed: true })).toBe(
      'leg pi-s0 already complete (nothing to run): 1/2 resolved, 1 unresolved, 0 infra_error, 0 ungraded; ' +
        '3 attempts over 2 instances; 60.0s recorded; ≥6 requests, ≥$0.0031 (telemetry complete for 1/2)',
    )
    // A resume that ran some attempts: this session's wall time, labelled.
    expect(formatLegSummary(leg, finals, { attempts: 1, seconds: 12.34, resumed: true })).toContain(
      'leg pi-s0 complete: 1/2 resolved, 1 unresolved, 0 infra_error, 0 ungraded; 3 attempts over 2 instances; ' +
        '12.3s this session (1 attempt); ',
    )
    // A first run: the leg's own time.
    expect(formatLegSummary(leg, finals, { attempts: 3, seconds: 59.9, resumed: false })).toContain(
      '; 60.0s; ',
    )
  })
})

describe('resumeState', () => {
  const id = { experiment_id: 'e', leg: 'pi-s0', cell_id: 'pi', config_hash: 'h', round: 0 }
  it('marks pairs done by their final attempt and continues numbering after the last', () => {
    const s = resumeState(
      [
        rec({ instance_id: 'a', attempt: 1, final: false }),
        rec({ instance_id: 'a', attempt: 2, final: true }),
        rec({ instance_id: 'b', attempt: 1, final: false }),
      ],
      id,
      'attempts.jsonl',
    )
    expect([...s.done.keys()]).toEqual(['a\u00000'])
    expect(s.lastAttempt.get('b\u00000')).toBe(1)
    expect(s.recorded.size).toBe(3)
  })

  it('refuses records of another leg or config', () => {
    expect(() => resumeState([rec({ config_hash: 'other' })], id, 'f')).toThrow(/another config hash/)
    expect(() => resumeState([rec({ leg: 'oc-s0' })], id, 'f')).toThrow(/another leg/)
  })
})
