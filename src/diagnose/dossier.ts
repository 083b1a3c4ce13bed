import { formatEffect } from '../detect/decide.js'
import type { Decision } from '../detect/schema.js'
import type { AttemptRecord } from '../records/attempt.js'
import type { Comparison } from '../records/comparison.js'
import type { LedgerRow } from '../records/ledger.js'
import type { NormalizedTrajectory } from '../trajectory/read.js'
import { attemptKey } from '../trajectory/schema.js'
import { filesOfDiff } from './behaviour/context.js'
import { requestCurve } from './behaviour/curve.js'
import { behaviourMeasures } from './behaviour/index.js'
import {
  type AttemptView,
  DOSSIER_SCHEMA_VERSION,
  type Dossier,
  type DossierComparison,
  type DrivingInstance,
} from './schema.js'

/** One attempt as loaded from an artifact (the I/O step fills it; everything below is pure). */
/** What the dossier reads of an attempt's record (a Harbor trial gives these too). */
export type AttemptFacts = Pick<
  AttemptRecord,
  | 'cell_id'
  | 'instance_id'
  | 'trial'
  | 'attempt'
  | 'final'
  | 'harness'
  | 'harness_version'
  | 'started_at'
  | 'outcome'
  | 'exit'
  | 'verifier'
>

export interface LoadedAttempt {
  record: AttemptFacts
  /** Logs folder relative to the dossier's folder (for links). */
  logsDir: string
  trajectory: NormalizedTrajectory
  requests: LedgerRow[]
  patch: string
  verifierLog: string | null
}

export interface DossierInput {
  comparison: Comparison
  decision: Decision | null
  /** Final attempts of the run (any cells and instances; the builder picks the driving ones). */
  attempts: LoadedAttempt[]
  /** Driving instances per comparison (discordant first, then residuals); default: the manifest's
   * `reporting.dossier_instances` as decision.json records it, else 10. */
  maxInstances?: number
  notes?: string[]
}

const PATCH_MAX = 20_000
const LOG_TAIL = 2_000

/**
 * The dossier of a compared run: for each (baseline, treatment) comparison, its driving instances —
 * outcome-discordant blocks first, then the largest paired resource residuals (comparison.json's
 * `drivers`), capped — with both cells' final attempts: timeline, behaviour measures, final patch,
 * verifier result and request curve. A missing attempt or trajectory is named, never fatal.
 */
