import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { type Attribution, type LedgerRow, LedgerRowSchema } from '../../src/records/ledger.js'
import { type LedgerCapture, openLedgerCapture } from '../../src/telemetry/ledger-capture.js'
import { RecordingProxy } from '../../src/telemetry/proxy.js'
import { inspectRequest } from '../../src/telemetry/request-shape.js'
import { reserveUsd } from '../../src/telemetry/reserve.js'
import { startUpstream, type TestUpstream } from './support/upstream.js'

// Probes of a security review against the recording proxy (issue 27, points 1 and 2): no request
// goes upstream without its row, no request stalls an attempt, budgets bind under concurrency.

const ROUTE: ModelRoute = {
  id: 'test-model',
  provider: 'scripted',
  api: 'chat',
  prices: { input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 },
}
const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
/** A chat body whose system message nests 20,000 arrays deep. */
const NESTED_BODY = `{"model":"test-model","messages":[{"role":"system","content":${DEEP}},{"role":"user","content":"hi"}]}`

const attribution = (instance: string): Attribution => ({
  experiment_id: 'exp',
  run_id: 'run-1',
  cell_id: 'cell-a',
  instance_id: instance,
  trial: 0,
  attempt: 1,
})

let upstream: TestUpstream
let dir: string
let capture: LedgerCapture
beforeAll(async () => {
  upstream = await startUpstream()
})
afterAll(async () => {
  await upstream.close()
})
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-proxy-probes-'))
  capture = await openLedgerCapture({
    route: ROUTE,
    upstreamOrigin: upstream.origin,
    ledgerFile: path.join(dir, 'ledger.jsonl'),
    runId: 'run-1',
    experimentId: 'exp',
    forwardAttribution: false,
    finishTimeoutMs: 2000,
  })
  upstream.calls.length = 0
})
afterEach(async () => {
  await capture.close()
  await rm(dir, { recursive: true, force: true })
})

const chat = (origin: string, key: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body,
  })

async function ledgerRows(file: string): Promise<LedgerRow[]> {
  const text = await readFile(file, 'utf8')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
}

describe('a request body the row builder cannot recurse into', () => {
  it('a 20,000-level nested body is forwarded with its row (flagged), and the attempt settles', async () => {
    const t = await capture.begin(attribution('nested'), {})
    const r = await chat(t.endpoint.origin, t.endpoint.apiKey, NESTED_BODY)
    expect(r.status).toBe(200)
    await r.arrayBuffer()
    const { rows, summary } = await t.finish()
    expect(upstream.calls).toHaveLength(1)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      status: 'success',
      model: 'test-model',
      request_shape: { bytes: Buffer.byteLength(NESTED_BODY), messages: 2, tools: 0, system_bytes: null },
      tokens: { input_total: 100, output: 20 },
    })
    expect(rows[0]?.flags).toContain('request_unsummarized')
    expect(summary.rows).toBe(1)
    expect(summary.coverage).toBe('complete')
    const file = await ledgerRows(path.join(dir, 'ledger.jsonl'))
    expect(file.map((x) => x.request_id)).toEqual([rows[0]?.request_id])
  }, 20_000)

  it('its budget-refused variant is answered, recorded and settles', async () => {
    const t = await capture.begin(attribution('nested-refused'), { maxRequests: 0 })
    const r = await chat(t.endpoint.origin, t.endpoint.apiKey, NESTED_BODY)
    expect(r.status).toBe(429)
    expect(await r.json()).toMatchObject({ error: { code: 'budget_exceeded' } })
    const { rows, summary } = await t.finish()
    expect(upstream.calls).toHaveLength(0)
    expect(rows.map((x) => [x.status, x.error?.class, x.spend_usd])).toEqual([
      ['failure', 'budget_exceeded', 0],
    ])
    expect(rows[0]?.flags).toEqual(expect.arrayContaining(['request_unsummarized', 'answered_by_proxy']))
    expect(summary.budget_exceeded).toBe(true)
  }, 20_000)
})

