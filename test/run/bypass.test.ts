import { readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os, { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runLocal } from '../../src/pipeline/local.js'
import { AttemptRecordSchema } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { harnessPorts } from '../../src/run/attempt.js'
import { BACKENDS } from '../../src/sandbox/select.js'
import { HwError } from '../../src/util/errors.js'
import { writeManifest } from '../support/manifests.js'
import { startUpstream, type TestUpstream } from '../telemetry/support/upstream.js'

// A harness that sends requests around the recording proxy, straight to the model's upstream
// (issue 27 point 3): where the network is not closed, its own count above the proxy's flags the
// attempt telemetry_suspect; under namespace+uid the upstream is out of reach even when it is not on
// 127.0.0.1 (this machine's own interface address stands in for a remote gateway).

/** The harness: `requests` calls through the proxy, then `around` straight to the upstream; its own count on stdout. */
const HARNESS_JS = `
const [direct, through, around] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])]
const body = JSON.stringify({ model: process.env.HW_MODEL, messages: [{ role: 'user', content: 'hi' }] })
const call = (base) =>
  fetch(base + '/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + process.env.HW_API_KEY, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(3000),
  }).then(async (r) => { await r.arrayBuffer(); return r.status }, (e) => 'err:' + (e.cause?.code ?? e.name))
;(async () => {
  const out = { proxy: [], direct: [] }
  for (let i = 0; i < through; i++) out.proxy.push(await call(process.env.HW_OPENAI_BASE_URL))
  for (let i = 0; i < around; i++) out.direct.push(await call(direct + '/v1'))
  const sent = [...out.proxy, ...out.direct].filter((s) => s === 200).length
  console.log(JSON.stringify({ type: 'self_report', requests: sent }))
  console.log(JSON.stringify(out))
})()
`

function manifest(upstream: string, backend: string, around: number): string {
  const cell = (id: string, n: number) => ({
    id,
    harness: 'command',
    version: '1.0.0',
    config: { command: `node "$HOME/h.js" ${upstream} 1 ${n}`, files: { 'h.js': HARNESS_JS } },
  })
  return writeManifest({
    schema_version: 1,
    experiment: { id: 'bypass' },
    model: {
      id: 'test-model',
      provider: 'openai',
      api: 'chat',
      base_url: upstream,
      prices: { input: 1, output: 2 },
    },
    benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 60 } },
    panel: { source: 'builtin', name: 'core', instances: ['js-fix-slugify'] },
    cells: [cell('plain', 0), cell('around', around)],
    baseline: 'plain',
    budgets: { timeout_s: 60 },
    concurrency: 1,
    confirmation: { enabled: false, max_blocks: 2 },
    reporting: { bootstrap_resamples: 200 },
    sandbox: { backend, allow_unisolated: backend !== 'namespace+uid' },
  })
}

const attemptOf = (out: string, cell: string) => {
  const file = path.join(out, 'artifacts', `hw-bypass-${cell}-0`, 'attempts.jsonl')
  const lines = readFileSync(file, 'utf8').trim().split('\n')
  expect(lines).toHaveLength(1)
  return AttemptRecordSchema.parse(JSON.parse(lines[0] as string))
}

/** This machine's own first non-loopback IPv4 address, if it has one. */
function interfaceAddress(): string | null {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  return null
}

let upstream: TestUpstream | null = null
afterEach(async () => {
  await upstream?.close()
  upstream = null
})

describe('one request through the proxy and five around it', () => {
  it('none (network not closed): the attempt is telemetry_suspect in comparison.json and the report', async () => {
    upstream = await startUpstream()
    const out = await mkdtemp(path.join(tmpdir(), 'hw-bypass-'))
    await runLocal({ manifestFile: manifest(upstream.origin, 'none', 5), out, log: () => {} })
    const around = attemptOf(out, 'around')
    const plain = attemptOf(out, 'plain')
    // The upstream answered all seven requests; the proxy saw two of them (one per cell).
    expect(upstream.calls.filter((c) => c.path.endsWith('/chat/completions'))).toHaveLength(7)
    expect(around).toMatchObject({ network: 'host', isolation: 'none' })
    expect(around.telemetry).toMatchObject({ rows: 1, proxy_requests: 1 })
    expect(around.self_report?.requests).toBe(6)
    expect(plain.self_report?.requests).toBe(1)
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8')))
    const cells = Object.fromEntries((c.classification?.cells ?? []).map((x) => [x.cell, x.telemetry]))
    expect(cells).toEqual({ plain: {}, around: { self_report_above_proxy: 1 } })
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain(
      '`telemetry_suspect` `around` trial 0: self\\_report\\_above\\_proxy: the harness reported 6 requests, the proxy saw 1, and its network was not closed',
    )
    expect(report).not.toContain('`telemetry_suspect` `plain`')
  }, 180_000)
})

describe('a remote upstream under namespace+uid keeps the network closed', () => {
  let nsOk = false
  beforeAll(async () => {
    nsOk = (await BACKENDS['namespace+uid'].probe()).ok
  })

  it('an upstream on this machine’s interface address: the harness reaches only the proxy, which reaches the upstream', async (ctx) => {
    if (!nsOk) return ctx.skip('namespace+uid is not available here (needs root or passwordless sudo)')
    const ip = interfaceAddress()
    if (!ip) return ctx.skip('this machine has no interface address besides loopback')
    upstream = await startUpstream(ip)
    const out = await mkdtemp(path.join(tmpdir(), 'hw-bypass-'))
    await runLocal({ manifestFile: manifest(upstream.origin, 'namespace+uid', 5), out, log: () => {} })
    const around = attemptOf(out, 'around')
    expect(around).toMatchObject({ network: 'proxy-only', isolation: 'namespace+uid' })
    const seen = JSON.parse(around.final_message ?? '{}') as { proxy: unknown[]; direct: unknown[] }
    expect(seen.proxy).toEqual([200])
    expect(seen.direct).toHaveLength(5)
    for (const d of seen.direct)
      expect(d).toMatch(/^err:(ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|TimeoutError)$/)
    // Only the two requests through the proxy reached the upstream.
    expect(upstream.calls.filter((c) => c.path.endsWith('/chat/completions'))).toHaveLength(2)
    expect(around.telemetry).toMatchObject({ rows: 1, proxy_requests: 1 })
    expect(around.self_report?.requests).toBe(1)
  }, 180_000)
})

describe('no isolating backend falls back to the host network because of where the upstream lives', () => {
  it('the harness’s ports: the proxy’s under namespace+uid and container; an endpoint off 127.0.0.1 is refused; unisolated backends keep the host', () => {
    expect(harnessPorts('http://127.0.0.1:4000', 'namespace+uid')).toEqual([4000])
    expect(harnessPorts('http://127.0.0.1:4000', 'container')).toEqual([4000])
    const remote = `http://${interfaceAddress() ?? '192.0.2.1'}:4000`
    for (const backend of ['namespace+uid', 'container'] as const) {
      const err = (() => {
        try {
          harnessPorts(remote, backend)
        } catch (e) {
          return e
        }
      })()
      expect(err).toBeInstanceOf(HwError)
      expect((err as HwError).code).toBe('endpoint_not_proxied')
      expect((err as HwError).message).toContain(`${remote} is not the recording proxy on 127.0.0.1`)
    }
    expect(harnessPorts(remote, 'none')).toBeUndefined()
    expect(harnessPorts('http://127.0.0.1:4000', 'env-only')).toBeUndefined()
  })
})
