// Kind: the gateway's own traffic taken for the harness's. A LiteLLM stand-in (support/fake-litellm.ts,
// its documented spend-log contract) retries, falls back and refuses; the capture must count the
// harness's requests (the front proxy's own record of each: time, status, usage chunk), what the
// provider billed for them, and say what it left out.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { type Attribution, LedgerRowSchema, TelemetrySummarySchema } from '../../src/records/ledger.js'
import type { LiteLLMSettings } from '../../src/telemetry/litellm/capture.js'
import { type LiteLLMCapture, openLiteLLMCapture } from '../../src/telemetry/litellm/capture.js'
import { classifyGatewayRows, type HarnessRequest } from '../../src/telemetry/litellm/gateway.js'
import { FakeLiteLLM, spendRow } from './support/fake-litellm.js'

const ROUTE: ModelRoute = {
  id: 'gpt-test',
  provider: 'openai',
  api: 'chat',
  base_url_env: 'LITELLM_BASE_URL',
}
const SETTINGS: LiteLLMSettings = {
  base_url_env: 'LITELLM_BASE_URL',
  master_key_env: 'LITELLM_MASTER_KEY',
  attribution: 'virtual-key',
  settle_s: 0.15,
  max_wait_s: 3,
  tolerance_usd: 0.0001,
  page_size: 1000,
}
const who = (instance: string): Attribution => ({
  experiment_id: 'exp',
  run_id: 'run-28',
  cell_id: 'pi',
  instance_id: instance,
  trial: 0,
  attempt: 1,
})

let fake: FakeLiteLLM
let dir: string
let capture: LiteLLMCapture | null = null

async function open(settings: Partial<LiteLLMSettings> = {}): Promise<LiteLLMCapture> {
  fake = await new FakeLiteLLM({ visibilityDelayMs: 0 }).start()
  capture = await openLiteLLMCapture({
    baseUrl: fake.origin,
    masterKey: fake.masterKey,
    settings: { ...SETTINGS, ...settings },
    route: ROUTE,
    runId: 'run-28',
    experimentId: 'exp',
    ledgerFile: path.join(dir, 'ledger.jsonl'),
    retry: { baseMs: 1, maxMs: 5 },
  })
  return capture
}

