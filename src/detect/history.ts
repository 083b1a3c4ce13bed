import { createHash } from 'node:crypto'
import { z } from 'zod'
import { betweenRuns } from '../capability/diff.js'
import { diffComparisons } from '../compare/diff.js'
import type { Comparison } from '../records/comparison.js'
import { normalQuantile, wilson } from '../stats/index.js'
import type { Decision } from './schema.js'

/**
 * history.json: an experiment's weekly series, built from the comparison.json (and, when present, the
 * decision.json) of each run, on files alone. Pure and deterministic: runs are ordered by their
 * start time (then run id), never by the order the files were given.
 *
 * Rules (stated in the file and on the page):
 * - Panel: family, revision, source and the sorted instance ids. Runs on different panels are never
 *   joined: each maximal stretch of consecutive runs on one panel is a segment, its own line.
 * - Gap: consecutive runs of a segment further apart than 1.5 × the cadence (default 7 days), or a
 *   run without a start time (or one that is not a date). The line is broken there (no interpolation) and the break is listed.
 * - Change point: between consecutive runs of one segment, a cell whose resolved set changed by an
 *   exact two-sided McNemar test over the instances graded in both runs at p < α (0.05), each pair
 *   tested alone (a screen: no correction across the series); and every self-regression signal
 *   decision.json records.
 * - Capability changes: a cell's declared version or config hash differs from the previous run's, or
 *   a capability manifest (when the comparison carries one) differs field by field.
 */
export const HISTORY_SCHEMA_VERSION = 1
export const DEFAULT_CADENCE_DAYS = 7
const GAP_FACTOR = 1.5
export const CHANGE_POINT_ALPHA = 0.05

const Interval = z.tuple([z.number(), z.number()])
const Est = z.strictObject({ estimate: z.number().nullable(), ci: Interval.nullable() })

export const HistoryRunSchema = z.strictObject({
  file: z.string().describe('the comparison.json as given'),
  run_id: z.string().nullable(),
  round: z.number(),
  started_at: z.string().nullable(),
  panel: z.strictObject({ key: z.string(), text: z.string(), instances: z.number().int().nonnegative() }),
  segment: z.number().int().nonnegative().describe('index into segments'),
  break_before: z
    .strictObject({ kind: z.enum(['gap', 'panel_changed', 'time_unknown']), detail: z.string() })
    .nullable(),
  decision: z
    .strictObject({ status: z.string(), summary: z.string() })
    .nullable()
    .describe('from decision.json beside the comparison; null when there is none'),
  cells: z.array(
    z.strictObject({
      id: z.string(),
      version: z.string().nullable(),
      config_hash: z.string().nullable(),
      resolve_rate: Est.describe('resolved share of outcome-complete blocks, Wilson 95% interval'),
      n: z.number().int().nonnegative(),
    }),
  ),
  comparisons: z.array(
    z.strictObject({
      baseline: z.string(),
      treatment: z.string(),
      n: z.number().int().nonnegative(),
      diff_pp: Est.describe('treatment − baseline resolve rate, points, the comparison’s own interval'),
      spend_ratio: Est.describe('ratio of mean spend, treatment / baseline'),
      net_benefit_usd: Est.nullable().describe('at the declared value per resolution, when declared'),
    }),
  ),
  confirmed_breaches: z.array(
    z.strictObject({ id: z.string(), metric: z.string(), direction: z.string(), rule: z.string() }),
  ),
  change_points: z.array(
    z.strictObject({
      cell: z.string(),
      source: z.enum(['mcnemar', 'decision']),
      direction: z.enum(['regression', 'improvement']),
      detail: z.string(),
    }),
  ),
  capability_changes: z.array(z.strictObject({ cell: z.string(), change: z.string() })),
})
export type HistoryRun = z.infer<typeof HistoryRunSchema>

export const HistorySchema = z.strictObject({
  schema_version: z.literal(HISTORY_SCHEMA_VERSION),
  experiment_id: z.string(),
  cadence_days: z.number().positive(),
  rules: z.array(z.string()),
  segments: z.array(
    z.strictObject({
      panel_key: z.string(),
      panel: z.string(),
      runs: z.array(z.string().nullable()).describe('run ids in order'),
    }),
  ),
  runs: z.array(HistoryRunSchema),
})
export type History = z.infer<typeof HistorySchema>

export const HISTORY_RULES = [
  'Runs are ordered by start time; runs on different panels (family, revision, source, instance ids) are never joined into one line: each stretch of consecutive runs on one panel is a segment.',
  `A gap (more than ${GAP_FACTOR} × the cadence between consecutive runs, or a run whose start time is absent or not a date) breaks the line; it is never interpolated.`,
  `Change point: a cell's resolved set between consecutive runs of one segment, exact two-sided McNemar over instances graded in both, p < ${CHANGE_POINT_ALPHA}, each pair tested alone (a screen, no correction across the series); plus every self-regression signal of decision.json.`,
  'Capability changes: a cell’s declared version or config hash, or its capability manifest when recorded, differs from the previous run’s.',
  'Cell resolve rate: Wilson 95% interval on the outcome-complete blocks; comparison figures and intervals as each comparison.json states them.',
]

