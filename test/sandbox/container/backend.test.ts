import { execFileSync, spawn } from 'node:child_process'
import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { commandAdapter } from '../../../src/harnesses/command.js'
import { ContainerFault, containerBackend, ID_BASE } from '../../../src/sandbox/container/backend.js'
import { LABEL, OWNER_LABEL, removeLeftovers } from '../../../src/sandbox/container/cleanup.js'
import { cli } from '../../../src/sandbox/container/runtime.js'
import type { ExecResult, Sandbox } from '../../../src/sandbox/contract.js'
import { noneBackend } from '../../../src/sandbox/none.js'
import { makeCtx } from '../../harnesses/helpers.js'
import { containerEnv, testBackend, testSetting } from '../../support/container.js'

const env = await containerEnv()
if (env.reason) console.warn(`container backend tests skipped: ${env.reason}`)
const rt = env.runtime

const dir = mkdtempSync(path.join(os.tmpdir(), 'hw-ctr-test-'))
let n = 0
function folders(): { ws: string; home: string; out: string; err: string } {
  const base = path.join(dir, String(++n))
  const ws = path.join(base, 'w')
  const home = path.join(base, 'h')
  mkdirSync(ws, { recursive: true })
  mkdirSync(home, { recursive: true })
  return { ws, home, out: path.join(base, 'out'), err: path.join(base, 'err') }
}

async function run(
  box: Sandbox,
  f: ReturnType<typeof folders>,
  command: string,
  args: string[],
  timeoutMs = 30_000,
): Promise<ExecResult & { stdout: string; stderr: string }> {
  const r = await box.exec(
    { command, args, cwd: f.ws, env: { HOME: f.home, PATH: '/usr/bin:/bin' } },
    { timeoutMs, graceMs: 1000, stdoutFile: f.out, stderrFile: f.err },
  )
  return { ...r, stdout: readFileSync(f.out, 'utf8'), stderr: readFileSync(f.err, 'utf8') }
}

async function containersNamed(prefix: string): Promise<string[]> {
  if (!rt) return []
  const r = await cli(rt.bin, ['ps', '-a', '--format', '{{.Names}}'], { env: rt.env })
  return r.stdout.split('\n').filter((l) => l.startsWith(prefix))
}

function serve(body: string): Promise<http.Server> {
  const s = http.createServer((_req, res) => res.end(body))
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)))
}
const portOf = (s: http.Server) => (s.address() as AddressInfo).port

function ownAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  }
  return null
}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe.skipIf(rt === null)('container backend (real engine)', () => {
  const backend = testBackend()

  it('runs as container root mapped to an unprivileged host id, with no capabilities, in the workdir', async () => {
    const f = folders()
    const box = await backend.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    expect(box.kind).toBe('container')
    expect(box.provenance?.image_id).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(box.provenance?.network).toBe('proxy-only')
    try {
      const r = await run(box, f, 'sh', [
        '-c',
        'id -u; pwd; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; cat /proc/self/uid_map; echo hi > made.txt',
      ])
      expect(r.exitCode).toBe(0)
      const lines = r.stdout.trim().split('\n')
      expect(lines[0]).toBe('0')
      expect(lines[1]).toBe('/app')
      expect(lines[2]).toMatch(/CapEff:\s+0000000000000000/)
      expect(lines[3]).toMatch(/NoNewPrivs:\s+1/)
      if (rt?.idMap && process.getuid?.() === 0) {
        expect(lines[4]?.trim().split(/\s+/)).toEqual(['0', String(ID_BASE), '65536'])
        expect(statSync(path.join(f.ws, 'made.txt')).uid).toBe(ID_BASE)
      }
    } finally {
      await box.close()
    }
    // Given back to the action's user, and the container is gone.
    expect(statSync(path.join(f.ws, 'made.txt')).uid).toBe(process.getuid?.())
    expect(readFileSync(path.join(f.ws, 'made.txt'), 'utf8')).toBe('hi\n')
  })

  it('a value with a line break reaches the command, and never the command line of a host process', async () => {
    const f = folders()
    const box = await backend.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    const secret = `first line\nsecond-line-${process.pid}-${Date.now()}`
    try {
      const exec = box.exec(
        {
          command: 'sh',
          args: ['-c', 'printf %s "$HW_MULTI"; sleep 2'],
          cwd: f.ws,
          env: { HOME: f.home, PATH: '/usr/bin:/bin', HW_MULTI: secret },
        },
        { timeoutMs: 30_000, graceMs: 1000, stdoutFile: f.out, stderrFile: f.err },
      )
      // While the command runs, no process on this machine carries the value in its arguments.
      await new Promise((r) => setTimeout(r, 1000))
      const seen: string[] = []
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(secret.split('\n')[1]!)) seen.push(pid)
        } catch {}
      }
      const r = await exec
      expect(r.exitCode).toBe(0)
      expect(readFileSync(f.out, 'utf8')).toBe(secret)
      expect(seen).toEqual([])
    } finally {
      await box.close()
    }
  })

  it('proxy-only: the proxy answers; another loopback port, this host address and DNS are refused', async () => {
    const proxy = await serve('proxy says hi')
    const other = await serve('other')
    const own = ownAddress()
    const f = folders()
    // The probe harness: tries each address on this machine and prints one line per attempt.
    const probe = `
      const http = require('http'); const dns = require('dns');
      const get = (host, port) => new Promise((res) => {
        const q = http.get({ host, port, timeout: 3000 }, (r) => { let b = ''; r.on('data', (c) => b += c); r.on('end', () => res('ok ' + b)) });
        q.on('timeout', () => { q.destroy(); res('ETIMEDOUT') }); q.on('error', (e) => res(e.code || e.message));
      });
      const resolve = (server) => new Promise((res) => {
        const r = new dns.Resolver({ timeout: 1500, tries: 1 }); r.setServers([server]);
        r.resolve4('registry.npmjs.org', (e, a) => res(e ? e.code : 'resolved ' + a));
      });
      (async () => {
        const t = JSON.parse(process.argv[1]);
        console.log('proxy', await get('127.0.0.1', t.proxy));
        console.log('other', await get('127.0.0.1', t.other));
        if (t.own) console.log('own', await get(t.own, t.proxy));
        console.log('dns-loopback', await resolve('127.0.0.1'));
        if (t.own) console.log('dns-own', await resolve(t.own));
        console.log('ifaces', Object.keys(require('os').networkInterfaces()).join(','));
      })();`
    const box = await backend.open({
      writable: [f.ws, f.home],
      readOnly: [],
      container: { phase: 'agent', ports: [portOf(proxy)] },
    })
    try {
      const r = await run(box, f, process.execPath, [
        '-e',
        probe,
        JSON.stringify({ proxy: portOf(proxy), other: portOf(other), own }),
      ])
      const got = Object.fromEntries(
        r.stdout
          .trim()
          .split('\n')
          .map((l) => [l.split(' ')[0], l.slice(l.indexOf(' ') + 1)]),
      )
      expect(got.proxy).toBe('ok proxy says hi')
      expect(got.other).toBe('ECONNREFUSED')
      if (own) expect(got.own).toMatch(/^(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$/)
      expect(got['dns-loopback']).toMatch(/^(ECONNREFUSED|ETIMEOUT)$/)
      if (own) expect(got['dns-own']).toMatch(/^(ECONNREFUSED|ETIMEOUT)$/)
      expect(got.ifaces).toBe('lo')
    } finally {
      await box.close()
      proxy.close()
      other.close()
    }
  })

  it('a command past its limit is killed and its container removed', async () => {
    const f = folders()
    const box = await backend.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    const name = await containersNamed(`hw-${process.pid}-`)
    expect(name.length).toBeGreaterThan(0)
    const r = await run(box, f, 'sh', ['-c', 'sleep 60 & sleep 60'], 1500)
    await box.close()
    expect(r.timedOut).toBe(true)
    expect(r.durationMs).toBeLessThan(20_000)
    expect(await containersNamed(`hw-${process.pid}-`)).toEqual([])
  })

  it('a cancelled run stops at once and leaves no container', async () => {
    const f = folders()
    const box = await backend.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 500)
    const r = await box.exec(
      { command: 'sleep', args: ['60'], cwd: f.ws, env: { PATH: '/usr/bin:/bin' } },
      { timeoutMs: 60_000, graceMs: 1000, stdoutFile: f.out, stderrFile: f.err, signal: ac.signal },
    )
    await box.close()
    expect(r.aborted).toBe(true)
    expect(await containersNamed(`hw-${process.pid}-`)).toEqual([])
  })

  it('out of memory is a fault (exit 137 and the cgroup OOM count), not a harness result', async () => {
    const f = folders()
    const small = testBackend({ resources: { cpus: 1, memory_mb: 64, pids: 256, storage_mb: null } })
    const box = await small.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    try {
      const r = await run(box, f, 'python3', ['-c', 'b = bytearray(512 * 1024 * 1024); print(len(b))'])
      expect(r.exitCode).toBe(137)
      expect(r.fault?.kind).toBe('oom')
      expect(r.fault?.detail).toMatch(/exit 137, cgroup oom_kill [1-9]/)
    } finally {
      await box.close()
    }
  })

  it('pids exhaustion is a fault naming the refused starts', async () => {
    const f = folders()
    const few = testBackend({ resources: { cpus: 1, memory_mb: 256, pids: 16, storage_mb: null } })
    const box = await few.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    try {
      const r = await run(box, f, 'sh', ['-c', 'for i in $(seq 40); do sleep 5 & done; wait; exit 3'])
      expect(r.exitCode).not.toBe(0)
      expect(r.fault?.kind).toBe('pids')
    } finally {
      await box.close()
    }
  })

  it('a crashed run leaves a labelled container that the next start removes; a live run keeps its own', async () => {
    if (!rt) return
    // A process that opens a container and is then killed with SIGKILL (no cleanup runs).
    const script = path.join(dir, 'crash.mts')
    const f = folders()
    // A forwarded port gives the crashed run a forward socket folder too.
    const proxy = await serve('proxy')
    const port = portOf(proxy)
    writeFileSync(
      script,
      `import { testBackend } from ${JSON.stringify(path.resolve('test/support/container.ts'))}
const box = await testBackend().open({ writable: [${JSON.stringify(f.ws)}], readOnly: [], container: { phase: 'agent', ports: [${port}] } })
console.log('open')
setInterval(() => {}, 1000)
`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => c.toString().includes('open') && resolve())
      child.once('exit', (code) => reject(new Error(`crash helper exited ${code}`)))
    })
    const crashedPrefix = `hw-${child.pid}-`
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
    expect(await containersNamed(crashedPrefix)).toHaveLength(1)
    const socketDirs = (pid: number | undefined) =>
      readdirSync(os.tmpdir()).filter((n) => n.startsWith(`hwf-${pid}-`))
    expect(socketDirs(child.pid)).toHaveLength(1)
    // One of ours that is still live: not touched.
    const f2 = folders()
    const mine = await testBackend().open({ writable: [f2.ws], readOnly: [], container: { phase: 'agent' } })
    try {
      // The next start (this backend's first open) removed the crashed run's container and socket folder.
      expect(await containersNamed(crashedPrefix)).toEqual([])
      expect(socketDirs(child.pid)).toEqual([])
      // A sweep now leaves the live run's own container alone.
      const removed = await removeLeftovers(rt)
      expect(removed).toEqual([])
      expect((await containersNamed(`hw-${process.pid}-`)).length).toBe(1)
      const labels = await cli(
        rt.bin,
        // `{{.Labels}}`: a map in podman's answer, a comma-joined `key=value` string in docker's.
        ['ps', '--filter', `label=${LABEL}=1`, '--format', '{{.Labels}}'],
        { env: rt.env },
      )
      expect(labels.stdout).toMatch(
        new RegExp(`${OWNER_LABEL.replace(/\./g, '\\.')}[=:][^,\\s]+:${process.pid}\\b`),
      )
    } finally {
      await mine.close()
      proxy.close()
    }
  }, 120_000)

  it("settle ends the agent's processes and closes its forward socket folder; close removes the container", async () => {
    const f = folders()
    const proxy = await serve('proxy')
    const mine = () => readdirSync(os.tmpdir()).filter((n) => n.startsWith(`hwf-${process.pid}-`))
    const before = mine()
    const box = await backend.open({
      writable: [f.ws, f.home],
      readOnly: [],
      container: { phase: 'agent', ports: [portOf(proxy)] },
    })
    try {
      expect(mine().length).toBe(before.length + 1)
      const bg = await run(box, f, 'sh', ['-c', '(sleep 777 &) ; echo started'])
      expect(bg.stdout).toBe('started\n')
      expect(await box.settle?.()).toBe(true)
      expect(mine()).toEqual(before)
      const ps = await run(box, f, 'sh', ['-c', 'cat /proc/[0-9]*/cmdline | tr "\\0" " "'])
      expect(ps.stdout).not.toContain('sleep 777')
      expect(ps.stdout).toContain('sleep 2147483647')
    } finally {
      await box.close()
      proxy.close()
    }
    expect(await box.settle?.()).toBe(false)
    expect(mine()).toEqual(before)
  }, 120_000)

  it('disk exhaustion is a fault, not a harness result; storage_mb is recorded as not enforced where it cannot be', async () => {
    if (process.getuid?.() !== 0) return
    const f = folders()
    // A 4 MB file system as the workspace: the command fills it.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'hw-disk-test', f.ws])
    const limited = testBackend({ resources: { cpus: 1, memory_mb: 256, pids: 64, storage_mb: 512 } })
    const box = await limited.open({ writable: [f.ws, f.home], readOnly: [], container: { phase: 'agent' } })
    try {
      // Overlay on ext4 (here, and GitHub's runners) cannot limit the writable layer.
      expect(box.provenance?.resources.storage_mb).toBe(512)
      expect(box.provenance?.storage_enforced).toBe(false)
      const r = await run(box, f, 'sh', ['-c', 'dd if=/dev/zero of=fill bs=1M count=16 2>&1; exit 1'])
      expect(r.stdout).toContain('No space left on device')
      expect(r.exitCode).toBe(1)
      expect(r.fault).toEqual({ kind: 'disk', detail: `no space left on the file system of ${f.ws}` })
      // A failure with space left is the command's own.
      const ok = await run(box, f, 'sh', ['-c', 'rm fill; exit 1'])
      expect(ok.exitCode).toBe(1)
      expect(ok.fault).toBeUndefined()
    } finally {
      await box.close()
      execFileSync('umount', [f.ws])
    }
  }, 120_000)

  it('bad input: an invalid reference, a digest that does not match, a Dockerfile that fails (last lines), a build cache hit', async () => {
    const f = folders()
    const open = (image: { ref: string } | { build: string; name: string; timeoutS: number }) =>
      backend.open({ writable: [f.ws], readOnly: [], container: { phase: 'agent', image } })
    const bad = await open({ ref: 'Not A Ref' }).catch((e) => e)
    expect(bad).toBeInstanceOf(ContainerFault)
    expect(bad.message).toContain('not a valid image reference: "Not A Ref"')
    const pinned = `${env.baseRef}@sha256:${'0'.repeat(64)}`
    const mismatch = await open({ ref: pinned }).catch((e) => e)
    expect(mismatch.message).toMatch(/the local image is sha256:[0-9a-f]{64}, not the pinned sha256:0{64}/)
    const ctx = path.join(dir, 'ctx-bad')
    mkdirSync(ctx)
    writeFileSync(
      path.join(ctx, 'Dockerfile'),
      `FROM ${env.baseRef}\nRUN echo building-step-${process.pid} && echo no-such-thing-here >&2 && exit 7\n`,
    )
    const failed = await open({ build: ctx, name: 'bad-task', timeoutS: 120 }).catch((e) => e)
    expect(failed).toBeInstanceOf(ContainerFault)
    expect(failed.kind).toBe('image')
    expect(failed.message).toContain('Dockerfile exited')
    expect(failed.tail).toContain('no-such-thing-here')
    // The failed step's container is gone too (Docker's classic builder keeps it unless told).
    const all = await cli(rt!.bin, ['ps', '-a', '--no-trunc', '--format', '{{.Command}}'], { env: rt!.env })
    expect(all.exitCode).toBe(0)
    expect(all.stdout).not.toContain(`building-step-${process.pid}`)
    const good = path.join(dir, 'ctx-good')
    mkdirSync(good)
    writeFileSync(
      path.join(good, 'Dockerfile'),
      `FROM ${env.baseRef}\nWORKDIR /testbed\nRUN echo hello > /testbed/file.txt\n`,
    )
    const a = await testBackend().image({ build: good, name: 'good-task', timeoutS: 300 })
    const b = await testBackend().image({ build: good, name: 'good-task', timeoutS: 300 })
    expect(['built', 'build-cache']).toContain(a.source)
    expect(b.source).toBe('build-cache')
    expect(b.id).toBe(a.id)
    expect(a.workdir).toBe('/testbed')
    // The image's working directory copied out (a task whose repository lives in its image).
    const dest = mkdtempSync(path.join(dir, 'export-'))
    expect(await testBackend().exportWorkdir?.({ build: good, name: 'good-task', timeoutS: 300 }, dest)).toBe(
      '/testbed',
    )
    expect(readFileSync(path.join(dest, 'file.txt'), 'utf8')).toBe('hello\n')
  }, 300_000)

  it("a command harness finds the image's own tools (its PATH) and the mounted node", async () => {
    const f = folders()
    const tmp = path.join(path.dirname(f.ws), 't')
    mkdirSync(tmp)
    const ctxDir = path.join(dir, 'ctx-path')
    mkdirSync(ctxDir)
    writeFileSync(
      path.join(ctxDir, 'Dockerfile'),
      [
        `FROM ${env.baseRef}`,
        "RUN mkdir -p /opt/tools/bin && printf '#!/bin/sh\\necho image-tool-ok\\n' > /opt/tools/bin/hwtool && chmod 755 /opt/tools/bin/hwtool",
        'ENV PATH=/opt/tools/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '',
      ].join('\n'),
    )
    const image = { build: ctxDir, name: 'path-task', timeoutS: 300 }
    const img = await backend.image(image)
    expect(img.path).toBe('/opt/tools/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
    const ctx = makeCtx(
      { workspace: f.ws, home: f.home, tmp },
      {
        config: {
          args: [],
          env: {},
          pass_env: [],
          files: {},
          command: 'hwtool; node -e "console.log(\'node-ok\')"; echo "$PATH"',
        },
      },
    )
    const inv = await commandAdapter.prepare(
      await commandAdapter.install('1', { cacheDir: tmp, log: () => {} }),
      ctx,
    )
    const box = await backend.open({
      writable: [f.ws, f.home, tmp],
      readOnly: [],
      container: { phase: 'agent', image },
    })
    try {
      const r = await box.exec(
        { command: inv.command, args: inv.args, cwd: inv.cwd, env: inv.env },
        { timeoutMs: 60_000, graceMs: 1000, stdoutFile: f.out, stderrFile: f.err },
      )
      expect(readFileSync(f.err, 'utf8')).toBe('')
      expect(r.exitCode).toBe(0)
      expect(readFileSync(f.out, 'utf8').trim().split('\n')).toEqual([
        'image-tool-ok',
        'node-ok',
        '/opt/tools/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/harness-watch/node/bin',
      ])
    } finally {
      await box.close()
    }
  }, 300_000)

  it('without id mapping or a user namespace (rootful docker on a hosted runner) the agent runs as the invoking uid:gid', async () => {
    // The path of a runner user (uid 1001) calling a rootful engine: its folders are its own.
    const runner = { uid: 1001, gid: 1001 }
    const f = folders()
    const tmp = path.join(path.dirname(f.ws), 't')
    mkdirSync(tmp)
    for (const d of [f.ws, f.home, tmp]) chownSync(d, runner.uid, runner.gid)
    const probe = [
      'id -u; id -g',
      'echo hi > made.txt && echo ws-ok',
      'touch "$HOME/h.txt" && echo home-ok',
      `touch ${tmp}/t.txt && echo tmp-ok`,
      'for d in / /etc /usr /root /opt /var; do touch "$d/hw-probe" 2>/dev/null && echo "writable $d"; done',
      'true',
    ].join('; ')
    const openAs = (host: { uid: number; gid: number }) =>
      containerBackend(testSetting(), async () => noneBackend, { ...host, idMap: false }).open({
        writable: [f.ws, f.home, tmp],
        readOnly: [],
        container: { phase: 'agent' },
      })
    const box = await openAs(runner)
    try {
      const r = await run(box, f, 'sh', ['-c', probe])
      expect(r.exitCode).toBe(0)
      expect(r.stdout.trim().split('\n')).toEqual(['1001', '1001', 'ws-ok', 'home-ok', 'tmp-ok'])
    } finally {
      await box.close()
    }
    expect(statSync(path.join(f.ws, 'made.txt')).uid).toBe(runner.uid)
    expect(statSync(path.join(f.ws, 'made.txt')).gid).toBe(runner.gid)
    expect(statSync(path.join(f.home, 'h.txt')).uid).toBe(runner.uid)
    // Not chowned anywhere: the workspace is still the runner's.
    expect(statSync(f.ws).uid).toBe(runner.uid)
    // What it replaces: container root with every capability dropped cannot write the runner's folder.
    const rootBox = await openAs({ uid: 0, gid: 0 })
    try {
      const r = await run(rootBox, f, 'sh', ['-c', 'id -u; touch made2.txt 2>/dev/null && echo ws-ok; true'])
      expect(r.stdout.trim().split('\n')).toEqual(['0'])
    } finally {
      await rootBox.close()
    }
  }, 300_000)
})