describe('fail closed: a request whose row cannot be built is never forwarded', () => {
  it('refuses with a provider-shaped 500, records the refusal and keeps serving', async () => {
    const ledgerFile = path.join(dir, 'throws.jsonl')
    const proxy = await RecordingProxy.start({
      upstream: upstream.origin,
      route: { provider: 'scripted', prices: ROUTE.prices ?? null },
      ledgerFile,
      runId: 'run-1',
      experimentId: 'exp',
      // The row builder's request reader fails on this body (a fault in our own code, injected).
      summarizeRequest: (p, body, enc) => {
        if (body.includes('poison')) throw new RangeError('Maximum call stack size exceeded')
        return inspectRequest(p, body, enc)
      },
    })
    try {
      const attempt = proxy.register({ attribution: attribution('throws') })
      const bad = await chat(proxy.origin, attempt.key, '{"model":"test-model","messages":[],"x":"poison"}')
      expect(bad.status).toBe(500)
      expect(await bad.json()).toMatchObject({
        error: { code: 'request_unrecordable', type: 'server_error' },
      })
      const good = await chat(proxy.origin, attempt.key, '{"model":"test-model","messages":[]}')
      expect(good.status).toBe(200)
      await good.arrayBuffer()
      await attempt.idle(2000)
      expect(attempt.inflight).toBe(0)
      expect(upstream.calls).toHaveLength(1)
      expect(attempt.requests).toBe(1)
      expect(attempt.rows.map((x) => [x.status, x.error?.class ?? null, x.http_status])).toEqual([
        ['failure', 'request_unrecordable', 500],
        ['success', null, 200],
      ])
      expect(attempt.rows[0]?.flags).toContain('row_fallback')
    } finally {
      await proxy.close()
    }
    expect((await ledgerRows(ledgerFile)).map((x) => x.error?.class ?? 'ok')).toEqual([
      'request_unrecordable',
      'ok',
    ])
  }, 20_000)
})

describe('fail closed: a request whose row cannot be written is never forwarded', () => {
  const startProxy = (ledgerFile: string) =>
    RecordingProxy.start({
      upstream: upstream.origin,
      route: { provider: 'scripted', prices: ROUTE.prices ?? null },
      ledgerFile,
      runId: 'run-1',
      experimentId: 'exp',
    })

  it('a folder put in the ledger’s place mid-run: later requests are refused as ledger_unwritable, the upstream sees none', async () => {
    const ledgerFile = path.join(dir, 'replaced.jsonl')
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    const proxy = await startProxy(ledgerFile)
    try {
      const attempt = proxy.register({ attribution: attribution('ledger-replaced') })
      const first = await chat(proxy.origin, attempt.key, '{"model":"test-model","messages":[]}')
      expect(first.status).toBe(200)
      await first.arrayBuffer()
      await rename(ledgerFile, `${ledgerFile}.moved`)
      await mkdir(ledgerFile)
      const statuses: number[] = []
      for (let i = 0; i < 2; i++) {
        const r = await chat(proxy.origin, attempt.key, '{"model":"test-model","messages":[]}')
        statuses.push(r.status)
        expect(await r.json()).toMatchObject({
          error: { code: 'request_unrecordable', type: 'server_error' },
        })
      }
      expect(statuses).toEqual([500, 500])
      await attempt.idle(2000)
      expect(attempt.inflight).toBe(0)
      expect(upstream.calls).toHaveLength(1)
      expect(attempt.requests).toBe(1)
      expect(attempt.rows.map((x) => [x.status, x.error?.class ?? null, x.http_status])).toEqual([
        ['success', null, 200],
        ['failure', 'ledger_unwritable', 500],
        ['failure', 'ledger_unwritable', 500],
      ])
      const lines = said.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('ledger'))
      expect(lines).toEqual([
        `harness-watch: ledger ${ledgerFile} was replaced (a folder is in its place): requests are refused from now on (none goes upstream unrecorded)\n`,
      ])
    } finally {
      said.mockRestore()
      await proxy.close()
    }
  }, 20_000)

  it('a ledger on a full disk: the first request is refused before it is forwarded', async (ctx) => {
    if (process.getuid?.() !== 0)
      return ctx.skip('mounting a small file system for the ledger needs root here')
    const disk = path.join(dir, 'disk')
    await mkdir(disk)
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'hw-ledger-disk', disk], { stdio: 'ignore' })
    } catch {
      return ctx.skip('this machine refused a tmpfs mount')
    }
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    let proxy: RecordingProxy | null = null
    try {
      const ledgerFile = path.join(disk, 'ledger.jsonl')
      proxy = await startProxy(ledgerFile)
      // Fill the file system: the write that does not fit fails with ENOSPC.
      expect(() => writeFileSync(path.join(disk, 'filler'), Buffer.alloc(4 * 1024 * 1024))).toThrow(/ENOSPC/)
      const attempt = proxy.register({ attribution: attribution('ledger-full') })
      const r = await chat(proxy.origin, attempt.key, '{"model":"test-model","messages":[]}')
      expect(r.status).toBe(500)
      expect(await r.json()).toMatchObject({ error: { code: 'request_unrecordable' } })
      await attempt.idle(2000)
      expect(upstream.calls).toHaveLength(0)
      expect(attempt.rows.map((x) => x.error?.class)).toEqual(['ledger_unwritable'])
      expect(said.mock.calls.map((c) => String(c[0])).join('')).toMatch(
        new RegExp(`ledger ${ledgerFile}: its file system has \\d+ bytes free`),
      )
    } finally {
      said.mockRestore()
      await proxy?.close()
      execFileSync('umount', [disk])
    }
  }, 20_000)
})

