import { type LedgerRow, REQUEST_ROLES, type TelemetrySummary } from '../records/ledger.js'
import { MAX_LEDGER_USD } from '../records/limits.js'

type RoleCounts = NonNullable<TelemetrySummary['request_roles']>
type PartSums = NonNullable<TelemetrySummary['request_parts']>

/** Most distinct values of one parameter an attempt keeps. */
const MAX_VALUES = 8

/**
 * Inference requests and spend by role over an attempt's rows (pure). A row without a recorded role
 * (a spend-log row, or one written before roles were recorded) counts as `unclassified`, never as
 * primary. A role's spend is null when any of its rows is unpriced or the sum is beyond an attempt's limit. Roles without requests are left out.
 */
export function roleCounts(rows: readonly LedgerRow[]): RoleCounts {
  const by = new Map<string, { requests: number; spend: number | null }>()
  for (const r of rows) {
    if (r.api === 'other') continue
    const role = r.request_role?.role ?? 'unclassified'
    const c = by.get(role) ?? { requests: 0, spend: 0 }
    c.requests++
    c.spend = c.spend === null || r.spend_usd === null ? null : c.spend + r.spend_usd
    by.set(role, c)
  }
  return REQUEST_ROLES.filter((role) => by.has(role)).map((role) => {
    const c = by.get(role) as { requests: number; spend: number | null }
    return {
      role,
      requests: c.requests,
      // Beyond what an attempt may hold the role's spend is not stated (the attempt's reason names the rows).
      spend_usd: c.spend === null || !(c.spend <= MAX_LEDGER_USD) ? null : Math.round(c.spend * 1e10) / 1e10,
    }
  })
}

/**
 * Sums of the request parts over an attempt's inference rows (pure): bytes by part, the
 * cache-eligible prefix, and each parameter's distinct values. Rows whose parts were not read are
 * counted in `unread`, never as zero bytes. Null when no row carries parts.
 */
export function partSums(rows: readonly LedgerRow[]): PartSums | null {
  const inference = rows.filter((r) => r.api !== 'other')
  if (!inference.some((r) => r.request_parts !== undefined)) return null
  const out: PartSums = {
    requests: 0,
    bytes: 0,
    tool_schema_bytes: 0,
    system_bytes: 0,
    history_bytes: 0,
    latest_message_bytes: 0,
    cache_prefix_bytes: 0,
    unread: 0,
    params: [],
  }
  const params = new Map<string, string[]>()
  for (const r of inference) {
    const p = r.request_parts
    if (
      !p ||
      p.tool_schema_bytes === null ||
      p.history_bytes === null ||
      p.latest_message_bytes === null ||
      r.request_shape?.system_bytes === null ||
      r.request_shape?.system_bytes === undefined
    ) {
      out.unread++
      continue
    }
    out.requests++
    out.bytes += r.request_shape.bytes
    out.tool_schema_bytes += p.tool_schema_bytes
    out.system_bytes += r.request_shape.system_bytes
    out.history_bytes += p.history_bytes
    out.latest_message_bytes += p.latest_message_bytes
    out.cache_prefix_bytes += p.cache_prefix_bytes ?? 0
    for (const [name, v] of Object.entries(p.params)) {
      const values = params.get(name) ?? []
      params.set(name, values)
      const text = String(v)
      if (!values.includes(text) && values.length < MAX_VALUES) values.push(text)
    }
  }
  out.params = [...params.keys()].sort().map((name) => ({ name, values: (params.get(name) ?? []).sort() }))
  return out
}