export interface HistoryInput {
  file: string
  comparison: Comparison
  decision: Decision | null
}

/** One run's panel identity, and how it reads. */
export function panelOf(c: Comparison): { key: string; text: string; instances: number } {
  const p = c.stamp.panel
  const ids = c.instances.map((r) => r.instance).sort()
  const key = createHash('sha256')
    .update(JSON.stringify([p.family, p.revision, p.source, ids]))
    .digest('hex')
    .slice(0, 12)
  return {
    key,
    text: `${p.family ?? '?'}@${p.revision ?? '?'} (${p.source ?? '?'}), ${ids.length} instances`,
    instances: ids.length,
  }
}

/**
 * Build the series. Throws an Error naming both files when two inputs are of different experiments
 * or are the same run twice (the caller turns it into a located error).
 */
export function buildHistory(inputs: readonly HistoryInput[], cadenceDays = DEFAULT_CADENCE_DAYS): History {
  if (inputs.length === 0) throw new HistoryInputError('no comparison.json given', null)
  const first = inputs[0]!
  const seen = new Map<string, string>()
  const files = new Set<string>()
  for (const x of inputs) {
    if (x.comparison.experiment_id !== first.comparison.experiment_id)
      throw new HistoryInputError(
        `experiment ${x.comparison.experiment_id} is not ${first.comparison.experiment_id} (${first.file}): a history is one experiment's series`,
        x.file,
      )
    const id = `${x.comparison.run_id ?? ''}\u0000${x.comparison.round}`
    const dup = seen.get(id)
    if (dup !== undefined && x.comparison.run_id !== null)
      throw new HistoryInputError(
        `run ${x.comparison.run_id} round ${x.comparison.round} is given twice (also ${dup})`,
        x.file,
      )
    // A run without an id is told apart by its file only: the same file twice is still one run.
    if (files.has(x.file))
      throw new HistoryInputError(
        'this comparison.json is given twice: each run is one point of the series',
        x.file,
      )
    files.add(x.file)
    seen.set(id, x.file)
  }
  // A start time that is absent or not a date is unknown: the run goes last, marked, never guessed.
  const dated = inputs.filter((x) => startMs(x.comparison) !== null)
  const undated = inputs.filter((x) => startMs(x.comparison) === null)
  const order = [
    ...[...dated].sort((a, b) => {
      const ta = startMs(a.comparison)!
      const tb = startMs(b.comparison)!
      if (ta !== tb) return ta - tb
      return (a.comparison.run_id ?? '') < (b.comparison.run_id ?? '') ? -1 : 1
    }),
    ...undated,
  ]
  const segments: History['segments'] = []
  const runs: HistoryRun[] = []
  let prev: HistoryInput | null = null
  for (const x of order) {
    const c = x.comparison
    const panel = panelOf(c)
    const prevPanel = prev ? panelOf(prev.comparison) : null
    let breakBefore: HistoryRun['break_before'] = null
    if (prev && prevPanel && prevPanel.key !== panel.key) {
      breakBefore = { kind: 'panel_changed', detail: `panel ${prevPanel.text} → ${panel.text}` }
    } else if (prev && startMs(c) === null) {
      breakBefore = {
        kind: 'time_unknown',
        detail:
          c.stamp.started_at === null
            ? 'this run has no start time: it cannot be placed in the series'
            : `this run's start time "${c.stamp.started_at.slice(0, 40)}" is not a date: it cannot be placed in the series`,
      }
    } else if (prev) {
      const days = daysBetween(prev.comparison.stamp.started_at, c.stamp.started_at)
      if (days !== null && days > GAP_FACTOR * cadenceDays)
        breakBefore = {
          kind: 'gap',
          detail: `${fmtDays(days)} days after the previous run (cadence ${cadenceDays} days): about ${Math.round(days / cadenceDays) - 1} run(s) missing`,
        }
    }
    if (!prev || breakBefore?.kind === 'panel_changed')
      segments.push({ panel_key: panel.key, panel: panel.text, runs: [] })
    const segment = segments.length - 1
    segments[segment]!.runs.push(c.run_id)
    // Consecutive runs of one panel in a known order are tested against each other; never across a
    // panel change or a run whose place in time is unknown.
    const samePanel =
      prev !== null && breakBefore?.kind !== 'panel_changed' && breakBefore?.kind !== 'time_unknown'
    runs.push({
      file: x.file,
      run_id: c.run_id,
      round: c.round,
      started_at: c.stamp.started_at,
      panel,
      segment,
      break_before: breakBefore,
      decision: x.decision ? { status: x.decision.status, summary: x.decision.summary } : null,
      cells: c.cells.map((cell) => {
        const n = cell.resolve_rate.n
        const v = cell.resolve_rate.value
        return {
          id: cell.id,
          version: cell.version_declared,
          config_hash: cell.config_hash,
          resolve_rate: {
            estimate: v,
            ci: v !== null && n > 0 ? wilson(Math.round(v * n), n, normalQuantile(0.975)) : null,
          },
          n,
        }
      }),
      comparisons: c.comparisons.map((e) => {
        const nb = c.cost_effectiveness?.net_benefit.find(
          (x) => x.baseline === e.baseline && x.treatment === e.treatment,
        )
        return {
          baseline: e.baseline,
          treatment: e.treatment,
          n: e.outcome.n,
          diff_pp: { estimate: e.outcome.diff_pp, ci: e.outcome.diff_ci },
          spend_ratio: {
            estimate: e.metrics.spend_usd.ratio_of_means.estimate,
            ci: e.metrics.spend_usd.ratio_of_means.ci,
          },
          net_benefit_usd: nb ? { estimate: nb.net_benefit_usd.estimate, ci: nb.net_benefit_usd.ci } : null,
        }
      }),
      confirmed_breaches: (x.decision?.signals ?? [])
        .filter((s) => s.state === 'confirmed' && s.direction === 'regression')
        .map((s) => ({ id: s.id, metric: s.metric, direction: s.direction, rule: s.rule })),
      change_points: [
        ...(samePanel && prev ? mcnemarChangePoints(prev.comparison, c) : []),
        ...(x.decision?.signals ?? [])
          .filter((s) => s.kind === 'self')
          .map((s) => ({
            cell: s.treatment,
            source: 'decision' as const,
            direction: s.direction,
            detail: `${s.metric}: ${s.rule} (${s.state})`,
          })),
      ],
      capability_changes: prev ? capabilityChanges(prev.comparison, c) : [],
    })
    prev = x
  }
  return {
    schema_version: HISTORY_SCHEMA_VERSION,
    experiment_id: first.comparison.experiment_id,
    cadence_days: cadenceDays,
    rules: HISTORY_RULES,
    segments,
    runs,
  }
}

