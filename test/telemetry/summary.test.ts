import { describe, expect, it } from 'vitest'
import type { SelfReport } from '../../src/records/attempt.js'
import { TelemetrySummarySchema } from '../../src/records/ledger.js'
import {
  modelMatches,
  selfReportDivergence,
  summarizeAttempt,
  worseCoverage,
} from '../../src/telemetry/summary.js'
import { row } from './support/rows.js'

const ctx = { source: 'ledger' as const, declaredModel: 'gpt-test' }
const self = (over: Partial<SelfReport>): SelfReport => ({
  input_tokens: null,
  output_tokens: null,
  cache_read_tokens: null,
  cache_write_tokens: null,
  cost_usd: null,
  requests: null,
  turns: null,
  ...over,
})

describe('summarizeAttempt', () => {
  it('sums a complete attempt and counts aux requests and the first request', () => {
    const rows = [
      row({ request_shape: { bytes: 2500, tools: 0, messages: 1, system_bytes: 10 } }),
      row({ request_shape: { bytes: 30800, tools: 10, messages: 2, system_bytes: 9800 } }),
      row(),
    ]
    const s = summarizeAttempt(rows, ctx)
    expect(TelemetrySummarySchema.parse(s)).toBeTruthy()
    expect(s).toMatchObject({
      coverage: 'complete',
      reason: null,
      rows: 3,
      proxy_requests: 3,
      input_tokens: 300,
      input_fresh_tokens: 180,
      cache_read_tokens: 120,
      output_tokens: 30,
      spend_usd: 0.003,
      spend_source: 'recomputed',
      first_request_bytes: 30800,
      first_request_tools: 10,
      aux_requests: 1,
      model_mismatch: false,
      unpriced_rows: 0,
    })
  })

  it('a request cut off mid-answer with usage so far makes the attempt partial, totals kept as lower bounds', () => {
    const cut = row({
      status: 'failure',
      error: { class: 'client_aborted', code: null, message: 'HTTP 200' },
      flags: ['usage_partial'],
    })
    const s = summarizeAttempt([row(), cut], ctx)
    expect(s).toMatchObject({
      coverage: 'partial',
      reason: '1 request was cut off mid-answer with usage counted so far: token totals are lower bounds',
      input_tokens: 200,
      output_tokens: 20,
    })
    expect(s.flags).toContain('usage_partial')
    expect(summarizeAttempt([row(), row()], ctx).coverage).toBe('complete')
  })

  it('an unpriced row makes the spend null (never free) and is counted', () => {
    const s = summarizeAttempt(
      [row(), row({ spend_usd: null, spend_source: 'unpriced', flags: ['unpriced'] })],
      ctx,
    )
    expect(s.spend_usd).toBeNull()
    expect(s.unpriced_rows).toBe(1)
    expect(s.flags).toContain('unpriced')
    expect(s.spend_source).toBe('mixed')
  })

  it('unknown cache semantics: coverage unknown and no fresh/cache totals', () => {
    const s = summarizeAttempt(
      [
        row({
          cache_semantics: 'unknown',
          tokens: {
            input_total: 100,
            input_fresh: null,
            cache_read: null,
            cache_write: null,
            output: 5,
            reasoning: null,
          },
        }),
      ],
      ctx,
    )
    expect(s.coverage).toBe('unknown')
    expect(s.input_tokens).toBe(100)
    expect(s.input_fresh_tokens).toBeNull()
    expect(s.cache_read_tokens).toBeNull()
  })

  it('a model other than the declared one is a mismatch; dated snapshots are not', () => {
    expect(summarizeAttempt([row({ model_observed: 'gpt-test-2025-08-07' })], ctx).model_mismatch).toBe(false)
    const s = summarizeAttempt([row({ model_observed: 'claude-sonnet-4-5' })], ctx)
    expect(s.model_mismatch).toBe(true)
    expect(s.flags).toContain('model_mismatch')
    expect(s.reason).toContain('claude-sonnet-4-5')
  })

  it('non-inference requests alone are still missing', () => {
    const s = summarizeAttempt([row({ api: 'other', call_type: 'count_tokens' })], ctx)
    expect(s.coverage).toBe('missing')
    expect(s.flags).toContain('telemetry_bypass_suspected')
  })
})

