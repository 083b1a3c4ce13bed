import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxSetting } from '../../src/manifest/schema.js'
import type { Isolation } from '../../src/records/isolation.js'
import { runCanary } from '../../src/sandbox/canary.js'
import type { Sandbox, SandboxBackend } from '../../src/sandbox/contract.js'
import { BACKENDS, decide, describeSandbox, type HostIsolation } from '../../src/sandbox/select.js'
import { isHwError } from '../../src/util/errors.js'

const setting = (over: Partial<SandboxSetting> = {}): SandboxSetting => ({
  backend: 'auto',
  allow_unisolated: false,
  read_only: [],
  ...over,
})

/** A backend table where namespace+uid probes as told; env-only and none are the real ones. */
function table(nsOk: boolean): Record<HostIsolation, SandboxBackend> {
  return {
    ...BACKENDS,
    'namespace+uid': {
      ...BACKENDS['namespace+uid'],
      probe: async () => ({ ok: nsOk, reason: nsOk ? null : 'needs root or passwordless sudo (sudo -n)' }),
    },
  }
}
const canaryAs =
  (results: Partial<Record<Isolation, 'passed' | 'exposed'>>) => async (b: SandboxBackend) => ({
    result: results[b.kind] ?? 'passed',
    seen: results[b.kind] === 'exposed' ? ["the action's environment (/proc/<pid>/environ)"] : [],
    ms: 1,
  })

describe('choosing the backend (fail closed unless opted in)', () => {
  it('auto without an isolating backend stops with sandbox_unavailable, naming why', async () => {
    const err = await decide(setting(), '/tmp', table(false), canaryAs({})).catch((e) => e)
    expect(isHwError(err) && err.code).toBe('sandbox_unavailable')
    expect(err.format()).toContain('needs root or passwordless sudo')
    expect(err.format()).toContain('allow_unisolated')
  })

  it('auto with allow_unisolated falls back to env-only and says why', async () => {
    const c = await decide(
      setting({ allow_unisolated: true }),
      '/tmp',
      table(false),
      canaryAs({ 'env-only': 'exposed' }),
    )
    expect(c.backend.kind).toBe('env-only')
    expect(c.canary).toBe('exposed')
    expect(c.notes.join('\n')).toMatch(/namespace\+uid is not available: needs root/)
    expect(c.notes.join('\n')).toContain("Harnesses ran as the action's own user")
  })

  it('a canary seen through an isolating backend fails closed, or downgrades when opted in', async () => {
    const seen = canaryAs({ 'namespace+uid': 'exposed', 'env-only': 'exposed' })
    const err = await decide(setting({ backend: 'namespace+uid' }), '/tmp', table(true), seen).catch((e) => e)
    expect(isHwError(err) && err.code).toBe('sandbox_unavailable')
    expect(err.format()).toContain('failed its canary self-test')
    const c = await decide(
      setting({ backend: 'namespace+uid', allow_unisolated: true }),
      '/tmp',
      table(true),
      seen,
    )
    expect(c.backend.kind).toBe('env-only')
    expect(c.notes[0]).toContain('failed its canary self-test')
  })

  it('none skips the canary; an isolating backend that passes is taken', async () => {
    const none = await decide(
      setting({ backend: 'none', allow_unisolated: true }),
      '/tmp',
      table(true),
      canaryAs({}),
    )
    expect([none.backend.kind, none.canary]).toEqual(['none', 'skipped'])
    const ns = await decide(setting(), '/tmp', table(true), canaryAs({}))
    expect([ns.backend.kind, ns.canary, ns.notes]).toEqual(['namespace+uid', 'passed', []])
  })

  it('validate says whether a run here would stop', async () => {
    expect(await describeSandbox(setting(), table(false))).toMatchObject({ ok: false })
    expect((await describeSandbox(setting({ allow_unisolated: true }), table(false))).line).toMatch(
      /env-only here/,
    )
    expect(await describeSandbox(setting(), table(true))).toMatchObject({ ok: true })
  })
})

