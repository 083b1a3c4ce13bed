import { mkdtemp, readFile, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { type Attribution, LedgerRowSchema } from '../../src/records/ledger.js'
import type { AttemptEndpoint } from '../../src/telemetry/capture.js'
import {
  type LedgerCapture,
  type LedgerCaptureOptions,
  openLedgerCapture,
} from '../../src/telemetry/ledger-capture.js'
import { rawRequest } from '../support/raw-http.js'
import { startUpstream, type TestUpstream } from './support/upstream.js'

const ROUTE: ModelRoute = {
  id: 'test-model',
  provider: 'scripted',
  api: 'chat',
  prices: { input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 },
}
const UPSTREAM_KEY = 'sk-real-upstream-key-0123456789'

function attribution(instance: string, attempt = 1): Attribution {
  return {
    experiment_id: 'exp',
    run_id: 'run-1',
    cell_id: 'cell-a',
    instance_id: instance,
    trial: 0,
    attempt,
    round: 0,
  }
}

let upstream: TestUpstream
let dir: string
let capture: LedgerCapture
let ledgerFile: string

beforeAll(async () => {
  upstream = await startUpstream()
})
afterAll(async () => {
  await upstream.close()
})
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-proxy-'))
  ledgerFile = path.join(dir, 'ledger.jsonl')
  capture = await openTestCapture('ledger.jsonl', { upstreamKey: UPSTREAM_KEY, forwardAttribution: true })
  upstream.calls.length = 0
})
afterEach(async () => {
  await capture.close()
  await rm(dir, { recursive: true, force: true })
})

/**
 * A ledger capture of ROUTE (run `run-1` of experiment `exp`) in front of the test upstream, writing
 * `<dir>/<ledger>`, attribution not forwarded; `over` changes any option.
 */
function openTestCapture(ledger: string, over: Partial<LedgerCaptureOptions> = {}): Promise<LedgerCapture> {
  return openLedgerCapture({
    route: ROUTE,
    upstreamOrigin: upstream.origin,
    ledgerFile: path.join(dir, ledger),
    runId: 'run-1',
    experimentId: 'exp',
    forwardAttribution: false,
    ...over,
  })
}

/** A second capture from {@link openTestCapture} for the length of `use`, closed after it. */
async function withTestCapture(
  ledger: string,
  over: Partial<LedgerCaptureOptions>,
  use: (c: LedgerCapture) => Promise<void>,
): Promise<void> {
  const c = await openTestCapture(ledger, over)
  try {
    await use(c)
  } finally {
    await c.close()
  }
}

/** An OpenAI SDK client on the attempt's endpoint, without SDK retries (each request is one row). */
function openaiClient(endpoint: AttemptEndpoint, defaultHeaders?: Record<string, string>): OpenAI {
  return new OpenAI({
    apiKey: endpoint.apiKey,
    baseURL: `${endpoint.origin}/v1`,
    maxRetries: 0,
    ...(defaultHeaders ? { defaultHeaders } : {}),
  })
}

/**
 * POST /v1/chat/completions at `origin` with bearer `key`; `test` holds the test upstream's `x-test-*`
 * switches, `body` adds to `{ model: 'test-model', messages: [] }`.
 */
function chat(
  origin: string,
  key: string,
  test: Record<string, string>,
  body: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...test },
    body: JSON.stringify({ model: 'test-model', messages: [], ...body }),
    signal,
  })
}

/** A chat request in one test-upstream mode (`x-test-mode`). */
const post = (origin: string, key: string, mode: string, stream = false) =>
  chat(origin, key, { 'x-test-mode': mode }, { stream })

