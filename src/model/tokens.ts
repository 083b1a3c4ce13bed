import { countTokens as o200kCount } from 'gpt-tokenizer/encoding/o200k_base'

// Special-token text such as "<|endoftext|>" inside a prompt is ordinary text to us.
const NO_SPECIAL = { disallowedSpecial: new Set<string>() }
const MEMO_LIMIT = 20_000
const memo = new Map<string, number>()

/** Runs of this many non-space characters or more are counted in pieces of this size. */
const PIECE = 256
const LONG_RUN = new RegExp(`\\S{${PIECE},}`, 'g')
/** Characters of such runs counted exactly per text; the rest at the ratio those showed. */
const LONG_EXACT_CHARS = 65_536

/**
 * o200k_base token count of a text (gpt-tokenizer). Conversations resend the same segments on every
 * turn, so counts are memoised (bounded; the oldest entries are dropped first).
 *
 * Byte-pair encoding of one pre-token costs the square of its length, and a run without spaces
 * (base64, a minified file, a repeated character) is one pre-token: runs of 256 characters or more
 * are counted in 256-character pieces (the count may differ by one token per piece), and past the
 * first 64 Ki characters of such runs in one text the remaining pieces are estimated at the
 * characters-per-token ratio the counted ones showed. Time grows linearly with the text; text of
 * ordinary words is counted exactly.
 */
export function countTokens(text: string): number {
  if (text === '') return 0
  LONG_RUN.lastIndex = 0
  if (!LONG_RUN.test(text)) return exactCount(text)
  let total = 0
  let at = 0
  let exactChars = 0
  let exactTokens = 0
  let estimatedChars = 0
  LONG_RUN.lastIndex = 0
  for (const m of text.matchAll(LONG_RUN)) {
    total += exactCount(text.slice(at, m.index))
    const run = m[0]
    let i = 0
    for (; i < run.length && exactChars < LONG_EXACT_CHARS; i += PIECE) {
      const piece = run.slice(i, i + PIECE)
      exactChars += piece.length
      exactTokens += exactCount(piece)
    }
    estimatedChars += Math.max(0, run.length - i)
    at = m.index + run.length
  }
  const estimated = estimatedChars === 0 ? 0 : Math.ceil((estimatedChars * exactTokens) / exactChars)
  return total + exactTokens + estimated + exactCount(text.slice(at))
}

function exactCount(text: string): number {
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