// The real backends on this machine: namespace+uid runs only where root or passwordless sudo exists.
let nsOk = false
let reason = ''
let dir = ''
beforeAll(async () => {
  const p = await BACKENDS['namespace+uid'].probe()
  nsOk = p.ok
  reason = p.reason ?? ''
  dir = mkdtempSync(path.join(os.tmpdir(), 'hw-sbx-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function attemptDirs(name: string): { ws: string; home: string; out: string } {
  const ws = path.join(dir, name, 'w')
  const home = path.join(dir, name, 'h')
  mkdirSync(ws, { recursive: true })
  mkdirSync(home, { recursive: true })
  return { ws, home, out: path.join(dir, name) }
}

async function sh(box: Sandbox, cwd: string, out: string, script: string, timeoutMs = 20_000) {
  const r = await box.exec(
    { command: 'sh', args: ['-c', script], cwd, env: { PATH: '/usr/bin:/bin', HOME: cwd } },
    { timeoutMs, graceMs: 1000, stdoutFile: path.join(out, 'o.txt'), stderrFile: path.join(out, 'e.txt') },
  )
  return { ...r, stdout: readFileSync(path.join(out, 'o.txt'), 'utf8') }
}

describe('namespace+uid on this machine', () => {
  it('runs as another user in its own PID namespace, with /tmp and homes hidden and a read-only system', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const a = attemptDirs('a')
    const secret = path.join(dir, 'host-secret.txt')
    writeFileSync(secret, 'host file\n', { mode: 0o644 })
    const tool = path.join(dir, 'tool')
    mkdirSync(tool)
    writeFileSync(path.join(tool, 'run.sh'), 'echo tool-ran\n')
    const box = await BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [tool] })
    const r = await sh(
      box,
      a.ws,
      a.out,
      [
        'id -u',
        'ls /proc | grep -c "^[0-9]"',
        `cat ${secret} 2>&1 | head -1`,
        `sh ${tool}/run.sh`,
        `touch ${tool}/x 2>&1 | grep -c "Read-only"`,
        'touch /usr/hw-x 2>&1 | grep -c "Read-only"',
        'echo made > made.txt && echo wrote',
        'cat /proc/1/environ 2>&1 | grep -c "Permission denied"',
      ].join('\n'),
    )
    await box.close()
    const [uid, procs, secretLine, toolRan, toolRo, usrRo, wrote, pid1] = r.stdout.trim().split('\n')
    expect(r.exitCode).toBe(0)
    expect(Number(uid)).not.toBe(process.getuid?.())
    expect(Number(procs)).toBeLessThan(10)
    expect(secretLine).toMatch(/No such file/)
    expect([toolRan, toolRo, usrRo, wrote, pid1]).toEqual(['tool-ran', '1', '1', 'wrote', '1'])
    // Handed back to the action's user on close.
    expect(statSync(path.join(a.ws, 'made.txt')).uid).toBe(process.getuid?.())
  }, 60_000)

  it('two sandboxes open at once run as different users and cannot read each other', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const a = attemptDirs('p')
    const b = attemptDirs('q')
    const [boxA, boxB] = await Promise.all([
      BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [] }),
      BACKENDS['namespace+uid'].open({ writable: [b.ws, b.home], readOnly: [] }),
    ])
    try {
      writeFileSync(path.join(b.ws, 'b-only.txt'), 'b\n')
      const [ra] = await Promise.all([
        sh(boxA, a.ws, a.out, `id -u; ls ${b.ws} 2>&1 | head -1`),
        sh(boxB, b.ws, b.out, 'sleep 2; id -u'),
      ])
      const rb = readFileSync(path.join(b.out, 'o.txt'), 'utf8').trim()
      const [uidA, listing] = ra.stdout.trim().split('\n')
      expect(uidA).not.toBe(rb)
      expect(listing).not.toContain('b-only.txt')
    } finally {
      await Promise.all([boxA.close(), boxB.close()])
    }
  }, 60_000)

  it('passes stdin through to the harness (prompts given on stdin)', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const a = attemptDirs('in')
    const box = await BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [] })
    const r = await box.exec(
      {
        command: 'sh',
        args: ['-c', 'wc -c'],
        cwd: a.ws,
        env: { PATH: '/usr/bin:/bin' },
        stdin: 'fix the bug\n',
      },
      {
        timeoutMs: 20_000,
        graceMs: 1000,
        stdoutFile: path.join(a.out, 'o.txt'),
        stderrFile: path.join(a.out, 'e.txt'),
      },
    )
    await box.close()
    expect(r.exitCode).toBe(0)
    expect(readFileSync(path.join(a.out, 'o.txt'), 'utf8').trim()).toBe('12')
  }, 60_000)

  it('the inner timeout stops a harness that ignores SIGTERM and reports a timeout', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const a = attemptDirs('t')
    const box = await BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [] })
    const r = await sh(box, a.ws, a.out, "trap '' TERM; setsid sleep 300 & sleep 300", 1500)
    await box.close()
    expect(r).toMatchObject({ timedOut: true, exitCode: null, aborted: false })
  }, 60_000)

  it('the canary self-test passes through namespace+uid and is exposed through env-only', async (ctx) => {
    const env = await runCanary(BACKENDS['env-only'], dir)
    expect(env.result).toBe('exposed')
    expect(env.seen).toContain("the action's environment (/proc/<pid>/environ)")
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const ns = await runCanary(BACKENDS['namespace+uid'], dir)
    expect(ns).toMatchObject({ result: 'passed', seen: [] })
  }, 60_000)
})