async function readLedger(): Promise<unknown[]> {
  const text = await readFile(ledgerFile, 'utf8')
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

describe('recording proxy with real SDK clients', () => {
  it('records OpenAI chat, stream and not, with the cache split and swaps the key', async () => {
    const t = await capture.begin(attribution('inst-chat'), {})
    const client = openaiClient(t.endpoint)
    const plain = await client.chat.completions.create({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello' },
      ],
      tools: [
        { type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: {} } } },
      ],
    })
    expect(plain.usage?.prompt_tokens).toBe(100)
    const stream = await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'title please' }],
      stream: true,
      stream_options: { include_usage: true },
    })
    let text = ''
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
    expect(text).toBe('done')
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(2)
    for (const r of rows) {
      expect(LedgerRowSchema.parse(r)).toBeTruthy()
      expect(r.status).toBe('success')
      expect(r.api).toBe('chat')
      expect(r.model).toBe('test-model')
      expect(r.model_observed).toBe('test-model-2025-01-01')
      expect(r.tokens).toEqual({
        input_total: 100,
        input_fresh: 60,
        cache_read: 40,
        cache_write: 0,
        output: 20,
        reasoning: 5,
      })
      expect(r.cache_semantics).toBe('inclusive')
      // 60·1 + 40·0.1 + 20·10 per Mtok
      expect(r.spend_usd).toBeCloseTo(0.000264, 12)
      expect(r.spend_source).toBe('recomputed')
      expect(r.attribution).toEqual(attribution('inst-chat'))
    }
    expect(rows[0]?.stream).toBe(false)
    expect(rows[0]?.request_shape).toMatchObject({ tools: 1, messages: 2 })
    expect(rows[0]?.request_shape?.system_bytes).toBe(
      JSON.stringify({ role: 'system', content: 'be brief' }).length,
    )
    expect(rows[1]?.stream).toBe(true)
    expect(rows[1]?.request_shape?.tools).toBe(0)
    expect(summary).toMatchObject({
      source: 'ledger',
      coverage: 'complete',
      proxy_requests: 2,
      input_tokens: 200,
      input_fresh_tokens: 120,
      cache_read_tokens: 80,
      cache_write_tokens: 0,
      output_tokens: 40,
      reasoning_tokens: 10,
      models_observed: ['test-model-2025-01-01'],
      model_mismatch: false,
      first_request_tools: 1,
      aux_requests: 1,
      budget_exceeded: false,
      spend_source: 'recomputed',
    })
    expect(summary.spend_usd).toBeCloseTo(0.000528, 12)
    // The upstream got the real key and the attribution headers, never the attempt key.
    for (const call of upstream.calls) {
      expect(call.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`)
      expect(call.headers['x-hw-cell']).toBe('cell-a')
      expect(call.headers['x-hw-instance']).toBe('inst-chat')
      expect(call.headers['x-hw-trial']).toBe('0')
      expect(call.headers['x-hw-attempt']).toBe('1')
      expect(call.headers['x-hw-round']).toBe('0')
    }
  })

  it('records OpenAI Responses, stream and not', async () => {
    const t = await capture.begin(attribution('inst-resp'), {})
    const client = openaiClient(t.endpoint)
    const r1 = await client.responses.create({ model: 'test-model', input: 'hi', instructions: 'sys' })
    expect(r1.usage?.input_tokens).toBe(100)
    const s = await client.responses.create({
      model: 'test-model',
      input: [{ role: 'user', content: 'hi' }],
      stream: true,
    })
    for await (const _ of s) {
      // drain
    }
    const { rows } = await t.finish()
    expect(
      rows.map((r) => [r.api, r.stream, r.tokens.input_fresh, r.tokens.cache_read, r.tokens.output]),
    ).toEqual([
      ['responses', false, 60, 40, 20],
      ['responses', true, 60, 40, 20],
    ])
    expect(rows[0]?.request_shape).toMatchObject({ messages: 1, system_bytes: 5 })
    expect(rows[1]?.model_observed).toBe('test-model-2025-01-01')
  })

  it('records Anthropic Messages (exclusive cache semantics), stream and not, keyed by x-api-key', async () => {
    const t = await capture.begin(attribution('inst-anth'), {})
    const client = new Anthropic({ apiKey: t.endpoint.apiKey, baseURL: t.endpoint.origin, maxRetries: 0 })
    const m = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      system: 'sys prompt',
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(m.usage.input_tokens).toBe(60)
    const s = await client.messages.create({
      model: 'claude-test',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    })
    for await (const _ of s) {
      // drain
    }
    const { rows, summary } = await t.finish()
    for (const r of rows) {
      expect(r.api).toBe('anthropic')
      expect(r.cache_semantics).toBe('exclusive')
      expect(r.tokens).toEqual({
        input_total: 100,
        input_fresh: 60,
        cache_read: 30,
        cache_write: 10,
        output: 20,
        reasoning: null,
      })
      // 60·1 + 30·0.1 + 10·1.25 + 20·10 per Mtok
      expect(r.spend_usd).toBeCloseTo(0.0002755, 12)
    }
    expect(rows[0]?.request_shape?.system_bytes).toBe(Buffer.byteLength(JSON.stringify('sys prompt')))
    expect(summary.model_mismatch).toBe(true)
    expect(summary.flags).toContain('model_mismatch')
    expect(upstream.calls.every((c) => c.headers['x-api-key'] === UPSTREAM_KEY)).toBe(true)
  })

  it('records Gemini generateContent and both streamGenerateContent forms, keyed by x-goog-api-key', async () => {
    const t = await capture.begin(attribution('inst-gem'), {})
    const body = JSON.stringify({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      systemInstruction: { parts: [{ text: 'sys' }] },
      tools: [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }],
    })
    const headers = { 'content-type': 'application/json', 'x-goog-api-key': t.endpoint.apiKey }
    for (const suffix of [':generateContent', ':streamGenerateContent?alt=sse', ':streamGenerateContent']) {
      const res = await fetch(`${t.endpoint.origin}/v1beta/models/gemini-test${suffix}`, {
        method: 'POST',
        headers,
        body,
      })
      expect(res.status).toBe(200)
      await res.text()
    }
    const { rows } = await t.finish()
    expect(rows.map((r) => [r.call_type, r.stream, r.model])).toEqual([
      ['generateContent', false, 'gemini-test'],
      ['streamGenerateContent', true, 'gemini-test'],
      ['streamGenerateContent', true, 'gemini-test'],
    ])
    for (const r of rows) {
      expect(r.tokens).toEqual({
        input_total: 100,
        input_fresh: 60,
        cache_read: 40,
        cache_write: 0,
        output: 20,
        reasoning: 5,
      })
      expect(r.request_shape).toMatchObject({ tools: 2, messages: 1 })
      expect(r.model_observed).toBe('gemini-test-2025-01-01')
    }
    expect(upstream.calls.every((c) => c.headers['x-goog-api-key'] === UPSTREAM_KEY)).toBe(true)
  })

  it('reads usage out of a gzip-encoded answer and forwards the bytes unchanged', async () => {
    const t = await capture.begin(attribution('inst-gz'), {})
    const res = await chat(t.endpoint.origin, t.endpoint.apiKey, { 'x-test-mode': 'gzip' })
    expect(((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(100)
    const { rows } = await t.finish()
    expect(rows[0]?.tokens.input_total).toBe(100)
  })
})

describe('streaming pass-through', () => {
  it('delivers the first SSE chunk before the upstream has finished', async () => {
    const t = await capture.begin(attribution('inst-sse'), {})
    const gap = 400
    const start = performance.now()
    const res = await chat(
      t.endpoint.origin,
      t.endpoint.apiKey,
      { 'x-test-gap-ms': String(gap) },
      { stream: true, stream_options: { include_usage: true } },
    )
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    const first = await reader.read()
    const firstAt = performance.now() - start
    expect(new TextDecoder().decode(first.value)).toContain('"content":"do"')
    while (!(await reader.read()).done) {
      // drain
    }
    const endAt = performance.now() - start
    // The first chunk arrives long before the upstream's pause is over; the end comes after it.
    expect(firstAt).toBeLessThan(gap / 2)
    expect(endAt).toBeGreaterThanOrEqual(gap)
    const { rows } = await t.finish()
    expect(rows[0]?.ttft_ms).toBeLessThan(gap / 2)
    expect(rows[0]?.duration_ms).toBeGreaterThanOrEqual(gap - 5)
    expect(rows[0]?.tokens.output).toBe(20)
  })
})

describe('streaming headers', () => {
  it('passes on a stream’s headers while the upstream holds back its first event', async () => {
    const t = await capture.begin(attribution('inst-headers'), {})
    const gap = 400
    const start = performance.now()
    const res = await chat(
      t.endpoint.origin,
      t.endpoint.apiKey,
      { 'x-test-mode': 'headers-first', 'x-test-gap-ms': String(gap) },
      { stream: true, stream_options: { include_usage: true } },
    )
    const headersAt = performance.now() - start
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const text = await res.text()
    const endAt = performance.now() - start
    expect(headersAt).toBeLessThan(gap / 2)
    expect(endAt).toBeGreaterThanOrEqual(gap)
    expect(text).toContain('"content":"do"')
    const { rows } = await t.finish()
    expect(rows[0]?.tokens.output).toBe(20)
  })
})

describe('the ledger holds no body, header or key', () => {
  it('keeps only the allowlisted projection', async () => {
    const t = await capture.begin(attribution('inst-secret'), {})
    const marker = 'BODY-MARKER-7f3a9c'
    const client = openaiClient(t.endpoint, { 'x-custom-header': 'HEADER-MARKER-51c2' })
    await client.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: marker }],
    })
    await t.finish()
    const text = await readFile(ledgerFile, 'utf8')
    expect(text.length).toBeGreaterThan(100)
    expect(text).not.toContain(t.endpoint.apiKey)
    expect(text).not.toContain(UPSTREAM_KEY)
    expect(text).not.toContain(marker)
    expect(text).not.toContain('HEADER-MARKER')
    expect(text).not.toContain('done') // the answer text
    const rows = await readLedger()
    expect(rows).toHaveLength(1)
    expect(LedgerRowSchema.parse(rows[0])).toBeTruthy()
  })
})

describe('attribution', () => {
  const styles: [string, (key: string) => { url: string; headers: Record<string, string> }][] = [
    [
      'Authorization: Bearer',
      (k) => ({ url: '/v1/chat/completions', headers: { authorization: `Bearer ${k}` } }),
    ],
    ['x-api-key', (k) => ({ url: '/v1/chat/completions', headers: { 'x-api-key': k } })],
    ['x-goog-api-key', (k) => ({ url: '/v1/chat/completions', headers: { 'x-goog-api-key': k } })],
    ['api-key', (k) => ({ url: '/v1/chat/completions', headers: { 'api-key': k } })],
    ['?key=', (k) => ({ url: `/v1/chat/completions?key=${k}`, headers: {} })],
    ['/a/<key> path prefix', (k) => ({ url: `/a/${k}/v1/chat/completions`, headers: {} })],
  ]
  it.each(styles)('attributes a request keyed by %s and swaps the key upstream', async (_name, style) => {
    const t = await capture.begin(attribution('inst-style'), {})
    const other = await capture.begin(attribution('inst-other'), {})
    const { url, headers } = style(t.endpoint.apiKey)
    const res = await fetch(`${t.endpoint.origin}${url}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [] }),
    })
    expect(res.status).toBe(200)
    const { rows } = await t.finish()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.attribution?.instance_id).toBe('inst-style')
    expect((await other.finish()).rows).toHaveLength(0)
    const call = upstream.calls.at(-1)
    expect(call?.path).toBe(
      url.startsWith('/a/') ? '/v1/chat/completions' : url.replace(t.endpoint.apiKey, UPSTREAM_KEY),
    )
    expect(JSON.stringify(call?.headers)).not.toContain(t.endpoint.apiKey)
  })

  it('answers a path prefix with malformed percent-encoding as an unknown key and keeps serving', async () => {
    const bad = await fetch(`${capture.origin}/a/%E0%A4%A/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [] }),
    })
    expect(bad.status).toBe(401)
    await bad.text()
    const t = await capture.begin(attribution('inst-after'), {})
    const ok = await chat(t.endpoint.origin, t.endpoint.apiKey, {})
    expect(ok.status).toBe(200)
    await ok.text()
    expect((await t.finish()).rows).toHaveLength(1)
    expect(capture.proxy.unattributedRows.map((r) => r.error?.class)).toEqual(['unknown_key'])
  })

  it('answers an unknown key with 401 in each provider shape and records it unattributed', async () => {
    const post = (p: string, headers: Record<string, string>) =>
      fetch(`${capture.origin}${p}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test-model', messages: [] }),
      })
    const openai = await post('/v1/chat/completions', { authorization: 'Bearer sk-nope' })
    expect(openai.status).toBe(401)
    expect(await openai.json()).toMatchObject({
      error: { type: 'invalid_request_error', code: 'invalid_api_key' },
    })
    const anth = await post('/v1/messages', { 'x-api-key': 'sk-nope' })
    expect(anth.status).toBe(401)
    expect(await anth.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
    const gem = await post('/v1beta/models/g:generateContent', { 'x-goog-api-key': 'nope' })
    expect(gem.status).toBe(401)
    expect(await gem.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } })
    expect(upstream.calls).toHaveLength(0)
    const rows = capture.proxy.unattributedRows
    expect(rows).toHaveLength(3)
    for (const r of rows) {
      expect(r.attribution).toBeNull()
      expect(r.status).toBe('failure')
      expect(r.error?.class).toBe('unknown_key')
    }
    expect(await readFile(ledgerFile, 'utf8')).not.toContain('sk-nope')
  })
})

