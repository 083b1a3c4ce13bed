import { dig, str } from './jsonl.js'

/**
 * Readers for Claude Code's stream-json events, which Qwen Code emits in the same shape: `assistant`
 * events carry `message{id, content[]}` (one event per content block; the blocks of one model
 * response share `message.id`), and a final `result` event may carry the answer as `result`.
 */

/** Distinct model responses: the `message.id`s of `assistant` events (`#<index>` for one without an id). */
export function assistantMessageIds(events: readonly Record<string, unknown>[]): Set<string> {
  return new Set(
    events.filter((e) => e.type === 'assistant').map((e, i) => str(dig(e, 'message', 'id')) ?? `#${i}`),
  )
}

/**
 * The answer: the `result` event's `result` text, else the text blocks (joined by newlines) of the
 * last `assistant` event that has any; null when there is none.
 */
export function streamJsonAnswer(
  events: readonly Record<string, unknown>[],
  result: Record<string, unknown> | undefined,
): string | null {
  let answer = str(dig(result, 'result'))?.trim() || null
  if (answer) return answer
  for (const e of events) {
    if (e.type !== 'assistant') continue
    const content = dig(e, 'message', 'content')
    if (!Array.isArray(content)) continue
    const text = content
      .filter((c) => dig(c, 'type') === 'text')
      .map((c) => str(dig(c, 'text')) ?? '')
      .join('\n')
      .trim()
    if (text) answer = text
  }
  return answer
}
