import net from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Attribution } from '../../src/records/ledger.js'
import { RecordingProxy } from '../../src/telemetry/proxy.js'
import { rawRequest } from '../support/raw-http.js'
import { startUpstream, type TestUpstream } from './support/upstream.js'

const attribution: Attribution = {
  experiment_id: 'exp',
  run_id: 'run',
  cell_id: 'c',
  instance_id: 'i-1',
  trial: 0,
  attempt: 1,
}

let upstream: TestUpstream
let proxy: RecordingProxy
beforeEach(async () => {
  upstream = await startUpstream()
  proxy = await RecordingProxy.start({
    upstream: upstream.origin,
    route: { provider: 'openai' },
    runId: 'run',
    experimentId: 'exp',
    maxBodyBytes: 1024 * 1024,
  })
})
afterEach(async () => {
  await proxy.close()
  await upstream.close()
})

describe('the proxy caps request bodies after decompression', () => {
  it('a gzip bomb (10 MB of JSON in a few KB) is answered 413 in the OpenAI shape, recorded, never forwarded', async () => {
    const a = proxy.register({ attribution })
    const json = JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'a'.repeat(10 * 1024 * 1024) }],
    })
    const bomb = gzipSync(json)
    expect(bomb.length).toBeLessThan(100_000)
    const res = await fetch(`${proxy.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.key}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: bomb,
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', code: 'request_too_large' },
    })
    await a.idle()
    expect(a.rows).toHaveLength(1)
    expect(a.rows[0]).toMatchObject({
      status: 'failure',
      http_status: 413,
      error: { class: 'request_too_large', code: 'over 1048576 bytes' },
      spend_usd: 0,
      attribution,
    })
    expect(upstream.calls.filter((c) => c.path.includes('chat'))).toHaveLength(0)
  })

  it('an Anthropic request over the limit as sent gets Anthropic’s 413; one under it is forwarded', async () => {
    const a = proxy.register({ attribution })
    const big = JSON.stringify({
      model: 'm',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'b'.repeat(2e6) }],
    })
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
      body: big,
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
    const ok = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': a.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(ok.status).toBe(200)
    await ok.arrayBuffer()
    await a.idle()
    expect(a.rows.map((r) => r.http_status).sort()).toEqual([200, 413])
  })
})

describe('every request the proxy answers has a row', () => {
  it('CONNECT is answered 405 and recorded (attributed by its key)', async () => {
    const a = proxy.register({ attribution })
    const status = await rawRequest(
      proxy.origin,
      `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nAuthorization: Bearer ${a.key}\r\n\r\n`,
    )
    expect(status).toBe('HTTP/1.1 405 Method Not Allowed')
    await a.idle()
    expect(a.rows).toHaveLength(1)
    expect(a.rows[0]).toMatchObject({
      call_type: 'CONNECT',
      http_status: 405,
      error: { class: 'bad_request', code: 'connect_refused' },
    })
  })

  it('an Expect header other than 100-continue is answered 417 and recorded', async () => {
    const a = proxy.register({ attribution })
    const status = await rawRequest(
      proxy.origin,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\nExpect: teapot\r\nContent-Length: 2\r\n\r\n{}`,
    )
    expect(status).toBe('HTTP/1.1 417 Expectation Failed')
    await a.idle()
    expect(a.rows).toHaveLength(1)
    expect(a.rows[0]).toMatchObject({
      http_status: 417,
      error: { class: 'bad_request', code: 'expectation_failed' },
    })
  })

  it('a chunked upload half-closed mid-body is recorded at once, before the attempt is summed', async () => {
    const a = proxy.register({ attribution })
    const { port } = new URL(proxy.origin)
    const s = net.connect(Number(port), '127.0.0.1')
    await new Promise<void>((r) => s.once('connect', () => r()))
    s.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.key}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n10\r\n{"model":"m","me\r\n`,
    )
    await new Promise((r) => setTimeout(r, 50))
    s.end() // half-close: no terminating chunk will come
    const started = Date.now()
    await a.idle(5000)
    expect(Date.now() - started).toBeLessThan(1000)
    expect(a.rows).toHaveLength(1)
    expect(a.rows[0]).toMatchObject({
      status: 'failure',
      error: { class: 'client_aborted' },
      attribution,
    })
    s.destroy()
  })
})
