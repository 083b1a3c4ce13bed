import { describe, expect, it } from 'vitest'
import { MIN_CACHEABLE_TOKENS, PrefixCache } from '../../src/model/cache.js'
import { countTokens } from '../../src/model/tokens.js'

const big = JSON.stringify('You are a coding agent. '.repeat(300)) // ~1.5k tokens
const u1 = JSON.stringify({ role: 'user', content: 'fix the bug' })
const a1 = JSON.stringify({ role: 'assistant', content: 'ok' })
const u2 = JSON.stringify({ role: 'user', content: 'thanks' })
const n = (...segs: string[]) => segs.reduce((s, x) => s + countTokens(x), 0)

describe('PrefixCache', () => {
  it('counts o200k tokens of every segment', () => {
    expect(countTokens('hello world')).toBe(2)
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3) // special-token text is plain text
    expect(n(big)).toBeGreaterThan(MIN_CACHEABLE_TOKENS)
  })

  it('OpenAI-style: the next turn reads the whole previous prompt, never writes', () => {
    const c = new PrefixCache(true)
    expect(c.apply('chat', 'm', [big, u1])).toEqual({ total: n(big, u1), read: 0, write: 0 })
    expect(c.apply('chat', 'm', [big, u1, a1, u2])).toEqual({
      total: n(big, u1, a1, u2),
      read: n(big, u1),
      write: 0,
    })
    // a branch that shares only the system prompt reads just that
    expect(c.apply('chat', 'm', [big, u2]).read).toBe(n(big))
  })

  it('Anthropic: the new part of a ≥1024-token prompt is a write; a full repeat writes nothing', () => {
    const c = new PrefixCache(true)
    expect(c.apply('anthropic', 'm', [big, u1])).toEqual({ total: n(big, u1), read: 0, write: n(big, u1) })
    expect(c.apply('anthropic', 'm', [big, u1, a1, u2])).toEqual({
      total: n(big, u1, a1, u2),
      read: n(big, u1),
      write: n(a1, u2),
    })
    expect(c.apply('anthropic', 'm', [big, u1, a1, u2])).toMatchObject({ read: n(big, u1, a1, u2), write: 0 })
  })

  it('short prompts are never cached; model and API namespace the cache; off means no cache', () => {
    const c = new PrefixCache(true)
    expect(c.apply('anthropic', 'm', [u1, a1])).toEqual({ total: n(u1, a1), read: 0, write: 0 })
    expect(c.apply('anthropic', 'm', [u1, a1, u2]).read).toBe(0)
    c.apply('chat', 'm', [big, u1])
    expect(c.apply('chat', 'other', [big, u1]).read).toBe(0)
    expect(c.apply('responses', 'm', [big, u1]).read).toBe(0)
    const off = new PrefixCache(false)
    off.apply('anthropic', 'm', [big, u1])
    expect(off.apply('anthropic', 'm', [big, u1])).toEqual({ total: n(big, u1), read: 0, write: 0 })
  })
})
