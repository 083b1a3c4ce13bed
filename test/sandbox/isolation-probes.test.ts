import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/sandbox/contract.js'
import { BACKENDS } from '../../src/sandbox/select.js'

// Probes of a security review from inside the namespace+uid sandbox (issue 27): nothing shared
// between attempts (System V IPC).

let nsOk = false
let reason = ''
let dir = ''
beforeAll(async () => {
  const p = await BACKENDS['namespace+uid'].probe()
  nsOk = p.ok
  reason = p.reason ?? ''
  dir = mkdtempSync(path.join(os.tmpdir(), 'hw-sbx-probe-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function attemptDirs(name: string): { ws: string; home: string; out: string } {
  const ws = path.join(dir, name, 'w')
  const home = path.join(dir, name, 'h')
  mkdirSync(ws, { recursive: true })
  mkdirSync(home, { recursive: true })
  return { ws, home, out: path.join(dir, name) }
}

async function sh(box: Sandbox, cwd: string, out: string, script: string) {
  const r = await box.exec(
    { command: 'sh', args: ['-c', script], cwd, env: { PATH: '/usr/bin:/bin', HOME: cwd } },
    {
      timeoutMs: 20_000,
      graceMs: 1000,
      stdoutFile: path.join(out, 'o.txt'),
      stderrFile: path.join(out, 'e.txt'),
    },
  )
  return { ...r, stdout: readFileSync(path.join(out, 'o.txt'), 'utf8') }
}

/** System V IPC objects on the host (this process's IPC namespace) owned or created by `uid`. */
function hostIpcOf(uid: number): string[] {
  const out: string[] = []
  for (const kind of ['msg', 'shm', 'sem']) {
    const [head, ...rows] = readFileSync(`/proc/sysvipc/${kind}`, 'utf8').trim().split('\n')
    const cols = (head ?? '').trim().split(/\s+/)
    const [u, c] = [cols.indexOf('uid'), cols.indexOf('cuid')]
    for (const row of rows) {
      const f = row.trim().split(/\s+/)
      if (Number(f[u]) === uid || Number(f[c]) === uid) out.push(`${kind} ${f[1]}`)
    }
  }
  return out
}

describe('nothing shared between attempts: System V IPC', () => {
  it('cell a leaves a message queue and a shared-memory segment; cell b finds none; the host has none after', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const a = attemptDirs('ipc-a')
    const boxA = await BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [] })
    const ra = await sh(
      boxA,
      a.ws,
      a.out,
      'id -u; ipcmk -Q >/dev/null && ipcmk -M 4096 >/dev/null && ipcs -q -m | grep -c "^0x"',
    )
    await boxA.close()
    const [uidA, madeA] = ra.stdout.trim().split('\n')
    expect(ra.exitCode).toBe(0)
    expect(Number(madeA)).toBe(2)
    expect(hostIpcOf(Number(uidA))).toEqual([])

    const b = attemptDirs('ipc-b')
    const boxB = await BACKENDS['namespace+uid'].open({ writable: [b.ws, b.home], readOnly: [] })
    const rb = await sh(boxB, b.ws, b.out, 'id -u; ipcs -q -m -s | grep -c "^0x" || true')
    await boxB.close()
    const [uidB, seenB] = rb.stdout.trim().split('\n')
    expect(Number(seenB)).toBe(0)
    expect(hostIpcOf(Number(uidB))).toEqual([])
  }, 60_000)

  it('objects a slot user left on the host (a run without a private IPC namespace) are removed at close', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    if (process.getuid?.() !== 0) return ctx.skip('planting an object as the slot user needs root here')
    const a = attemptDirs('ipc-sweep')
    const box = await BACKENDS['namespace+uid'].open({ writable: [a.ws, a.home], readOnly: [] })
    const r = await sh(box, a.ws, a.out, 'id -u')
    const uid = Number(r.stdout.trim())
    // The slot user makes a queue and a segment in the host's IPC namespace, as an older run would.
    execFileSync('setpriv', [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      'sh',
      '-c',
      'ipcmk -Q && ipcmk -M 4096',
    ])
    expect(hostIpcOf(uid)).toHaveLength(2)
    await box.close()
    expect(hostIpcOf(uid)).toEqual([])
  }, 60_000)
})
