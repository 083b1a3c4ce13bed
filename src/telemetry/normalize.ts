import type { Tokens } from '../records/ledger.js'
import type { CacheRule, UsageApi } from './cache-semantics.js'

type Obj = Record<string, unknown>

/** Token classes of one request plus the flags the normalisation raised (e.g. `cache_inconsistent`). */
export interface NormalizedTokens {
  tokens: Tokens
  flags: string[]
}

/** The raw counters one usage object reports, before cache semantics are applied. */
interface RawCounters {
  /** The input count as the provider reports it (inclusive or exclusive of cache, per the rule). */
  input: number | null
  cacheRead: number | null
  cacheWrite: number | null
  output: number | null
  reasoning: number | null
}

export const NULL_TOKENS: Tokens = Object.freeze({
  input_total: null,
  input_fresh: null,
  cache_read: null,
  cache_write: null,
  output: null,
  reasoning: null,
}) as Tokens

function obj(v: unknown): Obj | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
}

/** A token counter: a finite non-negative number (rounded), else null. */
function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : null
}

/**
 * Several fields can carry the same counter (e.g. LiteLLM back-fills `cache_read_input_tokens` from
 * `prompt_tokens_details.cached_tokens`). They are alternative spellings of one number, so take the
 * largest present value — never their sum (which would subtract the cache twice, F02).
 */
function oneOf(...vs: unknown[]): number | null {
  let best: number | null = null
  for (const v of vs) {
    const n = count(v)
    if (n !== null && (best === null || n > best)) best = n
  }
  return best
}

function sum(...vs: (number | null)[]): number | null {
  let total: number | null = null
  for (const v of vs) if (v !== null) total = (total ?? 0) + v
  return total
}

/** OpenAI Chat Completions usage (also OpenRouter/DeepSeek-style extensions). */
function chatCounters(u: Obj): RawCounters {
  const ptd = obj(u.prompt_tokens_details) ?? {}
  const ctd = obj(u.completion_tokens_details) ?? {}
  return {
    input: count(u.prompt_tokens),
    cacheRead: oneOf(ptd.cached_tokens, u.cache_read_input_tokens, u.prompt_cache_hit_tokens),
    cacheWrite: oneOf(ptd.cache_write_tokens, ptd.cache_creation_tokens, u.cache_creation_input_tokens),
    output: count(u.completion_tokens),
    reasoning: count(ctd.reasoning_tokens),
  }
}

/** OpenAI Responses usage. */
function responsesCounters(u: Obj): RawCounters {
  const itd = obj(u.input_tokens_details) ?? {}
  const otd = obj(u.output_tokens_details) ?? {}
  return {
    input: count(u.input_tokens),
    cacheRead: oneOf(itd.cached_tokens),
    cacheWrite: oneOf(itd.cache_write_tokens, itd.cache_creation_tokens),
    output: count(u.output_tokens),
    reasoning: count(otd.reasoning_tokens),
  }
}

/** Anthropic Messages usage: `input_tokens` excludes both cache counters. */
function anthropicCounters(u: Obj): RawCounters {
  const cc = obj(u.cache_creation)
  const ephemeral = cc ? sum(count(cc.ephemeral_5m_input_tokens), count(cc.ephemeral_1h_input_tokens)) : null
  return {
    input: count(u.input_tokens),
    cacheRead: oneOf(u.cache_read_input_tokens),
    cacheWrite: oneOf(u.cache_creation_input_tokens, ephemeral),
    output: count(u.output_tokens),
    reasoning: null,
  }
}

/**
 * Gemini `usageMetadata`: `promptTokenCount` includes `cachedContentTokenCount`; thoughts are billed as
 * output but reported apart from `candidatesTokenCount`, so output = candidates + thoughts.
 */
function geminiCounters(u: Obj): RawCounters {
  const thoughts = count(u.thoughtsTokenCount)
  const candidates = count(u.candidatesTokenCount)
  const prompt = count(u.promptTokenCount)
  return {
    input: prompt === null ? null : prompt + (count(u.toolUsePromptTokenCount) ?? 0),
    cacheRead: oneOf(u.cachedContentTokenCount),
    cacheWrite: null,
    output: candidates === null && thoughts === null ? null : (candidates ?? 0) + (thoughts ?? 0),
    reasoning: thoughts,
  }
}

/**
 * A LiteLLM spend-log row: `prompt_tokens` is cache-inclusive; reads in
 * `usage_object.prompt_tokens_details.cached_tokens` / `cache_read_input_tokens`, writes in
 * `cache_creation_input_tokens` / `prompt_tokens_details.cache_creation_tokens` (LiteLLM 6.8), looked
 * up in `usage_object`, then `additional_usage_values`, then top-level row fields.
 */
