import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { LedgerRow } from '../records/ledger.js'
import { checkedAtif } from '../trajectory/atif.js'
import { normalizeTrajectory } from '../trajectory/read.js'
import { strictJson } from '../util/json.js'

/** The ATIF file beside an attempt's trajectory.jsonl. */
export const ATIF_FILE = 'trajectory.atif.json'

export interface AttemptAtifInput {
  /** The attempt's logs folder, holding trajectory.jsonl. */
  logsDir: string
  /** `<cell>/<instance>/<trial>-<attempt>`: the document's session id. */
  sessionId: string
  cell: string
  instance: string
  trial: number
  attempt: number
  harness: string
  harnessVersion: string | null
  startedAtMs: number
  /** The attempt's proxy ledger rows (its model requests; the simulated user's are left out). */
  rows: LedgerRow[]
}

/**
 * Write the attempt's normalized trajectory as ATIF v1.7 beside trajectory.jsonl, step and final metrics
 * from the proxy's ledger. An empty or missing trajectory still gives a valid document (no events: the
 * notes say why). Returns the file name, or the reason nothing was written (a field rule broken, a
 * write that failed): the attempt's other files are never affected.
 */
export async function writeAttemptAtif(
  a: AttemptAtifInput,
): Promise<{ file: string; reason: null } | { file: null; reason: string }> {
  const bytes = await readFile(path.join(a.logsDir, 'trajectory.jsonl')).catch(() => null)
  const trajectory = normalizeTrajectory(bytes === null ? null : new Uint8Array(bytes), a.harness, {
    cell: a.cell,
    instance: a.instance,
    trial: a.trial,
    attempt: a.attempt,
    startedAtMs: a.startedAtMs,
  })
  const requests = a.rows.filter((r) => r.attribution?.role !== 'user_simulation')
  const checked = checkedAtif({
    sessionId: a.sessionId,
    harness: a.harness,
    harnessVersion: a.harnessVersion,
    model: requests.find((r) => r.model_observed)?.model_observed ?? requests[0]?.model ?? null,
    startedAtMs: a.startedAtMs,
    trajectory,
    requests,
  })
  if (checked.doc === null) return { file: null, reason: `ATIF field rule broken (${checked.error})` }
  try {
    await writeFile(path.join(a.logsDir, ATIF_FILE), strictJson(checked.doc))
  } catch (e) {
    return { file: null, reason: `ATIF not written: ${(e as Error).message}` }
  }
  return { file: ATIF_FILE, reason: null }
}