describe('budgets (F06)', () => {
  it('answers beyond max_requests with a provider-shaped quota error and records budget_exceeded', async () => {
    const t = await capture.begin(attribution('inst-budget'), { maxRequests: 2 })
    const client = openaiClient(t.endpoint)
    await client.chat.completions.create({ model: 'test-model', messages: [] })
    await client.chat.completions.create({ model: 'test-model', messages: [] })
    const err = await client.chat.completions
      .create({ model: 'test-model', messages: [] })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.APIError)
    const api = err as InstanceType<typeof OpenAI.APIError>
    expect(api.status).toBe(429)
    expect(api.code).toBe('budget_exceeded')
    expect(api.type).toBe('insufficient_quota')
    const anth = await fetch(`${t.endpoint.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': t.endpoint.apiKey, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(anth.status).toBe(400)
    expect(await anth.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    const gem = await fetch(`${t.endpoint.origin}/v1beta/models/g:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': t.endpoint.apiKey, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(gem.status).toBe(429)
    expect(await gem.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } })
    expect(upstream.calls).toHaveLength(2)
    const { rows, summary } = await t.finish()
    expect(rows.map((r) => r.error?.class ?? r.status)).toEqual([
      'success',
      'success',
      'budget_exceeded',
      'budget_exceeded',
      'budget_exceeded',
    ])
    expect(rows[2]).toMatchObject({
      status: 'failure',
      http_status: 429,
      spend_usd: 0,
      spend_source: 'proxy',
    })
    expect(summary.budget_exceeded).toBe(true)
    expect(summary.flags).toContain('budget_exceeded')
    expect(summary.failed_rows).toBe(3)
    expect(summary.coverage).toBe('complete')
  })

  it('stops at max_spend_usd once the recorded spend reaches it', async () => {
    const t = await capture.begin(attribution('inst-spend'), { maxSpendUsd: 0.0003 })
    const client = openaiClient(t.endpoint)
    await client.chat.completions.create({ model: 'test-model', messages: [] }) // $0.000264
    await client.chat.completions.create({ model: 'test-model', messages: [] }) // total $0.000528
    const err = await client.chat.completions
      .create({ model: 'test-model', messages: [] })
      .catch((e: unknown) => e)
    expect((err as { status?: number }).status).toBe(429)
    const { summary } = await t.finish()
    expect(summary.budget_exceeded).toBe(true)
    expect(summary.spend_usd).toBeCloseTo(0.000528, 12)
  })
})

