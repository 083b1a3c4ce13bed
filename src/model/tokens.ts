import { countTokens as o200kCount } from 'gpt-tokenizer/encoding/o200k_base'

// Special-token text such as "<|endoftext|>" inside a prompt is ordinary text to us.
const NO_SPECIAL = { disallowedSpecial: new Set<string>() }
const MEMO_LIMIT = 20_000
const memo = new Map<string, number>()

/**
 * o200k_base token count of a text (gpt-tokenizer). Conversations resend the same segments on every
 * turn, so counts are memoised (bounded; the oldest entries are dropped first).
 */
export function countTokens(text: string): number {
  if (text === '') return 0
  const hit = memo.get(text)
  if (hit !== undefined) return hit
  const n = o200kCount(text, NO_SPECIAL)
  if (memo.size >= MEMO_LIMIT) {
    const oldest = memo.keys().next().value
    if (oldest !== undefined) memo.delete(oldest)
  }
  memo.set(text, n)
  return n
}
