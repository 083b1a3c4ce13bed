import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openHostForwards } from '../../src/sandbox/forward/host.js'
import { FORWARDER_READY, loopbackForwarderArgs } from '../../src/sandbox/forward/loopback.js'

/** A fresh network namespace needs root and util-linux's unshare. */
function netnsReason(): string | null {
  if (process.platform !== 'linux') return 'needs Linux network namespaces'
  if (process.getuid?.() !== 0) return 'needs root for unshare --net'
  try {
    execFileSync('unshare', ['--net', 'true'], { stdio: 'ignore' })
    execFileSync('sh', ['-c', 'command -v ip'], { stdio: 'ignore' })
    return null
  } catch {
    return 'unshare --net or ip (iproute2) is not available here'
  }
}
const skip = netnsReason()
if (skip) console.warn(`forwarder namespace tests skipped: ${skip}`)

function serve(body: string): Promise<http.Server> {
  const s = http.createServer((_req, res) => res.end(body))
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)))
}
const portOf = (s: http.Server) => (s.address() as AddressInfo).port

/** This machine's own non-loopback IPv4 address, or null. */
function ownAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  }
  return null
}

/** A client run inside the namespace: one line per target, "ok <body>" or the error code. */
const PROBE = `
const http = require('http');
const targets = JSON.parse(process.argv[1]);
(async () => {
  for (const t of targets) {
    const line = await new Promise((resolve) => {
      const req = http.get({ host: t.host, port: t.port, timeout: 3000 }, (res) => {
        let b = ''; res.on('data', (c) => (b += c)); res.on('end', () => resolve('ok ' + b));
      });
      req.on('timeout', () => { req.destroy(); resolve('ETIMEDOUT'); });
      req.on('error', (e) => resolve(e.code || e.message));
    });
    console.log(t.host + ':' + t.port + ' ' + line);
  }
})();
`

describe.skipIf(skip !== null)('unix socket forwarding into a network namespace', () => {
  let proxy: http.Server
  let other: http.Server
  beforeAll(async () => {
    proxy = await serve('proxy')
    other = await serve('other')
  })
  afterAll(async () => {
    await new Promise((r) => proxy.close(r))
    await new Promise((r) => other.close(r))
  })

  it('reaches the forwarded port only; another loopback port and the host address are refused', async () => {
    const fw = await openHostForwards([portOf(proxy)])
    try {
      expect(statSync(fw.forwards[0]?.socket ?? '').mode & 0o777).toBe(0o666)
      const own = ownAddress()
      const targets = [
        { host: '127.0.0.1', port: portOf(proxy) },
        { host: '127.0.0.1', port: portOf(other) },
        ...(own ? [{ host: own, port: portOf(proxy) }] : []),
      ]
      const script = [
        'ip link set lo up',
        `"$0" "$@" > "$HWF/fwd.out" 2>&1 &`,
        `i=0; until grep -qs ${FORWARDER_READY} "$HWF/fwd.out"; do i=$((i+1)); [ $i -gt 100 ] && exit 9; sleep 0.05; done`,
        `"$0" -e "$PROBE" "$TARGETS"`,
      ].join('\n')
      // The forwarder's output file sits in a folder of its own (the socket folder stays the host's).
      const outDir = mkdtempSync(`${os.tmpdir()}/hwf-test-`)
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          'unshare',
          [
            '--net',
            '--',
            'sh',
            '-c',
            script,
            process.execPath,
            ...loopbackForwarderArgs(fw.dir, [portOf(proxy)]),
          ],
          {
            env: {
              PATH: process.env.PATH ?? '/usr/bin:/bin',
              HWF: outDir,
              PROBE,
              TARGETS: JSON.stringify(targets),
            },
          },
        )
        let text = ''
        child.stdout.on('data', (c) => (text += c))
        child.stderr.on('data', (c) => (text += c))
        child.on('error', reject)
        child.on('close', () => resolve(text))
      })
      rmSync(outDir, { recursive: true, force: true })
      const lines = out.trim().split('\n')
      expect(lines[0]).toBe(`127.0.0.1:${portOf(proxy)} ok proxy`)
      expect(lines[1]).toBe(`127.0.0.1:${portOf(other)} ECONNREFUSED`)
      if (own)
        expect(lines[2]).toMatch(
          new RegExp(`^${own}:${portOf(proxy)} (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)$`),
        )
      expect(fw.accepted.get(portOf(proxy))).toBe(1)
    } finally {
      await fw.close()
    }
    expect(existsSync(fw.dir)).toBe(false)
  })
})

describe('host listeners', () => {
  it('refuse a port that is not a TCP port and leave no folder behind', async () => {
    await expect(openHostForwards([70000])).rejects.toThrow('not a TCP port: 70000')
  })

  it('close ends open connections and removes the socket folder (idempotent)', async () => {
    const s = await serve('x')
    const fw = await openHostForwards([portOf(s), portOf(s)])
    expect(fw.forwards).toHaveLength(1)
    const net = await import('node:net')
    const c = net.connect(fw.forwards[0]?.socket ?? '')
    await new Promise((r) => c.once('connect', r))
    const closed = new Promise((r) => c.once('close', r))
    await Promise.all([fw.close(), fw.close()])
    await closed
    expect(existsSync(fw.dir)).toBe(false)
    await new Promise((r) => s.close(r))
  })
})
