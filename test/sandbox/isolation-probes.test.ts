import { execFileSync } from 'node:child_process'
import dgram from 'node:dgram'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sandbox } from '../../src/sandbox/contract.js'
import { BACKENDS } from '../../src/sandbox/select.js'

// Probes of a security review from inside the namespace+uid sandbox (issue 27): nothing shared
// between attempts (System V IPC), and a network whose only way out is the proxy.

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

/** An HTTP server on `host` answering `name`. */
async function serve(
  host: string,
  name: string,
): Promise<{ port: number; hits: () => number; close: () => Promise<void> }> {
  let hits = 0
  const server = http.createServer((_req, res) => {
    hits++
    res.end(name)
  })
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()))
  return {
    port: (server.address() as AddressInfo).port,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** This machine's own first non-loopback IPv4 address, if it has one. */
function interfaceAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  return null
}

const PROBE_JS = `
const fs = require('fs')
const dns = require('dns')
const [proxy, other, ip, iface, udp] = process.argv.slice(2)
const get = (host, port) =>
  fetch('http://' + host + ':' + port + '/', { signal: AbortSignal.timeout(3000) }).then(
    (r) => r.text().then((t) => 'ok:' + t),
    (e) => 'err:' + ((e.cause && e.cause.code) || e.name),
  )
;(async () => {
  const out = { proxy: await get('127.0.0.1', proxy), other: await get('127.0.0.1', other) }
  out.iface = ip ? await get(ip, iface) : 'no interface address'
  const r = new dns.promises.Resolver({ timeout: 1000, tries: 1 })
  r.setServers([(ip || '127.0.0.1') + ':' + udp])
  out.dns = await r.resolve4('hw-probe.example').then(() => 'ok', (e) => 'err:' + e.code)
  out.procnet = fs.readFileSync('/proc/net/tcp', 'utf8')
  console.log(JSON.stringify(out))
})()
`

describe('proxy-only network under namespace+uid', () => {
  it('the proxy answers; another loopback port, the host interface address and DNS are refused; /proc/net shows nothing of the host', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const ip = interfaceAddress()
    const proxy = await serve('127.0.0.1', 'proxy')
    const other = await serve('127.0.0.1', 'other')
    const iface = ip ? await serve(ip, 'iface') : null
    let udpPackets = 0
    const udp = dgram.createSocket('udp4')
    udp.on('message', () => udpPackets++)
    await new Promise<void>((resolve) => udp.bind(0, ip ?? '127.0.0.1', () => resolve()))
    const a = attemptDirs('net')
    writeFileSync(path.join(a.ws, 'probe.js'), PROBE_JS)
    const box = await BACKENDS['namespace+uid'].open({
      writable: [a.ws, a.home],
      readOnly: [],
      loopbackPorts: [proxy.port],
    })
    try {
      expect(box.network).toBe('proxy-only')
      const args = [proxy.port, other.port, ip ?? '', iface?.port ?? 0, udp.address().port].map(String)
      const r = await box.exec(
        {
          command: process.execPath,
          args: ['probe.js', ...args],
          cwd: a.ws,
          env: { PATH: '/usr/bin:/bin', HOME: a.home },
        },
        {
          timeoutMs: 30_000,
          graceMs: 1000,
          stdoutFile: path.join(a.out, 'o.txt'),
          stderrFile: path.join(a.out, 'e.txt'),
        },
      )
      expect(r.exitCode, readFileSync(path.join(a.out, 'e.txt'), 'utf8')).toBe(0)
      const out = JSON.parse(readFileSync(path.join(a.out, 'o.txt'), 'utf8')) as Record<string, string>
      expect(out.proxy).toBe('ok:proxy')
      expect(out.other).toBe('err:ECONNREFUSED')
      if (ip) expect(out.iface).toMatch(/^err:(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|TimeoutError)$/)
      expect(out.dns).toMatch(/^err:/)
      // Only the forwarder's own listener is in this namespace's table; no host socket is.
      const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')} `
      expect(out.procnet).toContain(hex(proxy.port))
      expect(out.procnet).not.toContain(hex(other.port))
      if (iface) expect(out.procnet).not.toContain(hex(iface.port))
      expect(other.hits()).toBe(0)
      expect(iface?.hits() ?? 0).toBe(0)
      expect(udpPackets).toBe(0)
      expect(proxy.hits()).toBe(1)
    } finally {
      await box.close()
      udp.close()
      await Promise.all([proxy.close(), other.close(), iface?.close()])
    }
  }, 60_000)
})