function litellmCounters(row: Obj): RawCounters {
  const meta = obj(row.metadata) ?? {}
  const uo = obj(meta.usage_object) ?? {}
  const av = obj(meta.additional_usage_values) ?? {}
  const uoPtd = obj(uo.prompt_tokens_details) ?? {}
  const avPtd = obj(av.prompt_tokens_details) ?? {}
  const uoCtd = obj(uo.completion_tokens_details) ?? {}
  const avCtd = obj(av.completion_tokens_details) ?? {}
  return {
    input: oneOf(row.prompt_tokens, uo.prompt_tokens),
    cacheRead: oneOf(
      uoPtd.cached_tokens,
      uo.cache_read_input_tokens,
      avPtd.cached_tokens,
      av.cache_read_input_tokens,
      row.cache_read_input_tokens,
    ),
    cacheWrite: oneOf(
      uo.cache_creation_input_tokens,
      uoPtd.cache_creation_tokens,
      uoPtd.cache_write_tokens,
      av.cache_creation_input_tokens,
      avPtd.cache_creation_tokens,
      avPtd.cache_write_tokens,
      row.cache_creation_input_tokens,
    ),
    output: oneOf(row.completion_tokens, uo.completion_tokens),
    reasoning: oneOf(uoCtd.reasoning_tokens, avCtd.reasoning_tokens),
  }
}

const COUNTERS: Record<Exclude<UsageApi, 'other'>, (u: Obj) => RawCounters> = {
  chat: chatCounters,
  responses: responsesCounters,
  anthropic: anthropicCounters,
  gemini: geminiCounters,
  litellm: litellmCounters,
}

/**
 * Apply a route's cache rule to raw counters. Inclusive: input_total = reported input, fresh =
 * total − read − write. Exclusive: fresh = reported input, total = fresh + read + write. Unknown:
 * input_total = the reported input as is, and fresh/read/write are null (never guessed). With a known
 * rule and the input present, an absent cache counter means the provider reported none (0).
 */
export function applyCacheRule(c: RawCounters, rule: CacheRule): NormalizedTokens {
  const flags: string[] = []
  const base = { output: c.output, reasoning: c.reasoning }
  if (c.input === null) {
    return { tokens: { ...NULL_TOKENS, ...base }, flags }
  }
  if (rule.semantics === 'unknown') {
    return {
      tokens: { input_total: c.input, input_fresh: null, cache_read: null, cache_write: null, ...base },
      flags: ['cache_semantics_unknown'],
    }
  }
  const read = c.cacheRead ?? 0
  const write = c.cacheWrite ?? 0
  if (rule.semantics === 'exclusive') {
    return {
      tokens: {
        input_total: c.input + read + write,
        input_fresh: c.input,
        cache_read: read,
        cache_write: write,
        ...base,
      },
      flags,
    }
  }
  const fresh = c.input - read - write
  if (fresh < 0) {
    // Counters that cannot be inclusive: the rule does not fit this row, so the split is not stated.
    flags.push('cache_inconsistent')
    return {
      tokens: { input_total: c.input, input_fresh: null, cache_read: null, cache_write: null, ...base },
      flags,
    }
  }
  return {
    tokens: { input_total: c.input, input_fresh: fresh, cache_read: read, cache_write: write, ...base },
    flags,
  }
}

/**
 * Normalise one usage object (non-stream JSON `usage`, the final streamed usage, Gemini
 * `usageMetadata`, or a whole LiteLLM spend-log row for `litellm`) into ledger token classes.
 * A missing or malformed usage gives all-null tokens and the flag `usage_absent`.
 */
export function normalizeUsage(api: UsageApi, usage: unknown, rule: CacheRule): NormalizedTokens {
  const u = obj(usage)
  if (!u || api === 'other') return { tokens: { ...NULL_TOKENS }, flags: u ? [] : ['usage_absent'] }
  const counters = COUNTERS[api](u)
  const out = applyCacheRule(counters, rule)
  if (counters.input === null && counters.output === null) out.flags.push('usage_absent')
  return out
}

/** True when the row counts any token at all (used to tell "unpriced" from "free"). */
export function hasTokens(t: Tokens): boolean {
  return (t.input_total ?? 0) > 0 || (t.output ?? 0) > 0
}

/**
 * The allowlisted copy of a usage object kept in a ledger row: numbers, booleans, nulls and short
 * strings (e.g. `service_tier`), nested up to 3 levels. Anything else is dropped.
 */
export function projectUsage(usage: unknown, depth = 0): Record<string, unknown> | null {
  const u = obj(usage)
  if (!u) return null
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(u)) {
    if (typeof v === 'number' ? Number.isFinite(v) : typeof v === 'boolean' || v === null) out[k] = v
    else if (typeof v === 'string' && v.length <= 64) out[k] = v
    else if (depth < 3 && obj(v)) out[k] = projectUsage(v, depth + 1)
  }
  return out
}
