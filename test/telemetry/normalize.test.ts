import { describe, expect, it } from 'vitest'
import { cacheRuleFor } from '../../src/telemetry/cache-semantics.js'
import { normalizeUsage, projectUsage } from '../../src/telemetry/normalize.js'
import { chooseLoggedSpend, chooseProxySpend, recomputeSpendUsd } from '../../src/telemetry/prices.js'

const SONNET = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
const litellm = cacheRuleFor(null, 'litellm')

describe('cache semantics map', () => {
  it('states inclusive for OpenAI and Gemini, exclusive for Anthropic, unknown when unlisted', () => {
    expect(cacheRuleFor('openai', 'chat').semantics).toBe('inclusive')
    expect(cacheRuleFor('scripted', 'responses').semantics).toBe('inclusive')
    expect(cacheRuleFor('google', 'gemini').semantics).toBe('inclusive')
    expect(cacheRuleFor('anthropic', 'anthropic').semantics).toBe('exclusive')
    expect(cacheRuleFor(null, 'litellm').semantics).toBe('inclusive')
    expect(cacheRuleFor('anthropic', 'chat').semantics).toBe('unknown')
    expect(cacheRuleFor('x', 'other').semantics).toBe('unknown')
    expect(cacheRuleFor('openai', 'chat', 'unknown').semantics).toBe('unknown')
  })
})

describe('normalizeUsage per wire API', () => {
  it('chat: prompt_tokens includes cached_tokens', () => {
    const n = normalizeUsage(
      'chat',
      {
        prompt_tokens: 18240,
        completion_tokens: 412,
        prompt_tokens_details: { cached_tokens: 16384 },
        completion_tokens_details: { reasoning_tokens: 256 },
      },
      cacheRuleFor('openai', 'chat'),
    )
    expect(n.tokens).toEqual({
      input_total: 18240,
      input_fresh: 1856,
      cache_read: 16384,
      cache_write: 0,
      output: 412,
      reasoning: 256,
    })
  })

  it('anthropic: input_tokens excludes both cache counters', () => {
    const n = normalizeUsage(
      'anthropic',
      {
        input_tokens: 812,
        output_tokens: 391,
        cache_creation_input_tokens: 2048,
        cache_read_input_tokens: 15360,
      },
      cacheRuleFor('anthropic', 'anthropic'),
    )
    expect(n.tokens).toEqual({
      input_total: 18220,
      input_fresh: 812,
      cache_read: 15360,
      cache_write: 2048,
      output: 391,
      reasoning: null,
    })
  })

  it('gemini: thoughts count as output and reasoning', () => {
    const n = normalizeUsage(
      'gemini',
      {
        promptTokenCount: 500,
        cachedContentTokenCount: 200,
        candidatesTokenCount: 30,
        thoughtsTokenCount: 70,
      },
      cacheRuleFor('google', 'gemini'),
    )
    expect(n.tokens).toEqual({
      input_total: 500,
      input_fresh: 300,
      cache_read: 200,
      cache_write: 0,
      output: 100,
      reasoning: 70,
    })
  })

  it('unknown semantics: the split is null, never guessed', () => {
    const n = normalizeUsage(
      'chat',
      { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 50 } },
      cacheRuleFor('anthropic', 'chat'),
    )
    expect(n.tokens).toEqual({
      input_total: 100,
      input_fresh: null,
      cache_read: null,
      cache_write: null,
      output: 5,
      reasoning: null,
    })
    expect(n.flags).toEqual(['cache_semantics_unknown'])
  })

  it('counters that cannot be inclusive are flagged and not split', () => {
    const n = normalizeUsage(
      'chat',
      { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 50 } },
      cacheRuleFor('openai', 'chat'),
    )
    expect(n.tokens.input_fresh).toBeNull()
    expect(n.flags).toContain('cache_inconsistent')
  })

  it('absent usage is all null with usage_absent', () => {
    const n = normalizeUsage('chat', null, cacheRuleFor('openai', 'chat'))
    expect(n.tokens.input_total).toBeNull()
    expect(n.flags).toEqual(['usage_absent'])
  })
})