describe('a network of its own even with no port to forward', () => {
  it('loopbackPorts [] is a closed network (only lo, no socket of the host), never the host’s', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    const other = await serve('127.0.0.1', 'other')
    const a = attemptDirs('closed')
    const box = await BACKENDS['namespace+uid'].open({
      writable: [a.ws, a.home],
      readOnly: [],
      loopbackPorts: [],
    })
    try {
      expect(box.network).toBe('proxy-only')
      const r = await sh(
        box,
        a.ws,
        a.out,
        [
          'ls /sys/class/net 2>/dev/null || ip -o link | cut -d: -f2 | tr -d " "',
          'tail -n +2 /proc/net/tcp | wc -l',
          `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${other.port}' 2>/dev/null && echo reached || echo refused`,
          // The probe works: the same connection to a port of this namespace succeeds.
          `bash -c 'exec 3<>/dev/tcp/127.0.0.1/9' 2>&1 | grep -q "Connection refused" && echo probe-works`,
        ].join('\n'),
      )
      expect(r.stdout.trim().split('\n')).toEqual(['lo', '0', 'refused', 'probe-works'])
      expect(other.hits()).toBe(0)
    } finally {
      await box.close()
      await other.close()
    }
  }, 60_000)
})

describe('only what is needed is readable under namespace+uid', () => {
  it('sentinels under /opt, /var, /run and /etc, in a self-hosted runner work folder and in a checkout’s .git/config are not readable; the system still runs', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    if (process.getuid?.() !== 0)
      return ctx.skip('planting sentinels under /opt, /var, /run and /etc needs root here')
    const tag = `hw-probe-${process.pid}-${Date.now()}`
    const opt = path.join('/opt', tag)
    // A self-hosted runner's layout: the runner under /opt, its work folder with a checkout and the
    // checkout's credentials file, its diagnostic logs, everything world-readable.
    const runner = path.join(opt, 'actions-runner')
    const work = path.join(runner, '_work')
    const checkout = path.join(work, 'repo', 'repo')
    const planted = [opt, path.join('/var/lib', tag), path.join('/run', tag)]
    const etcFile = path.join('/etc', `${tag}.conf`)
    mkdirSync(path.join(checkout, '.git'), { recursive: true })
    mkdirSync(path.join(work, '_temp'), { recursive: true })
    mkdirSync(path.join(runner, '_diag'), { recursive: true })
    mkdirSync(planted[1]!, { recursive: true })
    mkdirSync(planted[2]!, { recursive: true })
    const files = {
      opt: path.join(opt, 'token.txt'),
      gitConfig: path.join(checkout, '.git', 'config'),
      credentials: path.join(work, '_temp', 'git-credentials-0b1c.config'),
      diag: path.join(runner, '_diag', 'Worker_20261205-000000-utc.log'),
      runnerCredentials: path.join(runner, '.credentials'),
      varLib: path.join(planted[1]!, 'state.db'),
      run: path.join(planted[2]!, 'secret'),
      etc: etcFile,
    }
    for (const [k, f] of Object.entries(files)) writeFileSync(f, `sentinel-${k}-${tag}\n`, { mode: 0o644 })
    writeFileSync(path.join(checkout, 'README.md'), 'the checkout itself\n', { mode: 0o644 })
    for (const d of planted) execFileSync('chmod', ['-R', 'a+rX', d])
    try {
      const a = attemptDirs('allowlist')
      // The checkout is declared read_only (as a task may), with its .git masked as the run does.
      const box = await BACKENDS['namespace+uid'].open({
        writable: [a.ws, a.home],
        readOnly: [checkout],
        masked: [path.join(checkout, '.git')],
      })
      const r = await sh(
        box,
        a.ws,
        a.out,
        [
          ...Object.values(files).map((f) => `cat ${f} 2>/dev/null || echo unreadable`),
          `grep -rl sentinel- /opt /var /run /etc /srv /mnt /home /root 2>/dev/null | wc -l`,
          `cat ${checkout}/README.md`,
          'ls /opt',
          'echo "var=$(ls -A /var | tr "\\n" " ")run=$(ls -A /run | wc -l)"',
          'ls /etc | grep -c -E "^(shadow|gitconfig|npmrc|ssh|sudoers)$"',
          'cat /etc/hostname >/dev/null && getent passwd root | cut -d: -f1',
          'ls /proc | grep -c "^[0-9]" | awk "{ print (\\$1 < 10) ? \\"own pids\\" : \\"host pids\\" }"',
          'ls /dev | tr "\\n" " "; echo',
          `${process.execPath} -e "console.log(require('node:crypto').randomBytes(2).length + require('node:os').userInfo().username.length > 0)"`,
        ].join('\n'),
      )
      await box.close()
      expect(r.exitCode, readFileSync(path.join(a.out, 'e.txt'), 'utf8')).toBe(0)
      const lines = r.stdout.trim().split('\n')
      expect(lines.slice(0, 8)).toEqual(Array(8).fill('unreadable'))
      expect(lines.slice(8, 11)).toEqual(['0', 'the checkout itself', tag])
      // /var holds only its private tmp; /run is empty.
      expect(lines[11]).toBe('var=tmp run=0')
      expect(lines[12]).toBe('0')
      expect(lines[13]).toBe('root')
      expect(lines[14]).toBe('own pids')
      expect((lines[15] ?? '').trim().split(' ').sort()).toEqual(
        expect.arrayContaining([
          'fd',
          'full',
          'null',
          'random',
          'shm',
          'stderr',
          'stdin',
          'stdout',
          'urandom',
          'zero',
        ]),
      )
      expect((lines[15] ?? '').split(' ')).not.toContain('vda')
      expect(lines[16]).toBe('true')
    } finally {
      for (const d of planted) rmSync(d, { recursive: true, force: true })
      rmSync(etcFile, { force: true })
    }
  }, 60_000)

  it('a job beside the harness (an install) may name package-manager settings under /etc; nothing else is added', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    if (process.getuid?.() !== 0) return ctx.skip('planting a file under /etc needs root here')
    const name = `hw-probe-${process.pid}-${Date.now()}.conf`
    writeFileSync(path.join('/etc', name), 'registry settings\n', { mode: 0o644 })
    try {
      const a = attemptDirs('host-config')
      const box = await BACKENDS['namespace+uid'].open({
        writable: [a.ws, a.home],
        readOnly: [],
        hostConfig: [name, '../etc/shadow', 'shadow/../../root'],
      })
      const r = await sh(box, a.ws, a.out, `cat /etc/${name}; ls /etc | grep -c -E "^(shadow|root)$"`)
      await box.close()
      expect(r.stdout.trim().split('\n')).toEqual(['registry settings', '0'])
    } finally {
      rmSync(path.join('/etc', name), { force: true })
    }
  }, 60_000)

  it('the configuration folders inside /usr (npm’s global npmrc, git’s system gitconfig under /usr/local) are hidden from an attempt, kept for an install', async (ctx) => {
    if (!nsOk) return ctx.skip(`namespace+uid unavailable: ${reason}`)
    if (process.getuid?.() !== 0) return ctx.skip('planting a file under /usr/local/etc needs root here')
    const dir = '/usr/local/etc'
    const made = !existsSync(dir)
    const file = path.join(dir, `hw-probe-${process.pid}-${Date.now()}.npmrc`)
    mkdirSync(dir, { recursive: true })
    writeFileSync(file, '//registry.example/:_authToken=sentinel\n', { mode: 0o644 })
    try {
      const seen = async (hostConfig: string[] | undefined) => {
        const a = attemptDirs('usr-config')
        const box = await BACKENDS['namespace+uid'].open({
          writable: [a.ws, a.home],
          readOnly: [],
          hostConfig,
        })
        const r = await sh(box, a.ws, a.out, `cat ${file} 2>/dev/null || echo unreadable; ls /usr/bin/env`)
        await box.close()
        return r.stdout.trim().split('\n')
      }
      // An attempt: the folder is an empty one; the rest of /usr is there.
      expect(await seen(undefined)).toEqual(['unreadable', '/usr/bin/env'])
      // An install that names host configuration still reads it.
      expect(await seen(['npmrc'])).toEqual(['//registry.example/:_authToken=sentinel', '/usr/bin/env'])
    } finally {
      rmSync(made ? dir : file, { recursive: true, force: true })
    }
  }, 60_000)
})
