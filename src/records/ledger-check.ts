import { z } from 'zod'
import { isRealRequestId } from './identity.js'
import type { LedgerRow } from './ledger.js'

/** Start times closer than this (ms) with identical model and token counts are one request logged twice. */
export const DUPLICATE_WINDOW_MS = 2000

/** How many of the attempt's last ledger rows are kept as evidence of how it ended. */
const LAST_ROWS = 3

/**
 * ledger_check: what the run stage saw of one attempt's ledger rows, kept in the attempt record so the
 * classifier can decide without the rows (optional: records written before it carry none).
 */
export const LedgerCheckSchema = z.strictObject({
  rows: z.number().int().nonnegative().describe('inference rows attributed to the attempt'),
  forwarded: z
    .number()
    .int()
    .nonnegative()
    .nullable()
    .describe('requests the front proxy forwarded (an independent count), null when there is none'),
  suspected_duplicates: z
    .number()
    .int()
    .nonnegative()
    .describe('rows matching an earlier row: same model, identical token counts, start within 2 s'),
  raw_spend_usd: z.number().nonnegative().nullable(),
  dedup_spend_usd: z.number().nonnegative().nullable().describe('spend without the suspected duplicates'),
  last: z
    .array(
      z.strictObject({
        status: z.enum(['success', 'failure']),
        error_class: z.string().nullable(),
        http_status: z.number().int().nullable(),
      }),
    )
    .describe('the last rows by start time (at most 3), oldest first'),
})
export type LedgerCheck = z.infer<typeof LedgerCheckSchema>

/**
 * Check one attempt's ledger rows (pure): count inference rows, find suspected duplicate logging (a
 * row with the same model, call type and identical token counts as an earlier row started within
 * DUPLICATE_WINDOW_MS — the signature of a ledger writing one request twice, LiteLLM included), and
 * keep the status of the last rows. `forwarded` is the front proxy's count when one exists; then at
 * most rows − forwarded rows are taken as duplicates. Spend is
 * null when any row is unpriced.
 */
export function checkLedger(rows: readonly LedgerRow[], forwarded: number | null): LedgerCheck {
  const inference = rows.filter((r) => r.api !== 'other')
  const ordered = [...inference].sort((a, b) => a.started_at.localeCompare(b.started_at))
  const times = ordered.map((r) => Date.parse(r.started_at))
  const dup = new Uint8Array(ordered.length)
  for (let i = 0; i < ordered.length; i++) {
    for (let j = i - 1; j >= 0 && times[i]! - times[j]! <= DUPLICATE_WINDOW_MS; j--) {
      if (!dup[j] && sameRequest(ordered[i]!, ordered[j]!)) {
        dup[i] = 1
        break
      }
    }
  }
  // With an independent count, no more rows are duplicates than the ledger holds beyond it (the
  // latest matches are dropped first): identical requests sent close together stay counted.
  if (forwarded !== null) {
    let excess = Math.max(0, ordered.length - forwarded)
    for (let i = 0; i < dup.length; i++) if (dup[i]) dup[i] = excess-- > 0 ? 1 : 0
  }
  const priced = inference.every((r) => r.spend_usd !== null)
  let raw = 0
  let dedup = 0
  ordered.forEach((r, i) => {
    raw += r.spend_usd ?? 0
    if (!dup[i]) dedup += r.spend_usd ?? 0
  })
  return {
    rows: inference.length,
    forwarded,
    suspected_duplicates: dup.reduce((s, x) => s + x, 0),
    raw_spend_usd: priced ? round(raw) : null,
    dedup_spend_usd: priced ? round(dedup) : null,
    last: ordered.slice(-LAST_ROWS).map((r) => ({
      status: r.status,
      error_class: r.error?.class ?? null,
      http_status: r.http_status,
    })),
  }
}

function sameRequest(a: LedgerRow, b: LedgerRow): boolean {
  // The same real id is one request; a placeholder id says nothing (the rows are compared by content).
  if (a.request_id === b.request_id && isRealRequestId(a.request_id)) return true
  const t = a.tokens
  const u = b.tokens
  return (
    a.model === b.model &&
    t.input_total !== null &&
    t.output !== null &&
    t.input_total === u.input_total &&
    t.output === u.output &&
    t.cache_read === u.cache_read &&
    t.cache_write === u.cache_write
  )
}

function round(usd: number): number {
  return Math.round(usd * 1e10) / 1e10
}
