import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import OpenAI from 'openai'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { type Attribution, LedgerRowSchema, TelemetrySummarySchema } from '../../src/records/ledger.js'
import type { LiteLLMSettings } from '../../src/telemetry/litellm/capture.js'
import { type LiteLLMCapture, openLiteLLMCapture } from '../../src/telemetry/litellm/capture.js'
import { FakeLiteLLM, type FakeLiteLLMOptions, hashKey } from './support/fake-litellm.js'

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
  max_wait_s: 5,
  tolerance_usd: 0.0001,
  page_size: 1000,
}
const attribution = (instance: string, attempt = 1): Attribution => ({
  experiment_id: 'exp',
  run_id: 'run-7',
  cell_id: 'opencode',
  instance_id: instance,
  trial: 0,
  attempt,
})

let fake: FakeLiteLLM
let dir: string
let capture: LiteLLMCapture | null = null

/** Start a fake LiteLLM (rows visible after `fakeDelayMs`, more knobs in `fakeOptions`) and a capture. */
async function open(
  over: Partial<Parameters<typeof openLiteLLMCapture>[0]> = {},
  fakeDelayMs = 200,
  fakeOptions: FakeLiteLLMOptions = {},
): Promise<LiteLLMCapture> {
  fake = await new FakeLiteLLM({ visibilityDelayMs: fakeDelayMs, ...fakeOptions }).start()
  capture = await openLiteLLMCapture({
    baseUrl: fake.origin,
    masterKey: fake.masterKey,
    settings: SETTINGS,
    route: ROUTE,
    runId: 'run-7',
    experimentId: 'exp',
    ledgerFile: path.join(dir, 'ledger.jsonl'),
    retry: { baseMs: 1, maxMs: 5 },
    ...over,
  })
  return capture
}

async function chat(endpoint: { origin: string; apiKey: string }, n: number, stream = false): Promise<void> {
  const client = new OpenAI({ apiKey: endpoint.apiKey, baseURL: `${endpoint.origin}/v1`, maxRetries: 0 })
  for (let i = 0; i < n; i++) {
    if (stream) {
      const s = await client.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: `hello ${i}` }],
        stream: true,
        stream_options: { include_usage: true },
      })
      for await (const _ of s) {
        // drain
      }
    } else {
      await client.chat.completions.create({
        model: 'gpt-test',
        messages: [{ role: 'user', content: `hello ${i}` }],
      })
    }
  }
}

