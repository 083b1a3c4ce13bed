import { createHash } from 'node:crypto'
import type { WireApi } from '../manifest/harness-names.js'
import { countTokens } from './tokens.js'

/** Providers cache only prompts of at least this many tokens (OpenAI and Anthropic both use 1024). */
export const MIN_CACHEABLE_TOKENS = 1024
const MAX_ENTRIES = 200_000

/** Token split of one prompt against the simulated cache. */
export interface CacheOutcome {
  /** Every prompt token. */
  total: number
  /** Tokens of the longest cached prefix (0 when none). */
  read: number
  /** Tokens newly cached; reported as a cache write on Anthropic only (0 elsewhere). */
  write: number
}

/**
 * In-memory prompt-prefix cache. A prompt is a list of segments (system, tools, messages, in order);
 * prefix k is segments 0..k, keyed by a chained sha256 and namespaced by wire API and model. A request reads the
 * longest prefix an earlier request stored (≥ 1024 tokens), and stores every prefix of its own prompt
 * of ≥ 1024 tokens, so the next turn of the same conversation (same system, tools and earlier messages)
 * reads all of it. On Anthropic the newly stored part (the whole prompt minus the read, when the prompt
 * is ≥ 1024 tokens and not already cached) is a cache write; other providers report no writes.
 * Deterministic given the sequence of requests. Source of the semantics: design/telemetry.md.
 */
export class PrefixCache {
  private readonly entries = new Map<string, number>()

  constructor(private readonly enabled: boolean) {}

  /** Split `segments` into read / write / uncached tokens and remember its prefixes. */
  apply(api: WireApi, model: string, segments: string[]): CacheOutcome {
    let chain = createHash('sha256').update(`${api}\u0000${model}`).digest('hex')
    let tokens = 0
    const prefixes: { key: string; tokens: number }[] = []
    for (const seg of segments) {
      chain = createHash('sha256').update(chain).update('\u0000').update(seg).digest('hex')
      tokens += countTokens(seg)
      prefixes.push({ key: chain, tokens })
    }
    const total = tokens
    if (!this.enabled) return { total, read: 0, write: 0 }
    let read = 0
    for (let i = prefixes.length - 1; i >= 0; i--) {
      const p = prefixes[i]
      if (p && p.tokens >= MIN_CACHEABLE_TOKENS && this.entries.has(p.key)) {
        read = p.tokens
        break
      }
    }
    const fullKey = prefixes.at(-1)?.key
    const fullCached = fullKey !== undefined && this.entries.has(fullKey)
    for (const p of prefixes) if (p.tokens >= MIN_CACHEABLE_TOKENS) this.remember(p.key, p.tokens)
    const write = api === 'anthropic' && total >= MIN_CACHEABLE_TOKENS && !fullCached ? total - read : 0
    return { total, read, write }
  }

  private remember(key: string, tokens: number): void {
    if (this.entries.has(key)) {
      // refresh recency: Map iteration order is insertion order
      this.entries.delete(key)
    } else if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value
      if (oldest !== undefined) this.entries.delete(oldest)
    }
    this.entries.set(key, tokens)
  }
}
