import type { DraftEvent } from '../schema.js'

/** Native event types a mapper reads as part of another event (lifecycle, deltas): not `other`. */
export function KNOWN_SKIP(types: string[]): Set<string> {
  return new Set(types)
}

/**
 * The assistant's last text, when no tool call follows it, is the attempt's finish (what it said when
 * it stopped). `lastText` is its index in `out`, or -1.
 */
export function closeWithFinish(out: DraftEvent[], lastText: number): void {
  if (lastText < 0) return
  const later = out.slice(lastText + 1).some((e) => e.kind !== 'other' && e.kind !== 'message')
  const ev = out[lastText]
  if (!later && ev) ev.kind = 'finish'
}