/** `n` plain chat requests, `parallel` at a time, with fetch (the OpenAI client is too slow for 10 000). */
async function burst(endpoint: { origin: string; apiKey: string }, n: number, parallel = 16): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++
      const res = await fetch(`${endpoint.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${endpoint.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `q${i}` }] }),
      })
      if (res.status !== 200) throw new Error(`request ${i}: HTTP ${res.status}`)
      await res.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-litellm-'))
})
afterEach(async () => {
  await capture?.close()
  capture = null
  await fake?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('LiteLLM capture, virtual-key mode behind the front proxy', () => {
  it('captures the attempt’s rows after the batch writes land, reconciles them and deletes the key', async () => {
    const c = await open({}, 1500)
    const t = await c.begin(attribution('inst-1'), { maxSpendUsd: 5 })
    expect(t.endpoint.origin).toBe(c.proxy?.origin)
    const generated = [...fake.keys.values()]
    expect(generated).toHaveLength(1)
    expect(generated[0]).toMatchObject({ maxBudget: 5 })
    expect(generated[0]?.metadata).toMatchObject({
      experiment: 'exp',
      cell: 'opencode',
      instance: 'inst-1',
      attempt: 1,
      trial: 0,
    })
    expect(generated[0]?.expires).not.toBeNull()
    const virtualKey = generated[0]?.key as string
    expect(t.endpoint.apiKey).not.toBe(virtualKey)

    await chat(t.endpoint, 2)
    await chat(t.endpoint, 1, true)
    // The last row is not visible yet (the fake writes rows 1.5 s late): finish() has to wait for it.
    expect(fake.rows.some((r) => r.visibleAt > Date.now())).toBe(true)
    const { rows, summary } = await t.finish()

    expect(rows).toHaveLength(3)
    for (const r of rows) {
      expect(LedgerRowSchema.parse(r)).toBeTruthy()
      expect(r.source).toBe('litellm')
      expect(r.attribution).toEqual(attribution('inst-1'))
      expect(r.spend_source).toBe('litellm')
      expect(r.spend_logged_usd).toBeGreaterThan(0)
      expect(r.tokens.input_fresh).toBe(r.tokens.input_total)
    }
    expect(TelemetrySummarySchema.parse(summary)).toBeTruthy()
    expect(summary).toMatchObject({
      source: 'litellm',
      coverage: 'complete',
      proxy_requests: 3,
      model_mismatch: false,
    })
    expect(summary.reconciliation).toMatchObject({
      rows_fetched: 3,
      duplicates_dropped: 0,
      proxy_requests: 3,
    })
    expect(summary.reconciliation?.key_spend_usd).toBeCloseTo(summary.reconciliation?.rows_spend_usd ?? -1, 9)
    expect(summary.reconciliation?.waited_ms).toBeGreaterThanOrEqual(150)
    expect(fake.rows.every((r) => r.visibleAt <= Date.now())).toBe(true)
    // Key deleted after capture; its rows survive.
    expect(fake.keys.size).toBe(0)
    expect(fake.rows.filter((r) => r.row.api_key === hashKey(virtualKey))).toHaveLength(3)
    // Every spend-log query used the hashed key, never the raw one, and explicit UTC bounds.
    const queries = fake.requests.filter((r) => r.path === '/spend/logs/v2')
    expect(queries.length).toBeGreaterThan(1)
    for (const q of queries) {
      expect(q.query.api_key).toBe(hashKey(virtualKey))
      expect(q.query.start_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      expect(q.query.end_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
      expect(Number(q.query.page_size)).toBeLessThanOrEqual(1000)
    }
    const ledger = await readFile(path.join(dir, 'ledger.jsonl'), 'utf8')
    expect(ledger.trim().split('\n')).toHaveLength(3)
    expect(ledger).not.toContain(virtualKey)
    expect(ledger).not.toContain(hashKey(virtualKey))
    expect(ledger).not.toContain('never')
  })

  it('F01: a lost spend-log row shows as coverage 8/9, partial', async () => {
    const c = await open({ settings: { ...SETTINGS, max_wait_s: 0.5 } }, 0)
    const t = await c.begin(attribution('inst-001'), {})
    await chat(t.endpoint, 4)
    fake.dropNextRows = 1 // a batch lost on a DB write: no row, no key spend
    await chat(t.endpoint, 5)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(8)
    expect(summary.coverage).toBe('partial')
    expect(summary.reason).toContain('telemetry coverage 8/9')
    expect(summary.flags).toContain('telemetry_rows_missing')
    expect(summary.reason).toContain('only 8 of 9 rows visible')
    // Key spend agrees with the rows (the lost batch took both): only the request count reveals the gap.
    expect(summary.flags).not.toContain('spend_unreconciled')
  })

  it('F06: a key over its LiteLLM budget gives failure rows with budget_exceeded', async () => {
    const c = await open({}, 0)
    const t = await c.begin(attribution('inst-101'), { maxSpendUsd: 0.000001 })
    await chat(t.endpoint, 1)
    const err = await chat(t.endpoint, 1).catch((e: unknown) => e)
    expect((err as { status?: number }).status).toBe(400)
    expect((err as { type?: string }).type).toBe('budget_exceeded')
    const { rows, summary } = await t.finish()
    expect(rows.map((r) => [r.status, r.error?.class ?? null])).toEqual([
      ['success', null],
      ['failure', 'budget_exceeded'],
    ])
    expect(summary.budget_exceeded).toBe(true)
    expect(summary.failed_rows).toBe(1)
  })

  it('spend on the key that no row explains makes coverage partial with the numbers', async () => {
    const c = await open({}, 0)
    const t = await c.begin(attribution('inst-2'), {})
    await chat(t.endpoint, 1)
    const key = [...fake.keys.values()][0]
    key?.spendEvents.push({ usd: 0.5, visibleAt: Date.now() })
    const { summary } = await t.finish()
    expect(summary.coverage).toBe('partial')
    expect(summary.reason).toMatch(
      /spend-log rows sum to \$0\.0000\d+ but \/key\/info reports \$0\.5000\d+ for the key \(tolerance \$0\.000100\)/,
    )
    expect(summary.flags).toContain('spend_unreconciled')
  })

  it('F03: streamed rows logged at $0 take cost_breakdown.total_cost', async () => {
    // The client's default retry policy.
    const c = await open({ retry: undefined }, 0, { zeroSpendOnStream: true })
    const t = await c.begin(attribution('inst-3'), {})
    await chat(t.endpoint, 1, true)
    const { rows, summary } = await t.finish()
    expect(rows[0]).toMatchObject({ spend_logged_usd: 0, spend_source: 'cost_breakdown' })
    expect(rows[0]?.spend_usd).toBeGreaterThan(0)
    expect(rows[0]?.flags).toContain('logged_spend_zero')
    expect(summary.spend_usd).toBe(rows[0]?.spend_usd)
    expect(summary.spend_source).toBe('cost_breakdown')
  })

  it('an attempt whose requests never reached LiteLLM is missing, never $0', async () => {
    const c = await open({}, 0)
    const t = await c.begin(attribution('inst-4'), {})
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(0)
    expect(summary.coverage).toBe('missing')
    expect(summary.spend_usd).toBeNull()
    expect(summary.flags).toContain('telemetry_bypass_suspected')
    expect(summary.flags).not.toContain('ledger_rows_lost')
    expect(summary.proxy_requests).toBeNull()
    expect(summary.reconciliation?.proxy_requests).toBe(0)
  })

  it('LiteLLM logging none of the requests the proxy forwarded is lost rows, not a bypass', async () => {
    const c = await open({ settings: { ...SETTINGS, max_wait_s: 0.5 } }, 0)
    const t = await c.begin(attribution('inst-lost'), {})
    fake.dropNextRows = 3 // every batch write of the attempt lost: no row, no key spend
    await chat(t.endpoint, 3)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(0)
    expect(TelemetrySummarySchema.parse(summary)).toBeTruthy()
    expect(summary.coverage).toBe('missing')
    expect(summary.reason).toBe(
      'LiteLLM logged 0 of the 3 requests the proxy forwarded (spend logs lost or not yet written)',
    )
    expect(summary.flags).toContain('ledger_rows_lost')
    expect(summary.flags).toContain('spend_logs_unsettled')
    expect(summary.flags).not.toContain('telemetry_bypass_suspected')
    // The forwarded count stays visible: the attempt line reads "3 requests", never "requests unknown".
    expect(summary.proxy_requests).toBe(3)
    expect(summary.reconciliation).toMatchObject({ rows_fetched: 0, proxy_requests: 3 })
    expect(summary.spend_usd).toBeNull()
  })

  it('F04: paging that aborts part-way keeps the rows and marks the attempt partial', async () => {
    const c = await open(
      { settings: { ...SETTINGS, page_size: 2 }, retry: { retries: 1, baseMs: 1, maxMs: 2 } },
      0,
    )
    const t = await c.begin(attribution('inst-6'), {})
    await chat(t.endpoint, 5)
    let pagesSeen = 0
    fake.onSpendLogsPage = (page) => {
      // The quiescence probes ask for page 1 only; the capture's paging gets pages 1–2, then page 3 fails.
      if (page === 2 && ++pagesSeen === 1) fake.failNext = 99
    }
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(4)
    expect(summary.coverage).toBe('partial')
    expect(summary.flags).toContain('paging_aborted')
    expect(summary.reason).toContain('aborted on page 3 after 4 rows')
  })

  it('F04: 10 037 rows for one attempt settle on the paged count, complete, without waiting max_wait_s', async () => {
    const maxWaitS = 20
    const c = await open({ settings: { ...SETTINGS, settle_s: 0.2, max_wait_s: maxWaitS } }, 100)
    const t = await c.begin(attribution('inst-f04'), {})
    await burst(t.endpoint, 10_037)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(10_037)
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(10_037)
    expect(summary.coverage).toBe('complete')
    expect(summary.reason).toBeNull()
    expect(summary.flags).not.toContain('spend_logs_unsettled')
    expect(summary.reconciliation).toMatchObject({
      rows_fetched: 10_037,
      duplicates_dropped: 0,
      proxy_requests: 10_037,
    })
    expect(summary.reconciliation?.key_spend_usd).toBeCloseTo(summary.reconciliation?.rows_spend_usd ?? -1, 9)
    // LiteLLM caps `total` at 10 000: a settle check that trusted it would never see the 10 037 rows,
    // wait all of max_wait_s and flag the attempt unsettled (checked above). The wait is bounded by the
    // deadline; how fast it settles is a speed figure (bench/), not asserted on a loaded machine.
    expect(fake.rows.length).toBeGreaterThan(10_000)
    expect(summary.reconciliation?.waited_ms).toBeLessThan(maxWaitS * 1000)
  }, 120_000)

  it('LiteLLM going away mid-capture is reported as missing with the error, not thrown', async () => {
    const c = await open({ retry: { retries: 1, baseMs: 1, maxMs: 2 } }, 0)
    const t = await c.begin(attribution('inst-5'), {})
    await chat(t.endpoint, 1)
    await fake.close()
    const { summary } = await t.finish()
    expect(summary.coverage).toBe('missing')
    expect(summary.reason).toContain('LiteLLM capture failed')
    expect(summary.flags).toContain('capture_failed')
    // The proxy forwarded the request: unreadable spend logs are neither a bypass nor lost rows.
    expect(summary.flags).not.toContain('telemetry_bypass_suspected')
    expect(summary.flags).not.toContain('ledger_rows_lost')
    expect(summary.proxy_requests).toBe(1)
  })
})

describe('LiteLLM capture, metadata-header mode', () => {
  it('separates concurrent attempts on one shared key by their spend-logs metadata', async () => {
    const c = await open({ settings: { ...SETTINGS, attribution: 'metadata-header' } }, 50)
    const a = await c.begin(attribution('inst-a'), {})
    const b = await c.begin(attribution('inst-b'), { maxRequests: 1 })
    expect(fake.keys.size).toBe(0) // no virtual keys in this mode
    await Promise.all([chat(a.endpoint, 3), chat(b.endpoint, 1)])
    const refused = await chat(b.endpoint, 1).catch((e: unknown) => e)
    expect((refused as { status?: number }).status).toBe(429)
    const [ra, rb] = await Promise.all([a.finish(), b.finish()])
    expect(ra.rows).toHaveLength(3)
    expect(rb.rows).toHaveLength(1)
    expect(ra.rows.every((r) => r.attribution?.instance_id === 'inst-a')).toBe(true)
    expect(rb.rows[0]?.attribution?.instance_id).toBe('inst-b')
    expect(ra.summary.coverage).toBe('complete')
    // The refused request never reached LiteLLM, so it is not a missing row.
    expect(rb.summary.coverage).toBe('complete')
    const stored = fake.rows.map(
      (r) => (r.row.metadata as { spend_logs_metadata: Record<string, unknown> }).spend_logs_metadata,
    )
    expect(
      stored.every((m) => m.hw_experiment === 'exp' && m.hw_run === 'run-7' && m.hw_cell === 'opencode'),
    ).toBe(true)
    expect(
      fake.requests
        .filter((r) => r.path === '/spend/logs/v2')
        .every((r) => r.query.session_id && !r.query.api_key),
    ).toBe(true)
  })
})

describe('LiteLLM capture without the front proxy', () => {
  it('hands out the virtual key and marks the request count unverified', async () => {
    const c = await open({ frontProxy: false }, 0)
    const t = await c.begin(attribution('inst-d'), {})
    expect(t.endpoint.origin).toBe(fake.origin)
    expect(t.endpoint.apiKey).toBe([...fake.keys.values()][0]?.key)
    await chat(t.endpoint, 2)
    const { rows, summary } = await t.finish()
    expect(rows).toHaveLength(2)
    expect(summary.flags).toContain('request_count_unverified')
    expect(summary.reconciliation?.proxy_requests).toBeNull()
  })
})
