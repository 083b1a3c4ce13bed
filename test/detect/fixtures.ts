// Small, hand-written comparison.json fixtures for the detection tests. The per-instance rows are the
// input; the per-comparison statistics are computed from them with the project's own statistics
// (exact McNemar, paired block bootstrap), so the numbers are real, and every fixture is validated
// against the comparison.json schema.
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { PairedBlock } from '../../src/detect/pairs.js'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import {
  type Comparison,
  type ComparisonEntry,
  ComparisonSchema,
  type InstanceCell,
  type InstanceRow,
  METRIC_NAMES,
  type MetricComparison,
  SCOPE_STATEMENT,
} from '../../src/records/comparison.js'
import { bootstrapMeanDifference, bootstrapRatioOfMeans } from '../../src/stats/bootstrap.js'
import { mcnemarExact } from '../../src/stats/mcnemar.js'
import { strictJson } from '../../src/util/json.js'

export interface CellSpec {
  /** r = resolved, u = unresolved, i = infra_error, g = ungraded, m = missing */
  o: 'r' | 'u' | 'i' | 'g' | 'm'
  spend?: number
  requests?: number
  fresh?: number
  coverage?: InstanceCell['coverage']
  exit?: string
  trials?: number
  resolved_trials?: number
}

export interface FixtureSpec {
  experiment?: string
  round?: number
  runId?: string
  cells: string[]
  rows: Record<string, Record<string, CellSpec>>
  quarantine?: string[]
  missingLegs?: Comparison['missing_legs']
  version?: Record<string, string>
  B?: number
}

const OUTCOME = { r: 'resolved', u: 'unresolved', i: 'infra_error', g: 'ungraded', m: 'missing' } as const

function cellOf(s: CellSpec): InstanceCell {
  const outcome = OUTCOME[s.o]
  const measured = s.o !== 'm' && (s.coverage ?? 'complete') === 'complete'
  const trials = s.trials ?? (s.o === 'm' ? 0 : 1)
  return {
    outcome,
    exit_class: s.exit ?? (s.o === 'm' ? null : s.o === 'i' ? 'infra' : 'clean'),
    trials,
    resolved_trials: s.resolved_trials ?? (s.o === 'r' ? trials : 0),
    attempts: s.o === 'm' ? 0 : 1,
    coverage: s.o === 'm' ? 'missing' : (s.coverage ?? 'complete'),
    spend_usd: measured ? (s.spend ?? 1) : null,
    proxy_requests: measured ? (s.requests ?? 10) : null,
    input_tokens: measured ? (s.fresh ?? 1000) * 2 : null,
    input_fresh_tokens: measured ? (s.fresh ?? 1000) : null,
    cache_read_tokens: measured ? (s.fresh ?? 1000) : null,
    cache_write_tokens: measured ? 0 : null,
    output_tokens: measured ? 100 : null,
    wall_s: measured ? 10 : null,
  }
}

const graded = (x: InstanceCell) => x.outcome === 'resolved' || x.outcome === 'unresolved'

function rowStatus(cells: InstanceCell[], quarantined: boolean): InstanceRow['status'] {
  if (quarantined) return 'quarantined'
  if (!cells.every(graded)) return 'incomplete'
  return cells.every((c) => c.coverage === 'complete') ? 'complete' : 'cost_incomplete'
}

function arm(values: number[]) {
  const n = values.length
  if (n === 0) return { n: 0, mean: null, median: null, p90: null, total: null, reason: 'no blocks' }
  const total = values.reduce((a, b) => a + b, 0)
  const sorted = [...values].sort((a, b) => a - b)
  return {
    n,
    mean: total / n,
    median: sorted[Math.floor(n / 2)] ?? null,
    p90: sorted.at(-1) ?? null,
    total,
    reason: null,
  }
}

function bootstrapSummary(b: ReturnType<typeof bootstrapRatioOfMeans>, scale = 1) {
  const chosen = b.bca.ci ? b.bca : b.percentile
  const s = (x: readonly [number, number] | null): [number, number] | null =>
    x ? [x[0] * scale, x[1] * scale] : null
  return {
    estimate: chosen.estimate === null ? null : chosen.estimate * scale,
    ci: s(chosen.ci),
    method: chosen.method,
    level: 0.95,
    resamples: chosen.B,
    seed: chosen.seed,
    percentile: { ci: s(b.percentile.ci), reason: b.percentile.reason },
    bca: { ci: s(b.bca.ci), reason: b.bca.reason, z0: b.z0, acceleration: b.acceleration },
    reason: chosen.reason,
  }
}