describe('upstream failures become failure rows with a class', () => {
  it('forwards 5xx and 429 answers and classes them', async () => {
    const t = await capture.begin(attribution('inst-5xx'), {})
    const r500 = await post(t.endpoint.origin, t.endpoint.apiKey, 'error500')
    expect(r500.status).toBe(500)
    expect(await r500.json()).toMatchObject({ error: { message: 'upstream says no' } })
    expect((await post(t.endpoint.origin, t.endpoint.apiKey, 'error429')).status).toBe(429)
    const { rows, summary } = await t.finish()
    expect(rows.map((r) => [r.status, r.http_status, r.error?.class, r.error?.code])).toEqual([
      ['failure', 500, 'upstream_5xx', 'e500'],
      ['failure', 429, 'rate_limited', 'e429'],
    ])
    expect(summary.coverage).toBe('complete')
    expect(summary.spend_usd).toBe(0)
  })

  it('answers 502 when the upstream is down', async () => {
    // discard port: nothing listens
    await withTestCapture('dead.jsonl', { upstreamOrigin: 'http://127.0.0.1:9' }, async (dead) => {
      const t = await dead.begin(attribution('inst-down'), {})
      const res = await post(t.endpoint.origin, t.endpoint.apiKey, '')
      expect(res.status).toBe(502)
      expect(await res.json()).toMatchObject({ error: { code: 'upstream_unreachable' } })
      const { rows } = await t.finish()
      expect(rows[0]).toMatchObject({
        status: 'failure',
        http_status: 502,
        error: { class: 'upstream_unreachable' },
      })
    })
  })

  it('records an upstream that breaks off mid-stream', async () => {
    const t = await capture.begin(attribution('inst-abort'), {})
    const res = await post(t.endpoint.origin, t.endpoint.apiKey, 'abort-mid', true)
    await res.text().catch(() => '')
    const { rows, summary } = await t.finish()
    expect(rows[0]).toMatchObject({
      status: 'failure',
      error: { class: 'upstream_aborted' },
      spend_usd: null,
    })
    expect(summary.coverage).toBe('partial')
  })

  it('records a client that hangs up mid-stream', async () => {
    const t = await capture.begin(attribution('inst-client'), {})
    const ctl = new AbortController()
    const res = await chat(
      t.endpoint.origin,
      t.endpoint.apiKey,
      { 'x-test-gap-ms': '2000' },
      { stream: true },
      ctl.signal,
    )
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    ctl.abort()
    const { rows } = await t.finish()
    expect(rows[0]).toMatchObject({ status: 'failure', error: { class: 'client_aborted' } })
    expect(rows[0]?.model_observed).toBe('test-model-2025-01-01')
  })

  it('answers 504 when the upstream does not answer in time', async () => {
    await withTestCapture('slow.jsonl', { upstreamTimeoutMs: 200 }, async (slow) => {
      const t = await slow.begin(attribution('inst-hang'), {})
      const res = await post(t.endpoint.origin, t.endpoint.apiKey, 'hang')
      expect(res.status).toBe(504)
      const { rows } = await t.finish()
      expect(rows[0]).toMatchObject({
        status: 'failure',
        http_status: 504,
        error: { class: 'upstream_timeout' },
      })
    })
  })

  it('answers without usage make the attempt partial, never zero', async () => {
    const t = await capture.begin(attribution('inst-nousage'), {})
    await post(t.endpoint.origin, t.endpoint.apiKey, 'no-usage')
    await post(t.endpoint.origin, t.endpoint.apiKey, '')
    const { rows, summary } = await t.finish()
    expect(rows[0]).toMatchObject({ spend_usd: null, spend_source: 'unpriced' })
    expect(rows[0]?.flags).toContain('usage_absent')
    expect(summary.coverage).toBe('partial')
    expect(summary.reason).toContain('1 of 2 requests carried no usage')
    expect(summary.spend_usd).toBeNull()
    expect(summary.input_tokens).toBe(100)
  })
})

