import type { ObservedCapabilities } from '../records/capabilities.js'
import type { LedgerRow } from '../records/ledger.js'
import { shownToolName } from '../telemetry/offered-tools.js'

/** Most distinct schema hashes kept per tool name (a tool whose schema changes every request keeps the first). */
const MAX_HASHES = 64

/**
 * What the proxy saw an attempt's harness offer the model: its own requests (not the simulated
 * user's or an analyst's), the tools offered by name with each schema hash seen, and the call types.
 * Null when no row was recorded (no proxy, or the harness never asked): unknown, not "no tools".
 */
export function observedCapabilities(rows: LedgerRow[]): ObservedCapabilities | null {
  const own = rows.filter((r) => r.attribution?.role === undefined && r.gateway === undefined)
  if (own.length === 0) return null
  const tools = new Map<string, { hashes: (string | null)[]; requests: number }>()
  let withTools = 0
  for (const r of own) {
    const offered = r.tools_offered ?? []
    if (offered.length > 0 || (r.request_shape?.tools ?? 0) > 0) withTools++
    const seen = new Set<string>()
    for (const t of offered) {
      // Read from a ledger that may be forged: a name that is not name-shaped is shown by its hash only.
      const name = shownToolName(t.name)
      const entry = tools.get(name) ?? { hashes: [], requests: 0 }
      if (!entry.hashes.includes(t.schema_sha256) && entry.hashes.length < MAX_HASHES)
        entry.hashes.push(t.schema_sha256)
      if (!seen.has(name)) entry.requests++
      seen.add(name)
      tools.set(name, entry)
    }
  }
  // A row names its tools when it lists them or offered none; a gateway's rows or an older ledger's do not.
  const named = own.every((r) => r.tools_offered !== undefined || r.request_shape?.tools === 0)
  return {
    requests: own.length,
    requests_with_tools: withTools,
    tools_named: named,
    tools: [...tools.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, e]) => ({ name, schema_sha256: e.hashes, requests: e.requests })),
    call_types: [...new Set(own.map((r) => r.call_type))].sort(),
  }
}