function entry(
  rows: InstanceRow[],
  baseline: string,
  treatment: string,
  planned: number,
  B: number,
): ComparisonEntry {
  const outcomeRows = rows.filter((r) => r.status === 'complete' || r.status === 'cost_incomplete')
  const costRows = outcomeRows.filter(
    (r) => r.cells[baseline]?.coverage === 'complete' && r.cells[treatment]?.coverage === 'complete',
  )
  let both = 0
  let b = 0
  let c = 0
  let neither = 0
  for (const r of outcomeRows) {
    const x = r.cells[baseline]?.outcome === 'resolved'
    const y = r.cells[treatment]?.outcome === 'resolved'
    if (x && y) both++
    else if (x) b++
    else if (y) c++
    else neither++
  }
  const n = outcomeRows.length
  const diff = bootstrapMeanDifference(
    outcomeRows.map((r) => (r.cells[baseline]?.outcome === 'resolved' ? 1 : 0)),
    outcomeRows.map((r) => (r.cells[treatment]?.outcome === 'resolved' ? 1 : 0)),
    { B, seed: 1 },
  )
  const diffChosen = diff.bca.ci ? diff.bca : diff.percentile
  const m = mcnemarExact(b, c)
  const metrics = Object.fromEntries(
    METRIC_NAMES.map((name) => {
      const base = costRows.map((r) => r.cells[baseline]?.[name] as number)
      const treat = costRows.map((r) => r.cells[treatment]?.[name] as number)
      const ratio = bootstrapRatioOfMeans(base, treat, { B, seed: 1 })
      const mc: MetricComparison = {
        unit:
          name === 'spend_usd'
            ? 'usd'
            : name === 'proxy_requests'
              ? 'requests'
              : name === 'wall_s'
                ? 'seconds'
                : 'tokens',
        n: costRows.length,
        n_missing_value: 0,
        baseline: arm(base),
        treatment: arm(treat),
        ratio_of_means: bootstrapSummary(ratio),
        geometric_mean_ratio: { estimate: null, n: 0, zeros_excluded: 0, reason: 'not computed in fixtures' },
        paired_difference: { n: 0, mean: null, median: null, ci: null, reason: 'not computed in fixtures' },
        sign_test: {
          increases: 0,
          decreases: 0,
          ties: 0,
          p_two_sided: null,
          reason: 'not computed in fixtures',
        },
      }
      return [name, mc]
    }),
  ) as ComparisonEntry['metrics']
  const costArm = {
    n: 0,
    total_spend_usd: null,
    resolutions: null,
    expected_cost_per_attempted_instance: null,
    portfolio_cost_per_resolution: null,
    conditional_on_success: { n: 0, mean: null, reason: 'fixture' },
    reason: 'fixture',
  }
  return {
    baseline,
    treatment,
    denominators: { coverage: planned, outcome: n, cost: costRows.length },
    outcome: {
      n,
      both,
      baseline_only: b,
      treatment_only: c,
      neither,
      wins: c,
      losses: b,
      ties: both + neither,
      baseline_rate: n > 0 ? (both + b) / n : null,
      treatment_rate: n > 0 ? (both + c) / n : null,
      diff_pp: n > 0 ? ((c - b) / n) * 100 : null,
      diff_ci: diffChosen.ci ? [diffChosen.ci[0] * 100, diffChosen.ci[1] * 100] : null,
      diff_ci_method: `paired bootstrap (${diffChosen.method})`,
      level: 0.95,
      mcnemar: {
        b,
        c,
        n_discordant: b + c,
        p_two_sided: m.pTwoSided,
        p_one_sided: m.pTreatmentWorse,
        p_mid: m.pMidTwoSided,
        note: m.note,
      },
      e_value: null,
      reason: n > 0 ? null : 'no complete blocks',
    },
    metrics,
    cost_per_resolution: {
      n: 0,
      baseline: costArm,
      treatment: costArm,
      ratio: bootstrapSummary(bootstrapRatioOfMeans([], [])),
    },
    mde: {
      n,
      alpha: 0.05,
      power: 0.8,
      discordance: null,
      mde_pp: null,
      method: 'fixture',
      reason: 'fixture',
    },
    tests: [],
    drivers: [],
  }
}