/** A history input problem: the message, and the file it concerns (null: the whole set). */
export class HistoryInputError extends Error {
  constructor(
    message: string,
    readonly file: string | null,
  ) {
    super(message)
    this.name = 'HistoryInputError'
  }
}

function daysBetween(a: string | null, b: string | null): number | null {
  if (a === null || b === null) return null
  const ms = Date.parse(b) - Date.parse(a)
  return Number.isFinite(ms) ? ms / 86_400_000 : null
}

/** A run's start in ms since the epoch; null when it has none or it is not a date. */
function startMs(c: Comparison): number | null {
  const s = c.stamp.started_at
  if (s === null) return null
  const ms = Date.parse(s)
  return Number.isFinite(ms) ? ms : null
}

function fmtDays(d: number): string {
  return String(Math.round(d * 10) / 10)
}

function mcnemarChangePoints(prev: Comparison, cur: Comparison): HistoryRun['change_points'] {
  const d = diffComparisons(prev, cur, { allowDifferentExperiments: true })
  const out: HistoryRun['change_points'] = []
  for (const cell of d.cells) {
    const p = cell.mcnemar.p_two_sided
    if (p === null || p >= CHANGE_POINT_ALPHA || !cell.in_old || !cell.in_new) continue
    const regression = cell.regressions.length > cell.fixes.length
    out.push({
      cell: cell.cell,
      source: 'mcnemar',
      direction: regression ? 'regression' : 'improvement',
      detail: `${cell.regressions.length} newly unresolved, ${cell.fixes.length} newly resolved of ${cell.n} graded in both; exact McNemar p = ${p.toPrecision(3)}; resolve rate ${pct(cell.old_rate)} → ${pct(cell.new_rate)}`,
    })
  }
  return out
}

function pct(x: number | null): string {
  return x === null ? '—' : `${(x * 100).toFixed(1)}%`
}

/** Version, config hash and (when recorded) capability-manifest changes per cell since `prev`. */
export function capabilityChanges(prev: Comparison, cur: Comparison): HistoryRun['capability_changes'] {
  const out: HistoryRun['capability_changes'] = []
  for (const cell of cur.cells) {
    const before = prev.cells.find((x) => x.id === cell.id)
    if (!before) {
      out.push({ cell: cell.id, change: 'new cell' })
      continue
    }
    if (before.version_declared !== cell.version_declared)
      out.push({
        cell: cell.id,
        change: `${cell.harness} ${before.version_declared ?? '?'} → ${cell.version_declared ?? '?'}`,
      })
    if (before.config_hash !== cell.config_hash)
      out.push({
        cell: cell.id,
        change: `config ${(before.config_hash ?? 'none').slice(0, 12)} → ${(cell.config_hash ?? 'none').slice(0, 12)}`,
      })
  }
  for (const before of prev.cells)
    if (!cur.cells.some((x) => x.id === before.id)) out.push({ cell: before.id, change: 'cell removed' })
  // The capability manifests, when both runs carry them: one line per changed cell, as the report says it.
  if (prev.capabilities && cur.capabilities) {
    for (const line of betweenRuns(prev.capabilities.cells, cur.capabilities.cells)) {
      const cell = cur.capabilities.cells.find((c) => line.includes(`(cell ${c.cell_id})`))
      out.push({ cell: cell?.cell_id ?? '', change: line })
    }
  }
  return out
}
