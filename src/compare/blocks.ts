import type { ComparisonInput, TrialObservation } from '../ingest/observations.js'
import {
  type BlockReason,
  type BlockReasonCode,
  METRIC_NAMES,
  type MetricName,
  TELEMETRY_REASONS,
} from '../records/comparison.js'
import type { Coverage } from '../records/ledger.js'

/**
 * Blocks: one instance with all cells (statistics.md, "The unit: complete blocks").
 *
 * Rules (stated in comparison.json `rules` and the report):
 * - A cell's outcome on a trial is the outcome of its final attempt (retries are new attempts).
 * - k > 1 trials: for W/L/T, McNemar and the resolve-rate difference a cell counts as resolving an
 *   instance when a strict majority of its k trials resolved (ties count as not resolved). The rule
 *   does not depend on trial order, so published k-trial counts and our own trials give the same
 *   answer; pass@k and pass^k use every trial.
 * - Outcome-complete block: every cell has every planned trial graded (resolved/unresolved), no
 *   missing leg or attempt, no infra error, matching identity (model, config hash, harness version),
 *   not quarantined, no duplicate rows. Only these enter the paired outcome statistics.
 * - Cost pair: an outcome-complete block where both cells of the comparison have complete telemetry
 *   on every attempt (missing or partial telemetry is never zero). Resources of a cell on a block are
 *   the mean over its trials of the trial's intent-to-treat sum (every attempt).
 * - Complete block (the glossary's): outcome-complete with complete telemetry for every cell.
 */

export const OUTCOME_RULE =
  'final attempt of each trial; for k > 1 trials a cell resolves an instance when a strict majority of its trials resolved'
export const COST_RULE =
  'per block and cell: mean over trials of the intent-to-treat sum of every attempt; only blocks with complete telemetry on both sides'

export type CellOutcome = 'resolved' | 'unresolved' | 'infra_error' | 'ungraded' | 'missing'

/** One cell on one instance, its trials reduced. */
export interface CellBlock {
  cell: string
  trials: TrialObservation[]
  /** Trials planned (k). */
  plannedTrials: number
  resolvedTrials: number
  gradedTrials: number
  /** Majority rule over graded trials; null unless every planned trial is graded. */
  resolved: boolean | null
  /** For display: resolved/unresolved by the rule, else the worst non-graded outcome seen. */
  outcome: CellOutcome
  exitClass: string | null
  attempts: number
  coverage: Coverage
  /** Telemetry complete on every planned trial. */
  costComplete: boolean
  /** Mean over trials of each trial's sum; null when any trial lacks it or a trial is missing. */
  metrics: Record<MetricName, number | null>
  /** Resolved trials / planned trials, for cost per resolution. */
  resolvedShare: number
}

export interface Block {
  instance: string
  cells: Map<string, CellBlock>
  reasons: BlockReason[]
  quarantined: boolean
  outcomeComplete: boolean
  /** Outcome-complete and telemetry complete for every cell. */
  complete: boolean
}

const COVERAGE_RANK: Record<Coverage, number> = { complete: 0, unknown: 1, partial: 2, missing: 3 }
const OUTCOME_RANK: Record<CellOutcome, number> = {
  resolved: 0,
  unresolved: 0,
  ungraded: 1,
  infra_error: 2,
  missing: 3,
}

/**
 * Build one block per planned instance (sorted by id, so output order never depends on input order) with its
 * reasons. Pure; never throws for missing data: a missing observation is a `missing_attempt` reason
 * (or the `missing_leg` reason the reader put in `preReasons`).
 */