export function buildDossier(input: DossierInput): Dossier {
  const cap = input.maxInstances ?? input.decision?.policy.reporting.dossier_instances ?? 10
  const byCellInstance = new Map<string, LoadedAttempt[]>()
  for (const a of input.attempts) {
    if (!a.record.final) continue
    const k = `${a.record.cell_id}\0${a.record.instance_id}`
    const list = byCellInstance.get(k) ?? []
    list.push(a)
    byCellInstance.set(k, list)
  }
  for (const list of byCellInstance.values()) list.sort((x, y) => x.record.trial - y.record.trial)
  const views: Record<string, AttemptView> = {}
  const notes = [...(input.notes ?? [])]

  const comparisons: DossierComparison[] = input.comparison.comparisons.map((c) => {
    const id = `cmp:${c.baseline}..${c.treatment}`
    const verdict = input.decision?.comparisons.find(
      (v) => v.baseline === c.baseline && v.treatment === c.treatment,
    )
    const confirmed = (input.decision?.signals ?? [])
      .filter((s) => s.baseline === c.baseline && s.treatment === c.treatment && s.state === 'confirmed')
      .map((s) => `${s.metric} ${formatEffect(s.effect)} (${s.rule})`)
    const seen = new Set<string>()
    const ordered = [
      ...c.drivers.filter((d) => d.kind !== 'residual'),
      ...c.drivers.filter((d) => d.kind === 'residual'),
    ].filter((d) => {
      if (seen.has(d.instance)) return false
      seen.add(d.instance)
      return true
    })
    const instances: DrivingInstance[] = ordered.slice(0, cap).map((d) => {
      const pick = (cell: string): string[] => {
        const list = byCellInstance.get(`${cell}\0${d.instance}`) ?? []
        return list
          .map((a) => a.record)
          .map((r) =>
            attemptKey({ cell: r.cell_id, instance: r.instance_id, trial: r.trial, attempt: r.attempt }),
          )
      }
      const both = [
        ...(byCellInstance.get(`${c.baseline}\0${d.instance}`) ?? []),
        ...(byCellInstance.get(`${c.treatment}\0${d.instance}`) ?? []),
      ]
      // Relevant files: what either side's final patch touched.
      const relevant = [...new Set(both.flatMap((a) => filesOfDiff(a.patch)))].sort()
      for (const a of both) {
        const key = attemptKey({
          cell: a.record.cell_id,
          instance: a.record.instance_id,
          trial: a.record.trial,
          attempt: a.record.attempt,
        })
        if (!views[key]) views[key] = attemptView(a, key, relevant)
      }
      const bIds = pick(c.baseline)
      const tIds = pick(c.treatment)
      const instNotes: string[] = []
      if (bIds.length === 0)
        instNotes.push(`no final attempt of ${c.baseline} on ${d.instance} in the artifacts`)
      if (tIds.length === 0)
        instNotes.push(`no final attempt of ${c.treatment} on ${d.instance} in the artifacts`)
      for (const k of [...bIds, ...tIds]) {
        for (const issue of views[k]?.trajectory.issues ?? [])
          instNotes.push(
            `${k}: trajectory ${issue.code}${issue.line ? ` (line ${issue.line})` : ''}: ${issue.detail}`,
          )
      }
      return {
        id: `${id}/${d.instance}`,
        instance: d.instance,
        reason: d.kind,
        metric: d.metric,
        baseline_value: d.baseline,
        treatment_value: d.treatment,
        log_ratio: d.log_ratio,
        baseline: bIds,
        treatment: tIds,
        notes: instNotes,
      }
    })
    return {
      id,
      baseline: c.baseline,
      treatment: c.treatment,
      status: verdict?.status ?? null,
      confirmed,
      instances,
      capped: Math.max(0, ordered.length - cap),
    }
  })
  return {
    schema_version: DOSSIER_SCHEMA_VERSION,
    experiment_id: input.comparison.experiment_id,
    run_id: input.comparison.run_id,
    round: input.comparison.round,
    decision_status: input.decision?.status ?? null,
    max_instances: cap,
    comparisons,
    attempts: views,
    notes,
  }
}

function attemptView(a: LoadedAttempt, id: string, relevant: string[]): AttemptView {
  const r = a.record
  const startedAtMs = Number.isFinite(Date.parse(r.started_at)) ? Date.parse(r.started_at) : null
  const events = a.trajectory.events
  return {
    id,
    cell: r.cell_id,
    harness: r.harness,
    instance: r.instance_id,
    trial: r.trial,
    attempt: r.attempt,
    outcome: r.outcome,
    exit_class: r.exit.class,
    verifier: {
      status: r.verifier.status,
      reward: r.verifier.reward,
      log_tail: a.verifierLog === null ? null : a.verifierLog.slice(-LOG_TAIL),
    },
    logs_dir: a.logsDir,
    patch: {
      bytes: Buffer.byteLength(a.patch),
      files: filesOfDiff(a.patch),
      text: a.patch.slice(0, PATCH_MAX),
      truncated: a.patch.length > PATCH_MAX,
    },
    trajectory: {
      mapper_version: a.trajectory.mapper_version,
      raw_count: a.trajectory.raw_count,
      issues: a.trajectory.issues,
      events,
    },
    measures: behaviourMeasures({ events, requests: a.requests, startedAtMs, relevantFiles: relevant }),
    curve: requestCurve(a.requests, events, startedAtMs),
  }
}
