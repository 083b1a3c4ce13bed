import { allUnknown } from '../capability/facts.js'
import { capabilityManifest, writeCapabilityManifest } from '../capability/manifest.js'
import { readConfiguredCapabilities } from '../capability/readers/index.js'
import type { Invocation } from '../harnesses/contract.js'
import type { WireApi } from '../manifest/harness-names.js'
import type { Cell } from '../manifest/schema.js'
import type { ConfiguredCapabilities } from '../records/capabilities.js'
import type { LedgerRow } from '../records/ledger.js'

/**
 * The harness's configured capabilities, read from the invocation and the files its adapter wrote
 * (after the bridge is wired, before the harness runs). The prompt is left out of the arguments so
 * that task text is never read as an option.
 */
export function readAttemptCapabilities(
  leg: { cell: Cell; api: WireApi },
  inv: Invocation,
  home: string,
  prompt: string,
  workspace?: string,
): Promise<ConfiguredCapabilities> {
  return readConfiguredCapabilities(leg.cell.harness, {
    home,
    workspace,
    args: inv.args.filter((a) => a !== prompt),
    env: inv.env,
    api: leg.api,
  })
}

/**
 * Write the attempt's capabilities.json (configured capabilities and what the proxy saw). Returns
 * false when it could not be written (the attempt is flagged, never failed for it).
 */
export async function writeAttemptCapabilities(
  leg: { cell: Cell; harnessVersion: string | null; model: string },
  logsDir: string,
  configured: ConfiguredCapabilities | null,
  rows: LedgerRow[],
): Promise<boolean> {
  try {
    const m = capabilityManifest(
      {
        cellId: leg.cell.id,
        harness: leg.cell.harness,
        harnessVersion: leg.harnessVersion,
        model: leg.model,
        configured,
        rows,
      },
      allUnknown('the harness was never prepared: its configuration was not read'),
    )
    await writeCapabilityManifest(logsDir, m)
    return true
  } catch {
    return false
  }
}
