import type { CellInput } from '../ingest/observations.js'
import {
  type CellSummary,
  type InstanceCell,
  type InstanceRow,
  METRIC_NAMES,
  type MetricName,
} from '../records/comparison.js'
import type { Coverage } from '../records/ledger.js'
import { meanPassAtK, meanPassHatK } from '../stats/index.js'
import type { Block } from './blocks.js'
import { armSummary } from './pair.js'

export const PASS_K_DENOMINATOR =
  'outcome-complete blocks: every trial of every cell graded; blocks with an infra error, ungraded or missing trial are not dropped silently but listed as incomplete'

/**
 * Per-cell summary (pure): final outcomes over every planned instance, the resolve rate and pass@k /
 * pass^k over outcome-complete blocks, intent-to-treat totals over every attempt, telemetry coverage
 * by attempt and the request shape at the proxy (over instances whose telemetry is complete for the
 * cell; per instance the mean over trials).
 */
export function cellSummary(cell: CellInput, blocks: Block[]): CellSummary {
  const t = tallyCell(cell.id, blocks)
  const { final, exits, telemetry, versions, hashes, models, attempts, trialsSeen } = t
  const { ittSpend, ittRequests, ittWall, trialsWithoutSpend, trialsWithoutRequests } = t
  const { counts, resolvedBlocks, outcomeBlocks, resourceValues, shape } = t
  const ks = Array.from({ length: cell.trials }, (_, i) => i + 1)
  const lowerBound = (missingTrials: number) =>
    missingTrials > 0
      ? `lower bound: ${missingTrials} of ${trialsSeen} trials without complete telemetry`
      : null
  const ittReason = [
    lowerBound(trialsWithoutSpend),
    trialsWithoutRequests > 0 ? `requests: ${lowerBound(trialsWithoutRequests)}` : null,
  ]
    .filter(Boolean)
    .join('; ')
  return {
    id: cell.id,
    role: cell.role,
    label: cell.label,
    harness: cell.harness,
    version_declared: cell.versionDeclared,
    versions_observed: [...versions].sort(),
    config_hash: cell.configHash,
    config_hashes_observed: [...hashes].sort(),
    api: cell.api,
    model_declared: cell.modelDeclared,
    models_observed: [...models].sort(),
    final_outcomes: final,
    exit_classes: Object.fromEntries(Object.entries(exits).sort(([a], [b]) => (a < b ? -1 : 1))),
    resolve_rate: {
      n: outcomeBlocks,
      value: outcomeBlocks > 0 ? resolvedBlocks / outcomeBlocks : null,
      reason: outcomeBlocks > 0 ? null : 'no outcome-complete blocks',
    },
    pass_at_k: ks.map((k) => passK(meanPassAtK(counts, k))),
    pass_hat_k: ks.map((k) => passK(meanPassHatK(counts, k))),
    pass_k_denominator: PASS_K_DENOMINATOR,
    intent_to_treat: {
      attempts,
      retries: Math.max(0, attempts - trialsSeen),
      spend_usd: trialsSeen > 0 && trialsWithoutSpend < trialsSeen ? ittSpend : null,
      proxy_requests: trialsSeen > 0 && trialsWithoutRequests < trialsSeen ? ittRequests : null,
      wall_s: trialsSeen > 0 ? ittWall : null,
      reason: trialsSeen === 0 ? 'no attempts' : ittReason || null,
    },
    telemetry,
    resources: Object.fromEntries(
      METRIC_NAMES.map((m) => [
        m,
        armSummary(resourceValues[m].view(), 'no instance with complete telemetry reports it'),
      ]),
    ) as CellSummary['resources'],
    request_shape: {
      n: shape.reqs.length,
      first_request_bytes: armSummary(shape.bytes.view(), 'not reported'),
      first_request_tools: armSummary(shape.tools.view(), 'not reported'),
      input_tokens_per_request: armSummary(shape.perReq.view(), 'not reported'),
      requests_per_task: armSummary(shape.reqs.view(), 'not reported'),
      aux_requests_per_task: armSummary(shape.aux.view(), 'not reported'),
    },
  }
}

/**
 * cellSummary's pass over the blocks, in a function of its own with plain loops. The pass runs long
 * enough for the engine to optimize the function that holds it; with cellSummary's thirteen arm
 * summaries and three closures inlined, that compilation took about 80 ms of CPU (a sixth of the
 * aggregate benchmark's optimizing-compiler time) for code run once per cell, while the worker sums.
 */
