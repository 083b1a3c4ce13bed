import type { LedgerRow, Tokens } from '../records/ledger.js'
import { MAX_LEDGER_MS, MAX_LEDGER_TOKENS, MAX_LEDGER_USD } from '../records/limits.js'
import { excerpt } from '../util/text.js'

/** One field of one ledger row that broke a rule and was set to null. */
export interface RowProblem {
  request_id: string
  /** Ledger field (`duration_ms`, `tokens.output`, …). */
  field: string
  /** The source's own column when it differs (LiteLLM `request_duration_ms`, `spend`, …). */
  column: string | null
  rule: string
  value: unknown
}

/** Row flag: a field broke a rule and was set to null (see the attempt's telemetry reason). */
export const INPUT_ERROR_FLAG = 'input_error'

/** LiteLLM spend-log columns behind ledger fields, for messages. */
const LITELLM_COLUMNS: Record<string, string> = {
  duration_ms: 'request_duration_ms',
  ttft_ms: 'completionStartTime',
  spend_usd: 'spend',
  spend_logged_usd: 'spend',
  'tokens.input_total': 'prompt_tokens',
  'tokens.output': 'completion_tokens',
}

const TOKEN_FIELDS: (keyof Tokens)[] = [
  'input_total',
  'input_fresh',
  'cache_read',
  'cache_write',
  'output',
  'reasoning',
]

/**
 * Check the figures of one ledger row (pure): durations are finite, ≥ 0 and at most
 * {@link MAX_LEDGER_MS}; token counts whole, ≥ 0 and at most {@link MAX_LEDGER_TOKENS}; spends
 * finite, ≥ 0 and at most {@link MAX_LEDGER_USD}. A field that breaks its rule is set to null (not
 * known, never guessed), the row gets flag `input_error`, and the problem is returned, so one bad
 * figure neither sinks the attempt nor reaches a sum.
 */
export function checkLedgerRow(row: LedgerRow): { row: LedgerRow; problems: RowProblem[] } {
  const problems: RowProblem[] = []
  const bad = (field: string, rule: string, value: unknown): null => {
    problems.push({
      request_id: row.request_id,
      field,
      column: row.source === 'litellm' ? (LITELLM_COLUMNS[field] ?? null) : null,
      rule,
      value,
    })
    return null
  }
  const ms = (field: string, v: number | null): number | null =>
    v === null || (Number.isFinite(v) && v >= 0 && v <= MAX_LEDGER_MS)
      ? v
      : bad(field, `must be a duration from 0 to ${MAX_LEDGER_MS} ms`, v)
  const usd = (field: string, v: number | null, signed = false): number | null =>
    v === null || (Number.isFinite(v) && (signed || v >= 0) && Math.abs(v) <= MAX_LEDGER_USD)
      ? v
      : bad(field, `must be a spend from 0 to ${MAX_LEDGER_USD} USD`, v)
  const count = (field: string, v: number | null): number | null =>
    v === null || (Number.isInteger(v) && v >= 0 && v <= MAX_LEDGER_TOKENS)
      ? v
      : bad(field, `must be a whole number of tokens from 0 to ${MAX_LEDGER_TOKENS}`, v)

  const tokens = { ...row.tokens }
  for (const f of TOKEN_FIELDS) tokens[f] = count(`tokens.${f}`, tokens[f])
  const shape = row.request_shape
  const checked: LedgerRow = {
    ...row,
    duration_ms: ms('duration_ms', row.duration_ms),
    ttft_ms: ms('ttft_ms', row.ttft_ms),
    tokens,
    spend_usd: usd('spend_usd', row.spend_usd),
    spend_logged_usd: usd('spend_logged_usd', row.spend_logged_usd),
    spend_recomputed_usd: usd('spend_recomputed_usd', row.spend_recomputed_usd),
    request_shape: shape && {
      bytes: count('request_shape.bytes', shape.bytes) ?? 0,
      tools: count('request_shape.tools', shape.tools),
      messages: count('request_shape.messages', shape.messages),
      system_bytes: count('request_shape.system_bytes', shape.system_bytes),
    },
  }
  if (problems.length === 0) return { row, problems }
  // A spend recomputed from token counts that broke their rule is not known either.
  if (checked.spend_source === 'recomputed' && problems.some((p) => p.field.startsWith('tokens.'))) {
    checked.spend_usd = null
    checked.spend_recomputed_usd = null
  }
  // A spend that is not known makes the row unpriced, never free.
  if (checked.spend_usd === null && row.spend_usd !== null) checked.spend_source = 'unpriced'
  checked.flags = [...new Set([...row.flags, INPUT_ERROR_FLAG])]
  return { row: checked, problems }
}

/**
 * The problems as one sentence for an attempt's telemetry reason, grouped by row: `input error in
 * LiteLLM spend logs: row "req-1": duration_ms (request_duration_ms) must be … (got -5), …; row …`
 * (at most `max` rows listed).
 */
export function describeRowProblems(problems: readonly RowProblem[], source: string, max = 5): string {
  const byRow = new Map<string, RowProblem[]>()
  for (const p of problems) byRow.set(p.request_id, [...(byRow.get(p.request_id) ?? []), p])
  const parts = [...byRow].slice(0, max).map(([id, list]) => {
    const fields = list.map((p) => {
      const col = p.column && p.column !== p.field ? ` (${p.column})` : ''
      return `${p.field}${col} ${p.rule} (got ${excerpt(p.value)})`
    })
    return `row ${excerpt(id, 80)}: ${fields.join(', ')}`
  })
  const more = byRow.size > max ? `; and ${byRow.size - max} more row(s)` : ''
  return `input error in ${source}: ${parts.join('; ')}${more}; those figures are left out (null)`
}