describe('budgets bind under concurrency', () => {
  it('8 parallel requests against a spend cap overshoot it by at most one request', async () => {
    // One request costs $0.000264 here (100 input, 40 of them cached, 20 output at $1/$10 per M).
    const cap = 0.0003
    const t = await capture.begin(attribution('spend-burst'), { maxSpendUsd: cap })
    const body = '{"model":"test-model","messages":[],"max_tokens":20}'
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        chat(t.endpoint.origin, t.endpoint.apiKey, body).then(async (r) => {
          await r.arrayBuffer()
          return r.status
        }),
      ),
    )
    const { rows, summary } = await t.finish()
    const forwarded = answers.filter((s) => s === 200).length
    expect(upstream.calls).toHaveLength(forwarded)
    expect(answers.filter((s) => s === 429)).toHaveLength(8 - forwarded)
    const oneRequest = Math.max(...rows.map((x) => x.spend_usd ?? 0))
    expect(oneRequest).toBeCloseTo(0.000264, 12)
    expect(summary.spend_usd).toBeLessThanOrEqual(cap + oneRequest)
    // The reservation of one request ($0.00022: 20 output tokens and ~18 input tokens at the dearest
    // input rate) admits a second one below the cap and no third.
    const reserve = reserveUsd(
      inspectRequest(
        { api: 'chat', callType: 'chat.completions', model: null, stream: null },
        Buffer.from(body),
        undefined,
      ),
      ROUTE.prices ?? null,
    )
    expect(reserve).toBeCloseTo(20e-5 + Math.ceil(body.length / 3) * 1.25e-6, 12)
    expect(forwarded).toBe(2)
    expect(summary.budget_exceeded).toBe(true)
  }, 20_000)

  it('8 parallel requests against a request cap forward exactly the cap', async () => {
    const t = await capture.begin(attribution('request-burst'), { maxRequests: 3 })
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        chat(t.endpoint.origin, t.endpoint.apiKey, '{"model":"test-model","messages":[]}').then(async (r) => {
          await r.arrayBuffer()
          return r.status
        }),
      ),
    )
    const { rows } = await t.finish()
    expect(answers.filter((s) => s === 200)).toHaveLength(3)
    expect(upstream.calls).toHaveLength(3)
    expect(rows.filter((x) => x.error?.class === 'budget_exceeded')).toHaveLength(5)
  }, 20_000)

  it('a reservation is given back when its request fails upstream', async () => {
    const t = await capture.begin(attribution('spend-release'), { maxSpendUsd: 0.0003 })
    const body = '{"model":"test-model","messages":[],"max_tokens":20}'
    for (let i = 0; i < 3; i++) {
      const r = await chat(t.endpoint.origin, t.endpoint.apiKey, body, { 'x-test-mode': 'error500' })
      expect(r.status).toBe(500)
      await r.arrayBuffer()
    }
    const { summary } = await t.finish()
    expect(upstream.calls).toHaveLength(3)
    expect(summary.spend_usd).toBe(0)
  }, 20_000)
})