/** Build a schema-valid comparison.json from per-instance outcomes and costs. */
export function makeComparison(spec: FixtureSpec): Comparison {
  const quarantine = new Set(spec.quarantine ?? [])
  const B = spec.B ?? 2000
  const instances: InstanceRow[] = Object.entries(spec.rows).map(([instance, cells]) => {
    const built = Object.fromEntries(spec.cells.map((id) => [id, cellOf(cells[id] ?? { o: 'm' })]))
    return { instance, status: rowStatus(Object.values(built), quarantine.has(instance)), cells: built }
  })
  const planned = instances.filter((r) => r.status !== 'quarantined').length
  const [baseline, ...treatments] = spec.cells as [string, ...string[]]
  const attempts = instances.flatMap((r) => Object.values(r.cells)).filter((x) => x.attempts > 0)
  const cov = (k: InstanceCell['coverage']) => attempts.filter((x) => x.coverage === k).length
  const c: Comparison = {
    schema_version: 1,
    kind: 'experiment',
    experiment_id: spec.experiment ?? 'exp',
    run_id: spec.runId ?? 'run-1',
    round: spec.round ?? 0,
    stamp: {
      manifest_sha256: null,
      plan_sha256: null,
      model: { declared: 'm', provider: 'scripted', api: 'chat', observed: ['m'] },
      panel: {
        family: 'builtin',
        revision: 'r1',
        source: 'inline',
        instances: instances.length,
        quarantine: [...quarantine],
      },
      verifier: null,
      budgets: null,
      retries: null,
      trials: 1,
      telemetry_source: 'ledger',
      thresholds: null,
      seed: 1,
      bootstrap_resamples: B,
      confidence_level: 0.95,
      started_at: null,
      ended_at: null,
      inputs: [],
    },
    rules: {},
    cells: spec.cells.map((id) => {
      const xs = instances.map((r) => r.cells[id] as InstanceCell)
      const count = (o: string) => xs.filter((x) => x.outcome === o).length
      const exits: Record<string, number> = {}
      for (const x of xs) if (x.exit_class) exits[x.exit_class] = (exits[x.exit_class] ?? 0) + 1
      const att = xs.filter((x) => x.attempts > 0)
      return {
        id,
        role: id === baseline ? 'baseline' : 'treatment',
        label: id,
        harness: 'command',
        version_declared: spec.version?.[id] ?? '1.0.0',
        versions_observed: [],
        config_hash: null,
        config_hashes_observed: [],
        api: 'chat',
        model_declared: 'm',
        models_observed: ['m'],
        final_outcomes: {
          resolved: count('resolved'),
          unresolved: count('unresolved'),
          infra_error: count('infra_error'),
          ungraded: count('ungraded'),
          missing: count('missing'),
        },
        exit_classes: exits,
        resolve_rate: { n: 0, value: null, reason: 'fixture' },
        pass_at_k: [],
        pass_hat_k: [],
        pass_k_denominator: '',
        intent_to_treat: {
          attempts: att.length,
          retries: 0,
          spend_usd: null,
          proxy_requests: null,
          wall_s: null,
          reason: 'fixture',
        },
        telemetry: {
          attempts: att.length,
          complete: att.filter((x) => x.coverage === 'complete').length,
          partial: att.filter((x) => x.coverage === 'partial').length,
          missing: att.filter((x) => x.coverage === 'missing').length,
          unknown: att.filter((x) => x.coverage === 'unknown').length,
        },
        request_shape: {
          n: 0,
          first_request_bytes: arm([]),
          first_request_tools: arm([]),
          input_tokens_per_request: arm([]),
          requests_per_task: arm([]),
          aux_requests_per_task: arm([]),
        },
      }
    }),
    blocks: {
      planned,
      outcome_complete: instances.filter((r) => r.status === 'complete' || r.status === 'cost_incomplete')
        .length,
      complete: instances.filter((r) => r.status === 'complete').length,
      incomplete: instances
        .filter((r) => r.status === 'incomplete' || r.status === 'cost_incomplete')
        .map((r) => ({
          instance: r.instance,
          reasons: Object.entries(r.cells)
            .filter(([, x]) => !graded(x) || x.coverage !== 'complete')
            .map(([cell, x]) => ({
              code:
                x.outcome === 'infra_error'
                  ? 'infra_error'
                  : x.outcome === 'missing'
                    ? 'missing_attempt'
                    : x.outcome === 'ungraded'
                      ? 'ungraded'
                      : 'telemetry_missing',
              cell,
              trial: null,
              attempt: null,
              detail: x.outcome === 'infra_error' ? 'budget_exceeded' : x.outcome,
            })),
        })),
      quarantined: [...quarantine],
    },
    telemetry_coverage: {
      attempts: attempts.length,
      complete: cov('complete'),
      partial: cov('partial'),
      missing: cov('missing'),
      unknown: cov('unknown'),
    },
    missing_legs: spec.missingLegs ?? [],
    input_errors: [],
    comparisons: treatments.map((t) => entry(instances, baseline, t, planned, B)),
    mde: {
      n: 0,
      alpha: 0.05,
      power: 0.8,
      discordance: null,
      mde_pp: null,
      method: 'fixture',
      reason: 'fixture',
    },
    instances,
    scope_statement: SCOPE_STATEMENT,
    notes: [],
  }
  return ComparisonSchema.parse(c)
}

