import {
  CAPABILITY_NAMES,
  type CapabilityManifest,
  type CellCapabilities,
  type ConfiguredCapabilities,
  type ObservedCapabilities,
} from '../records/capabilities.js'
import { canonicalJson } from '../util/json.js'

/**
 * One cell's capabilities over its attempts' manifests (pure): a configured capability is the one
 * every attempt states, or unknown ("differs between attempts") when they disagree or any is unknown
 * while another is known; the proxy's observations are summed, tools united with every schema hash.
 */
export function summarizeCell(cellId: string, manifests: CapabilityManifest[]): CellCapabilities | null {
  const first = manifests[0]
  if (!first) return null
  const versions = [
    ...new Set(manifests.map((m) => m.harness_version).filter((v): v is string => v !== null)),
  ]
  return {
    cell_id: cellId,
    harness: first.harness,
    harness_version:
      versions.length === 1
        ? (versions[0] as string)
        : versions.length === 0
          ? null
          : versions.sort().join(' / '),
    attempts: manifests.length,
    configured: mergeConfigured(manifests.map((m) => m.configured)),
    observed: mergeObserved(manifests.map((m) => m.observed)),
  }
}

function mergeConfigured(all: ConfiguredCapabilities[]): ConfiguredCapabilities {
  const out = { ...(all[0] as ConfiguredCapabilities) }
  for (const name of CAPABILITY_NAMES) {
    const values = new Set(all.map((c) => canonicalJson(c[name].value)))
    if (values.size > 1)
      (out as Record<string, { value: unknown; from: string }>)[name] = {
        value: null,
        from: `differs between attempts (${values.size} values)`,
      }
  }
  return out
}

function mergeObserved(all: (ObservedCapabilities | null)[]): ObservedCapabilities | null {
  const seen = all.filter((o): o is ObservedCapabilities => o !== null)
  if (seen.length === 0) return null
  const tools = new Map<string, { hashes: (string | null)[]; requests: number }>()
  for (const o of seen) {
    for (const t of o.tools) {
      const e = tools.get(t.name) ?? { hashes: [], requests: 0 }
      for (const h of t.schema_sha256) if (!e.hashes.includes(h) && e.hashes.length < 64) e.hashes.push(h)
      e.requests += t.requests
      tools.set(t.name, e)
    }
  }
  return {
    requests: seen.reduce((n, o) => n + o.requests, 0),
    requests_with_tools: seen.reduce((n, o) => n + o.requests_with_tools, 0),
    tools_named: seen.every((o) => o.tools_named),
    tools: [...tools.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, e]) => ({ name, schema_sha256: e.hashes, requests: e.requests })),
    call_types: [...new Set(seen.flatMap((o) => o.call_types))].sort(),
  }
}
