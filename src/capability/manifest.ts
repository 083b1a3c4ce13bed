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

/** One attempt's capability manifest (pure). */
export function capabilityManifest(p: ManifestParts, unprepared: ConfiguredCapabilities): CapabilityManifest {
  return {
    schema_version: CAPABILITIES_SCHEMA_VERSION,
    cell_id: p.cellId,
    harness: p.harness,
    harness_version: p.harnessVersion,
    model: p.model,
    configured: p.configured ?? unprepared,
    observed: observedCapabilities(p.rows),
  }
}

/** Write capabilities.json into the attempt's logs folder; returns the file's name. */
export async function writeCapabilityManifest(logsDir: string, m: CapabilityManifest): Promise<string> {
  await writeFile(path.join(logsDir, CAPABILITIES_FILE), `${JSON.stringify(m, null, 2)}\n`)
  return CAPABILITIES_FILE
}