function tallyCell(id: string, blocks: Block[]) {
  const final = { resolved: 0, unresolved: 0, infra_error: 0, ungraded: 0, missing: 0 }
  const exits: Record<string, number> = {}
  const telemetry: Record<Coverage, number> & { attempts: number } = {
    attempts: 0,
    complete: 0,
    partial: 0,
    missing: 0,
    unknown: 0,
  }
  const versions = new Set<string>()
  const hashes = new Set<string>()
  const models = new Set<string>()
  let lastVersion: string | null = null
  let lastHash: string | null = null
  let lastModel: string | null = null
  let attempts = 0
  let trialsSeen = 0
  let ittSpend = 0
  let ittRequests = 0
  let ittWall = 0
  let trialsWithoutSpend = 0
  let trialsWithoutRequests = 0
  const counts: Array<{ n: number; c: number }> = []
  let resolvedBlocks = 0
  let outcomeBlocks = 0
  // Per-instance values: at most one per block each.
  const column = () => new Column(blocks.length)
  const resourceValues = Object.fromEntries(METRIC_NAMES.map((m) => [m, column()])) as Record<
    MetricName,
    Column
  >
  const shape = { bytes: column(), tools: column(), perReq: column(), reqs: column(), aux: column() }

  for (const blk of blocks) {
    const cb = blk.cells.get(id)
    if (!cb) continue
    final[cb.outcome]++
    if (blk.outcomeComplete) {
      outcomeBlocks++
      if (cb.resolved) resolvedBlocks++
      counts.push({ n: cb.gradedTrials, c: cb.resolvedTrials })
    }
    for (const o of cb.trials) {
      trialsSeen++
      attempts += o.attempts
      const e = o.exitClass ?? 'unknown'
      exits[e] = (exits[e] ?? 0) + 1
      telemetry.attempts += o.attempts
      telemetry.complete += o.attemptCoverage.complete
      telemetry.partial += o.attemptCoverage.partial
      telemetry.missing += o.attemptCoverage.missing
      telemetry.unknown += o.attemptCoverage.unknown
      // Usually one value throughout: a value like the last one seen is not added again.
      const version = o.identity.harnessVersion
      if (version && version !== lastVersion) {
        versions.add(version)
        lastVersion = version
      }
      const hash = o.identity.configHash
      if (hash && hash !== lastHash) {
        hashes.add(hash)
        lastHash = hash
      }
      for (const m of o.identity.models) {
        if (m === lastModel) continue
        models.add(m)
        lastModel = m
      }
      if (o.metrics.spend_usd === null) trialsWithoutSpend++
      else ittSpend += o.metrics.spend_usd
      if (o.metrics.proxy_requests === null) trialsWithoutRequests++
      else ittRequests += o.metrics.proxy_requests
      ittWall += o.metrics.wall_s ?? 0
    }
    if (cb.costComplete && !blk.quarantined) {
      for (const m of METRIC_NAMES) {
        const v = cb.metrics[m]
        if (v !== null) resourceValues[m].push(v)
      }
    }
    if (cb.costComplete && cb.trials.length > 0) {
      // Each per-instance mean over the trials (null when a trial lacks the value), in one loop.
      const trials = cb.trials
      let bytes: number | null = 0
      let tools: number | null = 0
      let aux: number | null = 0
      for (const o of trials) {
        const { firstRequestBytes: b, firstRequestTools: t, auxRequests: x } = o.shape
        bytes = bytes === null || b === null ? null : bytes + b
        tools = tools === null || t === null ? null : tools + t
        aux = aux === null || x === null ? null : aux + x
      }
      if (bytes !== null) bytes /= trials.length
      if (tools !== null) tools /= trials.length
      if (aux !== null) aux /= trials.length
      const reqs = cb.metrics.proxy_requests
      const input = cb.metrics.input_tokens
      if (bytes !== null) shape.bytes.push(bytes)
      if (tools !== null) shape.tools.push(tools)
      if (aux !== null) shape.aux.push(aux)
      if (reqs !== null) shape.reqs.push(reqs)
      if (reqs !== null && input !== null && reqs > 0) shape.perReq.push(input / reqs)
    }
  }

  return {
    final,
    exits,
    telemetry,
    versions,
    hashes,
    models,
    attempts,
    trialsSeen,
    ittSpend,
    ittRequests,
    ittWall,
    trialsWithoutSpend,
    trialsWithoutRequests,
    counts,
    resolvedBlocks,
    outcomeBlocks,
    resourceValues,
    shape,
  }
}

/** Numbers gathered into a Float64Array of a known largest size (no array growth, one element kind). */
class Column {
  private readonly values: Float64Array
  length = 0
  constructor(capacity: number) {
    this.values = new Float64Array(capacity)
  }
  push(v: number): void {
    this.values[this.length++] = v
  }
  /** The values pushed, in order (a view, not a copy). */
  view(): Float64Array {
    return this.values.subarray(0, this.length)
  }
}

function passK(r: { value: number | null; k: number; instances: number; reason: string | null }) {
  return { k: r.k, value: r.value, n_instances: r.instances, reason: r.reason }
}

/** One row per planned instance with each cell's reduced outcome and resources (for tables and citations). */
export function instanceRows(blocks: Block[], cellIds: string[]): InstanceRow[] {
  return blocks.map((blk) => {
    const status: InstanceRow['status'] = blk.quarantined
      ? 'quarantined'
      : !blk.outcomeComplete
        ? 'incomplete'
        : blk.complete
          ? 'complete'
          : 'cost_incomplete'
    const cells: InstanceRow['cells'] = {}
    for (const id of cellIds) {
      const c = blk.cells.get(id)
      if (!c) continue
      cells[id] = {
        outcome: c.outcome,
        exit_class: c.exitClass,
        trials: c.trials.length,
        resolved_trials: c.resolvedTrials,
        attempts: c.attempts,
        coverage: c.coverage,
        ...c.metrics,
      }
      const atif = c.trials.flatMap((t) => t.atif ?? [])
      if (atif.length > 0) (cells[id] as InstanceCell).atif = atif
    }
    return { instance: blk.instance, status, cells }
  })
}