describe('finish()', () => {
  it('waits for the attempt’s in-flight request before summarising', async () => {
    const t = await capture.begin(attribution('inst-wait'), {})
    const pending = chat(
      t.endpoint.origin,
      t.endpoint.apiKey,
      { 'x-test-gap-ms': '300' },
      { stream: true, stream_options: { include_usage: true } },
    ).then((r) => r.text())
    await new Promise((r) => setTimeout(r, 50))
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.status).toBe('success')
    expect(summary.coverage).toBe('complete')
    await pending
  })

  it('an attempt that sent nothing is missing (possible proxy bypass, F14), never zero', async () => {
    const t = await capture.begin(attribution('inst-bypass'), {})
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(0)
    expect(summary.coverage).toBe('missing')
    expect(summary.flags).toContain('telemetry_bypass_suspected')
    expect(summary.input_tokens).toBeNull()
    expect(summary.spend_usd).toBeNull()
    expect(summary.proxy_requests).toBeNull()
  })

  it('releases the key: a late request is refused and recorded unattributed', async () => {
    const t = await capture.begin(attribution('inst-late'), {})
    await t.finish()
    const res = await post(t.endpoint.origin, t.endpoint.apiKey, '')
    expect(res.status).toBe(401)
    expect(capture.proxy.unattributedRows.at(-1)?.error?.class).toBe('unknown_key')
    expect(upstream.calls).toHaveLength(0)
  })
})

