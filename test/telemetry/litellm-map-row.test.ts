import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { mapSpendLogRow } from '../../src/telemetry/litellm/map-row.js'
import { sha256 } from '../../src/util/json.js'
import { spendRow } from './support/fake-litellm.js'

const SONNET = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
const FALLBACK = { experiment_id: 'e', run_id: 'r', cell_id: 'c', instance_id: 'i', trial: 0, attempt: 1 }
const T = Date.UTC(2026, 2, 1, 12)

describe('mapSpendLogRow', () => {
  it('F02: maps the double-charged Anthropic row to $0.054399 with spend_mismatch', () => {
    const r = mapSpendLogRow(
      {
        ...spendRow({
          request_id: 'r1',
          api_key: 'h',
          spend: 0.091311,
          prompt_tokens: 12307,
          completion_tokens: 550,
          start: T,
          end: T + 1000,
          model: 'anthropic/claude-3-7-sonnet',
          metadata: {
            usage_object: {
              prompt_tokens: 12307,
              completion_tokens: 550,
              cache_creation_input_tokens: 12304,
              cache_read_input_tokens: 0,
            },
          },
          sessionId: 's',
        }),
      },
      SONNET,
      FALLBACK,
    )
    expect(LedgerRowSchema.parse(r)).toBeTruthy()
    expect(r.tokens).toMatchObject({
      input_total: 12307,
      input_fresh: 3,
      cache_write: 12304,
      cache_read: 0,
      output: 550,
    })
    expect(r).toMatchObject({
      spend_usd: 0.054399,
      spend_logged_usd: 0.091311,
      spend_recomputed_usd: 0.054399,
      spend_source: 'recomputed',
    })
    expect(r.flags).toContain('spend_mismatch')
  })

  it('keeps failures with the class and code, never the message text', () => {
    const r = mapSpendLogRow(
      spendRow({
        request_id: 'f1',
        api_key: 'h',
        spend: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        start: T,
        end: T,
        model: 'gpt-x',
        status: 'failure',
        metadata: {
          error_information: {
            error_class: 'BudgetExceededError',
            error_code: '400',
            error_message: 'Budget has been exceeded! secret prompt',
          },
          spend_logs_metadata: {
            hw_experiment: 'exp',
            hw_run: 'run',
            hw_cell: 'openhands',
            hw_instance: 'inst-101',
            hw_trial: 0,
            hw_attempt: 2,
          },
        },
        sessionId: 's',
      }),
      null,
      FALLBACK,
    )
    expect(r.status).toBe('failure')
    expect(r.error).toEqual({ class: 'budget_exceeded', code: '400', message: 'BudgetExceededError' })
    expect(JSON.stringify(r)).not.toContain('secret prompt')
    expect(r.attribution).toEqual({
      experiment_id: 'exp',
      run_id: 'run',
      cell_id: 'openhands',
      instance_id: 'inst-101',
      trial: 0,
      attempt: 2,
    })
    expect(r.spend_usd).toBe(0)
  })

  it('never copies the key hash or the heavy columns', () => {
    const row = spendRow({
      request_id: 'x',
      api_key: sha256('sk-secret'),
      spend: 0.01,
      prompt_tokens: 10,
      completion_tokens: 2,
      start: T,
      end: T + 10,
      model: 'm',
      metadata: {},
      sessionId: 's',
    })
    const text = JSON.stringify(mapSpendLogRow(row, null, FALLBACK))
    expect(text).not.toContain(sha256('sk-secret'))
    expect(text).not.toContain('never')
  })
})

const FIXTURE = path.resolve(
  __dirname,
  '../../../shared/data/litellm/fake_spend_logs_v2_fixture.SYNTHETIC.json',
)
const haveShared = existsSync(FIXTURE)
if (!haveShared) console.warn(`skipping the shared LiteLLM fixture test: ${FIXTURE} is absent (fresh clone)`)

describe.skipIf(!haveShared)('the shared synthetic /spend/logs/v2 fixture', () => {
  it('maps both rows with the documented cache semantics', () => {
    const fx = JSON.parse(readFileSync(FIXTURE, 'utf8'))
    expect(sha256(fx.virtual_key_example.raw)).toBe(
      fx.virtual_key_example.sha256_hex_stored_in_api_key_column,
    )
    const [openai, anthropic] = fx.response.data.map((r: Record<string, unknown>) =>
      mapSpendLogRow(r, null, FALLBACK),
    )
    expect(openai.tokens).toEqual({
      input_total: 18240,
      input_fresh: 1856,
      cache_read: 16384,
      cache_write: 0,
      output: 412,
      reasoning: 256,
    })
    expect(anthropic.tokens).toEqual({
      input_total: 18220,
      input_fresh: 812,
      cache_read: 15360,
      cache_write: 2048,
      output: 391,
      reasoning: 0,
    })
    expect(openai).toMatchObject({
      spend_usd: 0.02741,
      spend_source: 'litellm',
      provider: 'openai',
      api: 'chat',
    })
    expect(openai.first_token_at).toBe('2026-03-01T12:00:01.010Z')
    expect(openai.ttft_ms).toBe(887)
    expect(anthropic.attribution).toEqual(FALLBACK)
    for (const r of [openai, anthropic]) expect(LedgerRowSchema.parse(r)).toBeTruthy()
  })
})