export function buildBlocks(input: ComparisonInput): Block[] {
  const byInstance = new Map<string, Map<string, TrialObservation[]>>()
  for (const o of input.observations) {
    let cells = byInstance.get(o.instance)
    if (!cells) {
      cells = new Map()
      byInstance.set(o.instance, cells)
    }
    const list = cells.get(o.cell)
    if (list) list.push(o)
    else cells.set(o.cell, [o])
  }
  const pre = new Map<string, BlockReason[]>()
  for (const p of input.preReasons) {
    const list = pre.get(p.instance)
    if (list) list.push(p.reason)
    else pre.set(p.instance, [p.reason])
  }
  const quarantine = new Set(input.quarantine)
  const instances = [...new Set(input.instances)].sort()
  // No cell scheduled (an empty selection, F11): nothing ran, so no block is complete.
  const scheduled = input.cells.length > 0

  return instances.map((instance) => {
    const reasons: BlockReason[] = [...(pre.get(instance) ?? [])]
    const quarantined = quarantine.has(instance)
    if (quarantined) {
      reasons.push({
        code: 'quarantined',
        cell: null,
        trial: null,
        attempt: null,
        detail: 'in the panel quarantine list',
      })
    }
    const cells = new Map<string, CellBlock>()
    const observed = byInstance.get(instance)
    for (const cell of input.cells) {
      const obs = (observed?.get(cell.id) ?? []).slice().sort((a, b) => a.trial - b.trial)
      // A missing leg, or an instance the source never names, already says why every trial is absent.
      const legMissing = reasons.some(
        (r) =>
          r.cell === cell.id &&
          (r.code === 'missing_leg' || (r.code === 'missing_attempt' && r.trial === null)),
      )
      const have = new Uint8Array(cell.trials)
      for (const o of obs) if (o.trial < cell.trials) have[o.trial] = 1
      for (let t = 0; t < cell.trials; t++) {
        if (!have[t] && !legMissing) {
          reasons.push({
            code: 'missing_attempt',
            cell: cell.id,
            trial: t,
            attempt: null,
            detail: `no attempt recorded for trial ${t}`,
          })
        }
      }
      for (const o of obs) {
        if (o.reasons.length > 0) reasons.push(...o.reasons)
        if (o.outcome === 'infra_error' && !hasReason(o, 'infra_error')) {
          reasons.push(
            reason('infra_error', o, `final attempt: infra error (exit ${o.exitClass ?? 'unknown'})`),
          )
        }
        if (o.outcome === 'ungraded' && !hasReason(o, 'ungraded')) {
          reasons.push(reason('ungraded', o, 'the verifier gave no grade'))
        }
        if (o.coverage !== 'complete') {
          reasons.push(reason(`telemetry_${o.coverage}`, o, o.coverageDetail ?? `telemetry ${o.coverage}`))
        }
      }
      cells.set(cell.id, reduceCell(cell.id, obs, cell.trials))
    }
    const images = observed && severalImages(observed) ? imageMismatch([...observed.values()].flat()) : null
    if (images) reasons.push(images)
    const outcomeComplete = scheduled && !reasons.some((r) => !TELEMETRY_REASONS.includes(r.code))
    const complete = outcomeComplete && [...cells.values()].every((c) => c.costComplete)
    return { instance, cells, reasons: sortReasons(reasons), quarantined, outcomeComplete, complete }
  })
}

/**
 * Cells of one block that ran in different container images (by image id) are not compared, as with a
 * model mismatch: the reason names each cell's image. Null when every final attempt that records an
 * image ran the same one (pure).
 */
export function imageMismatch(obs: TrialObservation[]): BlockReason | null {
  const byCell = new Map<string, Set<string>>()
  for (const o of obs) {
    const id = o.identity.imageId
    if (!id) continue
    const set = byCell.get(o.cell) ?? new Set<string>()
    set.add(id)
    byCell.set(o.cell, set)
  }
  const all = new Set([...byCell.values()].flatMap((s) => [...s]))
  if (all.size < 2) return null
  const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12)
  const detail = [...byCell.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([cell, ids]) => `${cell} ${[...ids].sort().map(short).join('+')}`)
    .join(', ')
  return {
    code: 'image_mismatch',
    cell: null,
    trial: null,
    attempt: null,
    detail: `cells ran different images: ${detail}`,
  }
}

/** Whether the observations name more than one image id (else imageMismatch finds none). */
function severalImages(observed: Map<string, TrialObservation[]>): boolean {
  let first: string | null = null
  for (const list of observed.values()) {
    for (const o of list) {
      const id = o.identity.imageId
      if (!id) continue
      if (first === null) first = id
      else if (id !== first) return true
    }
  }
  return false
}

/** Whether the trial already states a reason with this code (no closure per trial: this runs for each). */
function hasReason(o: TrialObservation, code: BlockReasonCode): boolean {
  for (const r of o.reasons) if (r.code === code) return true
  return false
}

function reason(code: BlockReasonCode, o: TrialObservation, detail: string): BlockReason {
  return { code, cell: o.cell, trial: o.trial, attempt: null, detail }
}

