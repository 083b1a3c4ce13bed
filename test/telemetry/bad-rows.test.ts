import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { AttemptRecordSchema } from '../../src/records/attempt.js'
import { LedgerRowSchema, TelemetrySummarySchema } from '../../src/records/ledger.js'
import { MAX_LEDGER_TOKENS, MAX_LEDGER_USD } from '../../src/records/limits.js'
import type { LiteLLMSettings } from '../../src/telemetry/litellm/capture.js'
import { type LiteLLMCapture, openLiteLLMCapture } from '../../src/telemetry/litellm/capture.js'
import { checkLedgerRow } from '../../src/telemetry/row-check.js'
import { summarizeAttempt } from '../../src/telemetry/summary.js'
import { messageOf } from '../../src/util/errors.js'
import { FakeLiteLLM } from './support/fake-litellm.js'
import { row } from './support/rows.js'

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
  settle_s: 0.1,
  max_wait_s: 5,
  tolerance_usd: 0.0001,
  page_size: 1000,
}
const attribution = {
  experiment_id: 'exp',
  run_id: 'run-7',
  cell_id: 'opencode',
  instance_id: 'inst-1',
  trial: 0,
  attempt: 1,
}

let fake: FakeLiteLLM
let dir: string
let capture: LiteLLMCapture | null = null
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-badrows-'))
})
afterEach(async () => {
  await capture?.close()
  capture = null
  await fake?.close()
  await rm(dir, { recursive: true, force: true })
})

async function chat(endpoint: { origin: string; apiKey: string }, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${endpoint.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${endpoint.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `q${i}` }] }),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
}

describe('a bad LiteLLM row is an input error of that row', () => {
  it('negative duration, 1e20 tokens and a negative spend: the row is kept, its bad figures null, the attempt is summed and written', async () => {
    fake = await new FakeLiteLLM({ visibilityDelayMs: 50 }).start()
    capture = await openLiteLLMCapture({
      baseUrl: fake.origin,
      masterKey: fake.masterKey,
      settings: SETTINGS,
      route: ROUTE,
      runId: 'run-7',
      experimentId: 'exp',
      ledgerFile: path.join(dir, 'ledger.jsonl'),
      retry: { baseMs: 1, maxMs: 5 },
    })
    const t = await capture.begin(attribution, {})
    await chat(t.endpoint, 3)
    const stored = fake.rows.map((r) => r.row)
    expect(stored).toHaveLength(3)
    const bad = stored[1] as Record<string, unknown>
    bad.request_duration_ms = -5
    bad.completion_tokens = 1e20
    bad.spend = -0.5
    const { rows, summary } = await t.finish()

    expect(rows).toHaveLength(3)
    for (const r of rows) LedgerRowSchema.parse(r)
    const marked = rows.find((r) => r.request_id === bad.request_id)
    expect(marked).toMatchObject({ duration_ms: null, spend_logged_usd: null })
    expect(marked?.tokens.output).toBeNull()
    expect(marked?.flags).toContain('input_error')
    // The neighbours are untouched.
    for (const r of rows.filter((x) => x !== marked)) {
      expect(r.flags).not.toContain('input_error')
      expect(r.tokens.output).toBeGreaterThan(0)
    }
    TelemetrySummarySchema.parse(summary)
    expect(summary.coverage).toBe('partial')
    expect(summary.flags).toContain('input_error')
    expect(summary.reason).toContain(`input error in LiteLLM spend logs: row "${bad.request_id}"`)
    expect(summary.reason).toContain('duration_ms (request_duration_ms) must be a duration from 0 to')
    expect(summary.reason).toContain('(got -5)')
    expect(summary.reason).toContain('tokens.output (completion_tokens) must be a whole number of tokens')
    expect(summary.reason).toContain('(got 100000000000000000000)')
    expect(summary.reason).toContain('spend_logged_usd (spend) must be a spend from 0 to')
    expect(summary.reason).toContain('(got -0.5)')
    const ledger = (await readFile(path.join(dir, 'ledger.jsonl'), 'utf8')).trim().split('\n')
    expect(ledger).toHaveLength(3)
  })
})

describe('sums that would overflow are null with the rows that caused them', () => {
  it('two requests of the largest token count: the attempt total is null, the rows are named', () => {
    const rows = [
      row({ request_id: 'big-1', tokens: { ...row().tokens, output: MAX_LEDGER_TOKENS } }),
      row({ request_id: 'big-2', tokens: { ...row().tokens, output: MAX_LEDGER_TOKENS } }),
      row({ request_id: 'small' }),
    ]
    const s = summarizeAttempt(rows, { source: 'ledger', declaredModel: null })
    expect(s.output_tokens).toBeNull()
    expect(s.input_tokens).toBe(rows.reduce((a, r) => a + (r.tokens.input_total ?? 0), 0))
    expect(s.coverage).toBe('partial')
    expect(s.flags).toContain('sum_overflow')
    expect(s.reason).toMatch(
      /the output tokens of 3 request\(s\) exceeds \d+ \(largest: big-1, big-2, small\)/,
    )
    TelemetrySummarySchema.parse(s)
  })

  it('spends summing beyond a billion dollars: spend is null with the rows named; 1e308 is an input error', () => {
    const rows = [
      row({ request_id: 'costly-1', spend_usd: MAX_LEDGER_USD }),
      row({ request_id: 'costly-2', spend_usd: MAX_LEDGER_USD }),
    ]
    const s = summarizeAttempt(rows, { source: 'ledger', declaredModel: null })
    expect(s.spend_usd).toBeNull()
    expect(s.reason).toMatch(
      /the spend of 2 request\(s\) exceeds \$1000000000 \(largest: costly-1, costly-2\)/,
    )
    TelemetrySummarySchema.parse(s)

    const { row: checked, problems } = checkLedgerRow(row({ request_id: 'huge', spend_usd: 1e308 }))
    expect(checked.spend_usd).toBeNull()
    expect(problems).toEqual([
      expect.objectContaining({ request_id: 'huge', field: 'spend_usd', value: 1e308, column: null }),
    ])
  })

  it('an attempt record with 1e308 USD is refused by its schema naming the field, not as a JSON dump', () => {
    const r = AttemptRecordSchema.safeParse({ telemetry: { spend_usd: 1e308 } })
    expect(r.success).toBe(false)
    const msg = messageOf(r.error)
    expect(msg).toMatch(/^a record does not match its schema: /)
    expect(msg).not.toMatch(/^\[/)
  })
})