describe('F02: cache-write tokens double-charged', () => {
  const f02 = {
    request_id: 'r1',
    model: 'anthropic/claude-3-7-sonnet',
    spend: 0.091311,
    prompt_tokens: 12307,
    completion_tokens: 550,
    cache_creation_input_tokens: 12304,
    cache_read_input_tokens: 0,
  }

  it('normalises to uncached 3, cache_write 12304, cache_read 0, output 550', () => {
    const { tokens } = normalizeUsage('litellm', f02, litellm)
    expect(tokens).toMatchObject({
      input_total: 12307,
      input_fresh: 3,
      cache_write: 12304,
      cache_read: 0,
      output: 550,
    })
  })

  it('recomputes $0.054399 and flags spend_mismatch against the logged $0.091311', () => {
    const { tokens } = normalizeUsage('litellm', f02, litellm)
    expect(recomputeSpendUsd(tokens, SONNET)).toBe(0.054399)
    const c = chooseLoggedSpend(0.091311, null, tokens, SONNET)
    expect(c).toEqual({
      spend_usd: 0.054399,
      spend_source: 'recomputed',
      spend_recomputed_usd: 0.054399,
      flags: ['spend_mismatch'],
    })
  })

  it('the same row shape from an OpenAI-style provider does not subtract the cache twice', () => {
    // LiteLLM back-fills cache_read_input_tokens from prompt_tokens_details.cached_tokens: one count, two spellings.
    const openaiStyle = {
      prompt_tokens: 12307,
      completion_tokens: 550,
      metadata: {
        usage_object: {
          prompt_tokens: 12307,
          completion_tokens: 550,
          prompt_tokens_details: { cached_tokens: 12304 },
          cache_read_input_tokens: 12304,
        },
        additional_usage_values: {
          prompt_tokens_details: { cached_tokens: 12304 },
          cache_read_input_tokens: 12304,
        },
      },
    }
    const { tokens } = normalizeUsage('litellm', openaiStyle, litellm)
    expect(tokens).toMatchObject({ input_total: 12307, input_fresh: 3, cache_read: 12304, cache_write: 0 })
    // 3·3 + 12304·0.3 + 550·15 per Mtok
    expect(recomputeSpendUsd(tokens, SONNET)).toBe(0.0119502)
  })

  it('a logged spend that agrees within tolerance is kept as logged', () => {
    const { tokens } = normalizeUsage('litellm', f02, litellm)
    expect(chooseLoggedSpend(0.0544, null, tokens, SONNET)).toMatchObject({
      spend_usd: 0.0544,
      spend_source: 'litellm',
      flags: [],
    })
  })
})

describe('F03: streamed requests logged with spend = 0', () => {
  const f03 = {
    request_id: 'r1',
    model: 'azure_ai/model-x',
    spend: 0,
    total_tokens: 10001,
    prompt_tokens: 9800,
    completion_tokens: 201,
    metadata: { cost_breakdown: { total_cost: 0.0417 }, spend_logs_metadata: { hw_cell: 'codex/s0' } },
  }
  const { tokens } = normalizeUsage('litellm', f03, litellm)

  it('uses cost_breakdown.total_cost when present', () => {
    expect(chooseLoggedSpend(0, 0.0417, tokens, null)).toEqual({
      spend_usd: 0.0417,
      spend_source: 'cost_breakdown',
      spend_recomputed_usd: null,
      flags: ['logged_spend_zero'],
    })
  })

  it('else recomputes from the price table', () => {
    const c = chooseLoggedSpend(0, null, tokens, { input: 1, output: 2, cache_read: null, cache_write: null })
    expect(c).toMatchObject({ spend_usd: 0.010202, spend_source: 'recomputed', flags: ['logged_spend_zero'] })
  })

  it('else it is unpriced (null), never free', () => {
    expect(chooseLoggedSpend(0, null, tokens, null)).toEqual({
      spend_usd: null,
      spend_source: 'unpriced',
      spend_recomputed_usd: null,
      flags: ['logged_spend_zero', 'unpriced'],
    })
  })

  it('a row with no tokens and no spend is free', () => {
    const none = normalizeUsage(
      'litellm',
      { prompt_tokens: 0, completion_tokens: 0, spend: 0 },
      litellm,
    ).tokens
    expect(chooseLoggedSpend(0, null, none, null)).toMatchObject({ spend_usd: 0, spend_source: 'litellm' })
  })
})

describe('prices', () => {
  it('charges unpriced cache classes at the input rate', () => {
    const t = {
      input_total: 1000,
      input_fresh: 600,
      cache_read: 400,
      cache_write: 0,
      output: 100,
      reasoning: null,
    }
    expect(recomputeSpendUsd(t, { input: 2, output: 8, cache_read: null, cache_write: null })).toBe(0.0028)
    expect(recomputeSpendUsd(t, { input: 2, output: 8, cache_read: 0.5, cache_write: null })).toBe(0.0022)
  })

  it('prices an unknown split only when every input class costs the same', () => {
    const t = {
      input_total: 1000,
      input_fresh: null,
      cache_read: null,
      cache_write: null,
      output: 100,
      reasoning: null,
    }
    expect(recomputeSpendUsd(t, { input: 2, output: 8, cache_read: null, cache_write: null })).toBe(0.0028)
    expect(recomputeSpendUsd(t, { input: 2, output: 8, cache_read: 0.5, cache_write: null })).toBeNull()
  })

  it('a proxy row with tokens and no price table is unpriced', () => {
    const t = { input_total: 10, input_fresh: 10, cache_read: 0, cache_write: 0, output: 1, reasoning: null }
    expect(chooseProxySpend(t, undefined)).toMatchObject({
      spend_usd: null,
      spend_source: 'unpriced',
      flags: ['unpriced'],
    })
  })
})

describe('projectUsage', () => {
  it('keeps counters and short strings, drops anything else', () => {
    expect(
      projectUsage({
        input_tokens: 5,
        service_tier: 'standard',
        cache_creation: { ephemeral_5m_input_tokens: 1 },
        note: 'x'.repeat(100),
        list: [1, 2],
      }),
    ).toEqual({ input_tokens: 5, service_tier: 'standard', cache_creation: { ephemeral_5m_input_tokens: 1 } })
  })
})