/** Rows for n instances: `f(i)` gives each cell's spec for instance i. */
export function rows(
  n: number,
  f: (i: number) => Record<string, CellSpec>,
  prefix = 'inst-',
): FixtureSpec['rows'] {
  return Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`${prefix}${String(i + 1).padStart(2, '0')}`, f(i)]),
  )
}

export const policy = {
  thresholds: {
    resolved_deficit_pp: 10,
    cost_ratio: 1.5,
    fresh_input_ratio: 1.5,
    request_ratio: 1.5,
    min_coverage: 0.8,
  },
  confirmation: { enabled: true, max_blocks: 50, alpha: 0.05 },
  reporting: {
    labels: ['harness-watch'],
    recovered_after: 2,
    fail_on_confirmed_regression: true,
    bootstrap_resamples: 2000,
  },
}

export function ref(comparison: Comparison, path = 'comparison.json') {
  return { comparison, path, sha256: `sha-${comparison.run_id}-${comparison.round}` }
}

/**
 * A folder holding exp.yml (cells a, b, c on `n` inline instances inst-01…, baseline a, 2 shards, seed 11)
 * and its plan.json; `out` is `<dir>/hw-out` (not created).
 */
export async function writeThreeCellPlan(n = 30) {
  const dir = await mkdtemp(path.join(tmpdir(), 'hw-detect-'))
  const ids = Array.from({ length: n }, (_, i) => `inst-${String(i + 1).padStart(2, '0')}`)
  await writeFile(
    path.join(dir, 'exp.yml'),
    `schema_version: 1
experiment: { id: exp }
model: { id: m, provider: scripted, api: chat }
benchmark: { family: builtin, revision: r1 }
panel:
  source: inline
  instances: [${ids.join(', ')}]
cells:
  - { id: a, harness: command, version: '1', config: { command: 'true' } }
  - { id: b, harness: command, version: '1', config: { command: 'true' } }
  - { id: c, harness: command, version: '1', config: { command: 'true' } }
baseline: a
shards: { count: 2 }
seed: 11
`,
  )
  const loaded = await loadManifest(path.join(dir, 'exp.yml'))
  const plan = buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir))
  const planPath = path.join(dir, 'plan.json')
  await writeFile(planPath, strictJson(plan))
  return { dir, out: path.join(dir, 'hw-out'), planPath, plan }
}

/** A complete block with only spend, built directly (no comparison.json: the loop runs 2,000 times). */
export function blockOf(instance: string, base: number, treat: number, trials = 1): PairedBlock {
  const cell = (spend: number) => ({
    outcome: 'resolved' as const,
    exit_class: 'clean',
    trials,
    resolved_trials: trials,
    attempts: trials,
    coverage: 'complete' as const,
    spend_usd: spend,
    proxy_requests: null,
    input_tokens: null,
    input_fresh_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    wall_s: null,
  })
  return { instance, base: cell(base), treat: cell(treat), outcome: true, cost: true, quarantined: false }
}
