import path from 'node:path'
import type { LoadedAttempt } from '../diagnose/dossier.js'
import { type HarborTrial, readHarborJob, systemKey } from '../ingest/published/harbor.js'
import type { Comparison } from '../records/comparison.js'
import { normalizeAtif } from '../trajectory/from/atif.js'
import { readInside } from '../util/safe-read.js'

/**
 * The attempts of a compared Harbor job (`compare <job>#<agent__model> …`), for diagnose: each trial of
 * a driving cell and instance, its trajectory read from the trial's `agent/trajectory.json` (ATIF), its
 * verifier output from `verifier/test-stdout.txt`. A trial's cell is the comparison cell named after
 * its agent and model. No proxy ledger exists for a Harbor job, so request curves are empty (said in
 * the notes). A trial folder without a readable result.json is listed in the notes; the others are read.
 */
export async function loadHarborAttempts(
  job: string,
  comparison: Comparison,
  outDir: string,
  wanted: Set<string>,
  notes: string[],
): Promise<LoadedAttempt[]> {
  const read = await readHarborJob(job)
  for (const p of read.problems) notes.push(`${p.folder}: ${p.problem} (not diagnosed)`)
  const cellOf = new Map(comparison.cells.map((c) => [c.label, c.id]))
  const trialNo = new Map<string, number>()
  const out: LoadedAttempt[] = []
  const file = async (rel: string): Promise<string | null> => {
    const r = await readInside(job, rel)
    if (r === 'missing') return null
    if ('refused' in r) {
      notes.push(`${rel}: ${r.refused}`)
      return null
    }
    return r.bytes.toString('utf8')
  }
  for (const t of read.trials) {
    const cell = cellOf.get(systemKey(t))
    if (cell === undefined) continue
    const key = `${cell}\0${t.task}`
    // Trials are numbered per cell and task in folder order, as compare counts them.
    const trial = trialNo.get(key) ?? 0
    trialNo.set(key, trial + 1)
    if (!wanted.has(key)) continue
    const startedAtMs = harborTime(t.startedAt)
    const ref = { cell, instance: t.task, trial, attempt: 1, startedAtMs }
    const trajectory = normalizeAtif(await file(`${t.folder}/agent/trajectory.json`), t.agent, ref)
    out.push({
      record: facts(t, cell, trial),
      logsDir: path.relative(outDir, path.join(job, t.folder)),
      trajectory,
      requests: [],
      patch: '',
      verifierLog: await file(`${t.folder}/verifier/test-stdout.txt`),
    })
  }
  if (out.length > 0)
    notes.push(
      'a Harbor job has no proxy ledger: its request curves are empty and its ATIF copies carry no proxy metrics',
    )
  return out
}

/** Harbor writes naive ISO times (UTC without a zone). */
function harborTime(s: string | null): number | null {
  if (s === null) return null
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(s) ? s : `${s}Z`)
  return Number.isFinite(t) ? t : null
}

function facts(t: HarborTrial, cell: string, trial: number): LoadedAttempt['record'] {
  const ms = harborTime(t.startedAt)
  return {
    cell_id: cell,
    instance_id: t.task,
    trial,
    attempt: 1,
    final: true,
    harness: t.agent,
    harness_version: t.agentVersion,
    started_at: ms === null ? '' : new Date(ms).toISOString(),
    outcome: t.outcome === 'contradictory' ? 'ungraded' : t.outcome,
    exit: {
      class: t.outcome === 'infra_error' ? 'infra' : 'clean',
      code: null,
      signal: null,
      reason: t.exception,
    },
    verifier: {
      status: t.outcome === 'resolved' ? 'pass' : t.outcome === 'unresolved' ? 'fail' : 'skipped',
      exit_code: null,
      reward: t.outcome === 'resolved' ? 1 : t.outcome === 'unresolved' ? 0 : null,
      duration_ms: 0,
    },
  }
}