/** One chat request (streamed with a usage chunk, or not); the HTTP status. */
async function ask(endpoint: { origin: string; apiKey: string }, i: number, stream = false): Promise<number> {
  const res = await fetch(`${endpoint.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${endpoint.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gpt-test',
      messages: [{ role: 'user', content: `question ${i}` }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  })
  await res.arrayBuffer()
  return res.status
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-gateway-'))
})
afterEach(async () => {
  await capture?.close()
  capture = null
  await fake?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('gateway retries are not the harness’s requests', () => {
  it('two requests, each retried twice upstream: 2 requests, the answers’ spend, 4 retries left out', async () => {
    const c = await open()
    const t = await c.begin(who('retry-a'), {})
    fake.upstreamFailures = 2
    expect(await ask(t.endpoint, 1)).toBe(200)
    fake.upstreamFailures = 2
    expect(await ask(t.endpoint, 2)).toBe(200)
    const { rows, summary } = await t.finish()
    expect(fake.rows).toHaveLength(6) // what a naive count would call 6 requests (3×)
    expect(rows).toHaveLength(2)
    expect(rows.every((r) => r.status === 'success')).toBe(true)
    expect(TelemetrySummarySchema.parse(summary)).toBeTruthy()
    expect(summary.proxy_requests).toBe(2)
    expect(summary.failed_rows).toBe(0)
    const answers = fake.rows.filter((r) => r.row.status === 'success')
    const billed = answers.reduce((s, r) => s + Number(r.row.spend), 0)
    expect(summary.spend_usd).toBeCloseTo(billed, 10)
    expect(summary.gateway).toMatchObject({ harness_rows: 2, retries: 4, fallbacks: 0, unmatched: 0 })
    expect(summary.gateway?.left_out).toEqual({ rows: 4, spend_usd: 0, input_tokens: 0, output_tokens: 0 })
    expect(summary.gateway?.examples[0]?.evidence).toMatch(
      /within harness request #1 .* not its answer; status failure; deployment deployment-primary/,
    )
    expect(summary.reason).toContain('left out of requests, spend and tokens: 4 gateway retries')
    expect(summary.flags).toContain('gateway_retries')
    expect(summary.coverage).toBe('complete')
    // The retries stay in the ledger for audit, attributed to no attempt, with their evidence.
    const ledger = (await readFile(path.join(dir, 'ledger.jsonl'), 'utf8')).trim().split('\n')
    const parsed = ledger.map((l) => LedgerRowSchema.parse(JSON.parse(l)))
    expect(parsed).toHaveLength(6)
    expect(parsed.filter((r) => r.gateway?.kind === 'retry' && r.attribution === null)).toHaveLength(4)
    expect(
      parsed.filter((r) => r.gateway === undefined && r.attribution?.instance_id === 'retry-a'),
    ).toHaveLength(2)
  })

  it('a streamed request whose failed call the provider billed (shared key): billed retry named, not counted', async () => {
    const c = await open({ attribution: 'metadata-header' })
    const t = await c.begin(who('retry-b'), {})
    fake.upstreamFailures = 1
    fake.upstreamError = { status: 504, errorClass: 'Timeout' }
    fake.billFailedCalls = true
    expect(await ask(t.endpoint, 1, true)).toBe(200)
    expect(await ask(t.endpoint, 2, true)).toBe(200)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(2)
    expect(summary.proxy_requests).toBe(2)
    const failed = fake.rows.find((r) => r.row.status === 'failure')!.row
    expect(Number(failed.spend)).toBeGreaterThan(0)
    expect(summary.gateway?.retries).toBe(1)
    expect(summary.gateway?.left_out.spend_usd).toBeCloseTo(Number(failed.spend), 10)
    expect(summary.gateway?.left_out.input_tokens).toBe(Number(failed.prompt_tokens))
    expect(summary.flags).toContain('gateway_billed_left_out')
    expect(summary.reason).toMatch(
      /the provider billed \$0\.0000\d+ and \d+\/0 tokens for them, not counted as the harness's/,
    )
    expect(summary.input_tokens).toBe(rows.reduce((s, r) => s + (r.tokens.input_total ?? 0), 0))
  })
})

describe('gateway fallbacks are not the harness’s requests', () => {
  it('a provider 429 sends the call to the fallback group: one request, answered by the fallback, marked', async () => {
    const c = await open()
    const t = await c.begin(who('fb-a'), {})
    fake.fallbackNext = true
    expect(await ask(t.endpoint, 1)).toBe(200)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.model_group).toBe('gpt-test-fallback')
    expect(summary.proxy_requests).toBe(1)
    // The primary's failed call is the gateway's work: a provider rate limit inside the harness's request.
    expect(summary.gateway).toMatchObject({ harness_rows: 1, retries: 0, fallbacks: 1 })
    expect(summary.gateway?.refusals.rate).toBe(0)
    expect(summary.gateway?.examples[0]?.evidence).toMatch(
      /status failure \(error RateLimitError 429 \(rate limit\)\); deployment deployment-primary; answered by gpt-test-fallback/,
    )
    expect(summary.failed_rows).toBe(0)
    expect(summary.budget_exceeded).toBe(false)
    expect(summary.model_mismatch).toBe(true) // the fallback's model answered: said, not hidden
  })

  it('a fallback without markers is told by its group alone (shared key)', async () => {
    const c = await open({ attribution: 'metadata-header' })
    const t = await c.begin(who('fb-b'), {})
    expect(await ask(t.endpoint, 1)).toBe(200)
    const { summary } = await t.finish()
    expect(summary.gateway?.harness_rows).toBe(1)
    // Without the proxy's record: the same rows judged on markers (a failed call followed by another group).
    const start = Date.UTC(2026, 5, 1, 10)
    const rows = [
      spendRow({
        request_id: 'p1',
        api_key: 'h',
        spend: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        start,
        end: start + 200,
        model: 'gpt-test',
        metadata: { error_information: { error_class: 'APIConnectionError', error_code: '503' } },
        sessionId: 's',
        status: 'failure',
      }),
      spendRow({
        request_id: 'p2',
        api_key: 'h',
        spend: 0.002,
        prompt_tokens: 50,
        completion_tokens: 5,
        start: start + 250,
        end: start + 900,
        model: 'gpt-test',
        model_group: 'gpt-test-fallback',
        metadata: {},
        sessionId: 's',
      }),
    ]
    const v = classifyGatewayRows(rows, null, { requestedGroup: 'gpt-test' })
    expect(v.map((x) => x.kind)).toEqual(['fallback', 'harness'])
    expect(v[0]?.evidence.join('; ')).toContain('model_group gpt-test-fallback ≠ requested gpt-test')
  })
})

describe('gateway refusals are infrastructure or budget, and never the harness’s request when outside one', () => {
  it('the harness’s request refused for budget: counted as its request, billed nothing, class budget', async () => {
    const c = await open()
    const t = await c.begin(who('ref-a'), { maxSpendUsd: 0.000001 })
    expect(await ask(t.endpoint, 1)).toBe(200)
    expect(await ask(t.endpoint, 2)).toBe(400)
    const { rows, summary } = await t.finish()
    expect(rows.map((r) => [r.status, r.error?.class ?? null])).toEqual([
      ['success', null],
      ['failure', 'budget_exceeded'],
    ])
    expect(summary.proxy_requests).toBe(2)
    expect(summary.gateway).toMatchObject({ harness_refused: 1, refusals: { auth: 0, budget: 1, rate: 0 } })
    expect(summary.budget_exceeded).toBe(true)
    expect(summary.flags).toContain('gateway_refused_budget')
  })

  it('auth and rate refusals: the harness’s refused request is kept; a refusal outside its requests is left out', async () => {
    const c = await open()
    const t = await c.begin(who('ref-b'), {})
    expect(await ask(t.endpoint, 1)).toBe(200)
    fake.refuseNext = 'rate'
    expect(await ask(t.endpoint, 2)).toBe(429)
    // A refusal logged on the key by someone else's probe, well after the harness's requests.
    const later = Date.now() + 2500
    const key = [...fake.keys.values()][0]!
    fake.addRows([
      spendRow({
        request_id: 'probe-1',
        api_key: key.hash,
        spend: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        start: later,
        end: later + 5,
        model: 'gpt-test',
        model_id: null,
        metadata: { error_information: { error_class: 'AuthenticationError', error_code: '401' } },
        sessionId: 'other',
        status: 'failure',
      }),
    ])
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(2)
    expect(summary.proxy_requests).toBe(2)
    expect(summary.gateway).toMatchObject({
      harness_rows: 1,
      harness_refused: 1,
      refusals: { auth: 1, budget: 0, rate: 1 },
    })
    expect(summary.gateway?.left_out.rows).toBe(1)
    const probe = summary.gateway?.examples.find((e) => e.request_id === 'probe-1')
    expect(probe?.kind).toBe('refusal')
    expect(probe?.evidence).toMatch(
      /within no harness request the proxy recorded; error AuthenticationError 401 \(authentication\); no deployment .*; no spend_logs_metadata of ours/,
    )
    expect(summary.flags).toContain('gateway_refused_rate')
    expect(summary.flags).not.toContain('gateway_refused_auth')
  })
})

describe('the proxy’s record reconciles the rows, not only counts them', () => {
  const req = (
    start: number,
    end: number,
    output: number | null,
    status: HarnessRequest['status'] = 'success',
  ) => ({
    started_at: new Date(start).toISOString(),
    ended_at: new Date(end).toISOString(),
    status,
    http_status: status === 'success' ? 200 : 500,
    input_tokens: output === null ? null : 40,
    output_tokens: output,
  })
  const row = (
    id: string,
    start: number,
    end: number,
    output: number,
    status: 'success' | 'failure' = 'success',
  ) =>
    spendRow({
      request_id: id,
      api_key: 'h',
      spend: 0.001,
      prompt_tokens: 40,
      completion_tokens: output,
      start,
      end,
      model: 'gpt-test',
      metadata: {},
      sessionId: 's',
      status,
    })
  const t0 = Date.UTC(2026, 5, 1, 9)

  it('the answer is the row whose tokens equal the usage chunk the proxy read, whatever the order', () => {
    const v = classifyGatewayRows(
      [row('late', t0 + 300, t0 + 800, 9), row('real', t0 + 100, t0 + 700, 7)],
      [req(t0, t0 + 900, 7)],
      { requestedGroup: 'gpt-test' },
    )
    expect(v.map((x) => [x.kind, x.answer, x.tokens_match])).toEqual([
      ['retry', false, null],
      ['harness', true, true],
    ])
  })

  it('a stream the proxy saw without usage matches on status; its tokens are not claimed to match', () => {
    const v = classifyGatewayRows([row('only', t0 + 100, t0 + 700, 7)], [req(t0, t0 + 900, null)], {
      requestedGroup: 'gpt-test',
    })
    expect(v[0]).toMatchObject({ kind: 'harness', answer: true, tokens_match: null })
  })
})