describe('rows lost behind the front proxy vs a proxy bypass', () => {
  const litellm = { source: 'litellm' as const, declaredModel: 'gpt-test' }

  it('no row while the proxy forwarded 3 requests: missing, rows lost (not a bypass), count kept', () => {
    const s = summarizeAttempt([], { ...litellm, forwardedRequests: 3 })
    expect(TelemetrySummarySchema.parse(s)).toBeTruthy()
    expect(s.coverage).toBe('missing')
    expect(s.reason).toBe(
      'LiteLLM logged 0 of the 3 requests the proxy forwarded (spend logs lost or not yet written)',
    )
    expect(s.flags).toContain('ledger_rows_lost')
    expect(s.flags).not.toContain('telemetry_bypass_suspected')
    expect(s.proxy_requests).toBe(3)
    // Missing is never zero: no spend, no tokens.
    expect(s.spend_usd).toBeNull()
    expect(s.input_tokens).toBeNull()
    expect(s.output_tokens).toBeNull()
  })

  it('one forwarded request reads in the singular', () => {
    const s = summarizeAttempt([], { ...litellm, forwardedRequests: 1 })
    expect(s.reason).toBe(
      'LiteLLM logged 0 of the 1 request the proxy forwarded (spend logs lost or not yet written)',
    )
  })

  it.each<[number | null | undefined, string]>([
    [0, 'the proxy saw nothing'],
    [null, 'no proxy count'],
    [undefined, 'no proxy in front'],
  ])('forwarded %s (%s) with no row stays a suspected bypass (F14)', (forwarded, _why) => {
    const s = summarizeAttempt([], { ...litellm, forwardedRequests: forwarded })
    expect(s.coverage).toBe('missing')
    expect(s.flags).toContain('telemetry_bypass_suspected')
    expect(s.flags).not.toContain('ledger_rows_lost')
    expect(s.reason).toContain('possible proxy bypass')
    expect(s.proxy_requests).toBeNull()
  })

  it('a finding that already makes the attempt missing is neither a bypass nor lost rows', () => {
    const s = summarizeAttempt([], {
      ...litellm,
      forwardedRequests: 2,
      findings: [
        { coverage: 'missing', reason: 'LiteLLM capture failed: ECONNREFUSED', flag: 'capture_failed' },
      ],
    })
    expect(s.coverage).toBe('missing')
    expect(s.reason).toBe('LiteLLM capture failed: ECONNREFUSED')
    expect(s.flags).toEqual(['capture_failed'])
    expect(s.proxy_requests).toBe(2)
  })

  it('some rows lost: proxy_requests is the forwarded count, not the rows', () => {
    const eight = Array.from({ length: 8 }, () => row({ source: 'litellm', spend_source: 'litellm' }))
    const s = summarizeAttempt(eight, { ...litellm, forwardedRequests: 9 })
    expect(s.rows).toBe(8)
    expect(s.proxy_requests).toBe(9)
  })
})

describe('modelMatches', () => {
  it.each([
    ['gpt-5-mini', 'gpt-5-mini-2025-08-07', true],
    ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', true],
    ['gemini-2.5-pro', 'models/gemini-2.5-pro', true],
    ['openai/gpt-5.2', 'gpt-5.2', true],
    ['gpt-5', 'gpt-5-mini', false],
    ['gpt-5.2', 'gpt-4o', false],
  ])('%s vs %s → %s', (d, o, want) => {
    expect(modelMatches(d, o)).toBe(want)
  })
})

describe('F01: spend log silently missing rows', () => {
  const eight = Array.from({ length: 8 }, () =>
    row({
      source: 'litellm',
      spend_usd: 0.071,
      spend_source: 'litellm',
      tokens: {
        input_total: 24358,
        input_fresh: 24358,
        cache_read: 0,
        cache_write: 0,
        output: 35,
        reasoning: null,
      },
    }),
  )
  const summary = summarizeAttempt(eight, { source: 'litellm', declaredModel: 'gpt-test' })

  it('the harness reporting 9 requests against 8 rows makes coverage partial, 8/9', () => {
    const check = selfReportDivergence(summary, self({ requests: 9 }))
    expect(summary.coverage).toBe('complete')
    expect(check.summary.coverage).toBe('partial')
    expect(check.summary.reason).toContain('telemetry coverage 8/9')
    expect(check.summary.flags).toContain('telemetry_rows_missing')
    expect(check.requests).toEqual({ telemetry: 8, harness: 9 })
    // 9/8 is within 1.5×: a coverage gap, not a divergence of the self-report.
    expect(check.diverged).toBe(false)
  })

  it('a harness that reports fewer requests (title call left out) leaves coverage complete', () => {
    const check = selfReportDivergence(summary, self({ requests: 7 }))
    expect(check.summary.coverage).toBe('complete')
  })

  it('without an independent count a LiteLLM capture is unknown, not complete', () => {
    const unverified = { ...summary, flags: [...summary.flags, 'request_count_unverified'] }
    expect(selfReportDivergence(unverified, null).summary.coverage).toBe('unknown')
    const confirmed = selfReportDivergence(unverified, self({ requests: 8 }))
    expect(confirmed.summary.coverage).toBe('complete')
    expect(confirmed.summary.flags).not.toContain('request_count_unverified')
  })
})

describe('selfReportDivergence', () => {
  const s = summarizeAttempt([row(), row()], ctx) // input 200 (fresh 120), output 20, 2 requests

  it('flags tokens beyond the factor either way', () => {
    expect(
      selfReportDivergence(s, self({ input_tokens: 200, output_tokens: 20, requests: 2 })).diverged,
    ).toBe(false)
    // Harnesses that count fresh input only still match.
    expect(selfReportDivergence(s, self({ input_tokens: 120, output_tokens: 20 })).diverged).toBe(false)
    const hi = selfReportDivergence(s, self({ input_tokens: 400, output_tokens: 20 }))
    expect(hi.diverged).toBe(true)
    expect(hi.summary.flags).toContain('self_report_divergence')
    expect(selfReportDivergence(s, self({ requests: 4 })).diverged).toBe(true)
    expect(selfReportDivergence(s, self({ input_tokens: 200, output_tokens: 20 }), 3).diverged).toBe(false)
  })

  it('missing telemetry with harness activity is telemetry_missing, never $0 (F05, F14)', () => {
    const missing = summarizeAttempt([], ctx)
    const check = selfReportDivergence(missing, self({ requests: 14 }))
    expect(check.summary.coverage).toBe('missing')
    expect(check.summary.flags).toContain('telemetry_missing')
    expect(check.summary.spend_usd).toBeNull()
  })
})

describe('worseCoverage', () => {
  it('orders complete < unknown < partial < missing', () => {
    expect(worseCoverage('complete', 'unknown')).toBe('unknown')
    expect(worseCoverage('partial', 'unknown')).toBe('partial')
    expect(worseCoverage('partial', 'missing')).toBe('missing')
  })
})
