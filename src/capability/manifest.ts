import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import {
  CAPABILITIES_FILE,
  CAPABILITIES_SCHEMA_VERSION,
  type CapabilityManifest,
  type ConfiguredCapabilities,
} from '../records/capabilities.js'
import type { LedgerRow } from '../records/ledger.js'
import { observedCapabilities } from './observed.js'

export interface ManifestParts {
  cellId: string
  harness: string
  harnessVersion: string | null
  model: string
  /** Read from the harness's configuration before it ran; null when the harness was never prepared. */
  configured: ConfiguredCapabilities | null
  /** The attempt's ledger rows. */
  rows: LedgerRow[]
}

/** One attempt's capability manifest (pure), within the schema's bounds so that it reads back valid. */
export function capabilityManifest(p: ManifestParts, unprepared: ConfiguredCapabilities): CapabilityManifest {
  const observed = observedCapabilities(p.rows)
  return {
    schema_version: CAPABILITIES_SCHEMA_VERSION,
    cell_id: p.cellId.slice(0, 200),
    harness: p.harness.slice(0, 100),
    harness_version: p.harnessVersion?.slice(0, 200) ?? null,
    model: p.model.slice(0, 300),
    configured: bounded(p.configured ?? unprepared),
    observed: observed && {
      ...observed,
      tools: observed.tools.slice(0, 2000),
      call_types: observed.call_types.slice(0, 1000).map((c) => c.slice(0, 200)),
    },
  }
}

/** Configured capabilities cut to the schema's bounds (names 200 characters, 1,000 a list, `from` 500). */
function bounded(c: ConfiguredCapabilities): ConfiguredCapabilities {
  const out: Record<string, { value: unknown; from: string }> = {}
  for (const [name, fact] of Object.entries(c)) {
    const v = fact.value
    out[name] = {
      value: Array.isArray(v)
        ? v.slice(0, 1000).map((x) => x.slice(0, 200))
        : typeof v === 'string'
          ? v.slice(0, 200)
          : v,
      from: fact.from.slice(0, 500),
    }
  }
  return out as ConfiguredCapabilities
}

/** Write capabilities.json into the attempt's logs folder; returns the file's name. */
export async function writeCapabilityManifest(logsDir: string, m: CapabilityManifest): Promise<string> {
  await writeFile(path.join(logsDir, CAPABILITIES_FILE), `${JSON.stringify(m, null, 2)}\n`)
  return CAPABILITIES_FILE
}