describe('requests a proxy must survive', () => {
  /** A one-off upstream on 127.0.0.1 serving `handler` for the length of `use`. */
  async function withUpstream(
    handler: http.RequestListener,
    use: (origin: string) => Promise<void>,
  ): Promise<void> {
    const server = http.createServer(handler)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  }

  /** Answer 200 with a small chat completion that carries usage. */
  function answerChat(res: http.ServerResponse): void {
    const body = JSON.stringify({
      model: 'test-model-2025-01-01',
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }

  it('answers a request target that is not a URL with 400, records it and keeps serving', async () => {
    for (const target of ['http://[bad/x', 'http://:99999/v1/chat/completions']) {
      expect(await rawRequest(capture.origin, `GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`)).toBe(
        'HTTP/1.1 400 Bad Request',
      )
    }
    const t = await capture.begin(attribution('inst-after-bad'), {})
    const ok = await chat(t.endpoint.origin, t.endpoint.apiKey, {})
    expect(ok.status).toBe(200)
    await ok.text()
    expect((await t.finish()).rows).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 50))
    expect(capture.proxy.unattributedRows.map((r) => [r.error?.class, r.http_status])).toEqual([
      ['bad_request', 400],
      ['bad_request', 400],
    ])
  })

  it('answers a request Node cannot parse as Node would and records it unattributed', async () => {
    const huge = `x-pad: ${'a'.repeat(20_000)}\r\n`
    expect(await rawRequest(capture.origin, `GET /v1/models HTTP/1.1\r\nHost: x\r\n${huge}\r\n`)).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large',
    )
    expect(
      await rawRequest(
        capture.origin,
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ),
    ).toBe('HTTP/1.1 400 Bad Request')
    const t = await capture.begin(attribution('inst-after-unparsed'), {})
    const ok = await chat(t.endpoint.origin, t.endpoint.apiKey, {})
    expect(ok.status).toBe(200)
    await ok.text()
    expect(capture.proxy.unattributedRows.map((r) => [r.call_type, r.http_status, r.error?.class])).toEqual([
      ['unparsed request', 431, 'bad_request'],
      ['unparsed request', 400, 'bad_request'],
    ])
  })

  it('forwards a path starting with // whole', async () => {
    const t = await capture.begin(attribution('inst-slashes'), {})
    const res = await fetch(`${t.endpoint.origin}//host/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.endpoint.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [] }),
    })
    await res.text()
    expect(upstream.calls.at(-1)?.path).toBe('//host/v1/chat/completions')
    expect((await t.finish()).rows[0]?.call_type).toBe('chat.completions')
  })

  it('sends a request once more when the upstream closed the kept-alive socket it was sent on', async () => {
    // An upstream that serves one request per connection but says keep-alive: the second request on
    // a socket finds it closed before any answer.
    const served = new WeakSet<object>()
    const flaky: http.RequestListener = (req, res) => {
      req.resume()
      req.on('end', () => {
        if (served.has(req.socket)) {
          req.socket.destroy()
          return
        }
        served.add(req.socket)
        answerChat(res)
      })
    }
    await withUpstream(flaky, (origin) =>
      withTestCapture('flaky.jsonl', { upstreamOrigin: origin }, async (c) => {
        const t = await c.begin(attribution('inst-flaky'), {})
        for (let i = 0; i < 3; i++) {
          const res = await chat(t.endpoint.origin, t.endpoint.apiKey, {})
          expect(res.status).toBe(200)
          await res.text()
        }
        const { rows } = await t.finish()
        expect(rows.map((r) => [r.status, r.flags.includes('upstream_retried')])).toEqual([
          ['success', false],
          ['success', true],
          ['success', true],
        ])
      }),
    )
  })

  it('survives an upstream that answers early and resets the socket while the body is still going up', async () => {
    const early: http.RequestListener = (req, res) => {
      if (Number(req.headers['content-length']) > 1e6) {
        res.writeHead(413, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"too big","type":"invalid_request_error"}}', () => req.socket.destroy())
        return
      }
      req.resume()
      req.on('end', () => answerChat(res))
    }
    await withUpstream(early, (origin) =>
      withTestCapture('early.jsonl', { upstreamOrigin: origin }, async (c) => {
        const t = await c.begin(attribution('inst-early'), {})
        const big = await chat(t.endpoint.origin, t.endpoint.apiKey, {}, { pad: 'x'.repeat(30_000_000) })
        expect(big.status).toBe(413)
        await big.text()
        const small = await chat(t.endpoint.origin, t.endpoint.apiKey, {})
        expect(small.status).toBe(200)
        await small.text()
        const { rows } = await t.finish()
        expect(rows.map((r) => [r.http_status, r.error?.class ?? null])).toEqual([
          [413, 'upstream_4xx'],
          [200, null],
        ])
      }),
    )
  })

  it('on close, records the exchanges still in flight before the ledger file closes', async () => {
    const c = await openTestCapture('stop.jsonl')
    const t = await c.begin(attribution('inst-stop'), {})
    const inflight = [
      chat(t.endpoint.origin, t.endpoint.apiKey, { 'x-test-mode': 'hang' }),
      chat(t.endpoint.origin, t.endpoint.apiKey, { 'x-test-mode': 'hang' }),
      fetch(`${t.endpoint.origin}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': t.endpoint.apiKey,
          'content-type': 'application/json',
          'x-test-gap-ms': '5000',
        },
        body: JSON.stringify({ model: 'test-model', messages: [], max_tokens: 5, stream: true }),
      }),
    ].map((p) => p.then((r) => r.text()).catch(() => 'cut'))
    while (upstream.calls.length < 3) await new Promise((r) => setTimeout(r, 10))
    await new Promise((r) => setTimeout(r, 50))
    await c.close()
    const rows = (await readFile(path.join(dir, 'stop.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
    expect(rows.map((r) => r.error?.class)).toEqual(['proxy_stopped', 'proxy_stopped', 'proxy_stopped'])
    // The stream was cut after message_start: the usage it carried is flagged as a lower bound.
    const cut = rows.filter((r) => r.http_status === 200)
    expect(cut.map((r) => [r.api, r.tokens.input_total, r.flags])).toEqual([
      ['anthropic', 100, ['usage_partial']],
    ])
    expect(await Promise.all(inflight)).toContain('cut')
  })
})