/** Reduce a cell's trials on one instance (see the module rules). */
export function reduceCell(cell: string, trials: TrialObservation[], planned: number): CellBlock {
  let resolvedTrials = 0
  let gradedTrials = 0
  let attempts = 0
  let coverage: Coverage = trials.length < planned ? 'missing' : 'complete'
  let worst: CellOutcome = trials.length < planned ? 'missing' : 'resolved'
  // Exit classes and their counts, in order of first appearance (usually one class).
  const exitNames: string[] = []
  const exitCounts: number[] = []
  for (const o of trials) {
    attempts += o.attempts
    if (o.outcome === 'resolved' || o.outcome === 'unresolved') {
      gradedTrials++
      if (o.outcome === 'resolved') resolvedTrials++
    } else if (OUTCOME_RANK[o.outcome] > OUTCOME_RANK[worst]) {
      worst = o.outcome
    }
    if (COVERAGE_RANK[o.coverage] > COVERAGE_RANK[coverage]) coverage = o.coverage
    const e = o.exitClass ?? 'unknown'
    const at = exitNames.indexOf(e)
    if (at >= 0) exitCounts[at]!++
    else {
      exitNames.push(e)
      exitCounts.push(1)
    }
  }
  const allGraded = trials.length >= planned && gradedTrials === trials.length && planned > 0
  const resolved = allGraded ? resolvedTrials * 2 > gradedTrials : null
  const outcome: CellOutcome = resolved === null ? worst : resolved ? 'resolved' : 'unresolved'
  const metrics = {} as Record<MetricName, number | null>
  for (const m of METRIC_NAMES) {
    if (trials.length < planned || trials.length === 0) {
      metrics[m] = null
      continue
    }
    let sum = 0
    let ok = true
    for (const o of trials) {
      const v = o.metrics[m]
      if (v === null) {
        ok = false
        break
      }
      sum += v
    }
    metrics[m] = ok ? sum / trials.length : null
  }
  const exitClass =
    exitNames.length === 0
      ? null
      : exitNames.length === 1
        ? exitNames[0]!
        : exitNames
            .map((k, i): [string, number] => [k, exitCounts[i]!])
            .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
            .map(([k, v]) => `${k}×${v}`)
            .join(' ')
  return {
    cell,
    trials,
    plannedTrials: planned,
    resolvedTrials,
    gradedTrials,
    resolved,
    outcome,
    exitClass,
    attempts,
    coverage,
    // Anomalous or suspect telemetry (src/classify) states no resource figure, whatever its coverage.
    costComplete:
      coverage === 'complete' &&
      trials.every((o) => !o.classes?.some((c) => c.telemetry_class !== 'ok' || c.partial_usage)),
    metrics,
    resolvedShare: planned > 0 ? resolvedTrials / planned : 0,
  }
}

const CODE_ORDER = new Map<string, number>(
  [
    'missing_leg',
    'missing_attempt',
    'duplicate_rows',
    'invalid_rows',
    'quarantined',
    'infra_error',
    'ungraded',
    'model_mismatch',
    'image_mismatch',
    'config_drift',
    'telemetry_missing',
    'telemetry_partial',
    'telemetry_unknown',
    'telemetry_anomaly',
    'telemetry_suspect',
  ].map((c, i) => [c, i]),
)

/** Reasons in a fixed order (cell, trial, attempt, code) so output bytes never depend on read order. */
export function sortReasons(reasons: BlockReason[]): BlockReason[] {
  const seen = new Set<string>()
  const out: BlockReason[] = []
  for (const r of reasons) {
    const k = `${r.code}|${r.cell}|${r.trial}|${r.attempt}|${r.detail}`
    if (seen.has(k)) continue
    seen.add(k)
    out.push(r)
  }
  return out.sort(
    (a, b) =>
      cmpNullable(a.cell, b.cell) ||
      (a.trial ?? -1) - (b.trial ?? -1) ||
      (a.attempt ?? -1) - (b.attempt ?? -1) ||
      (CODE_ORDER.get(a.code) ?? 99) - (CODE_ORDER.get(b.code) ?? 99) ||
      (a.detail < b.detail ? -1 : a.detail > b.detail ? 1 : 0),
  )
}

function cmpNullable(a: string | null, b: string | null): number {
  if (a === b) return 0
  if (a === null) return -1
  if (b === null) return 1
  return a < b ? -1 : 1
}
