import type { ComparisonInput } from '../ingest/observations.js'
import type { CellSummary, ComparisonEntry, InstanceRow, Mde } from '../records/comparison.js'
import { COMPARISON_SCHEMA_VERSION, type Comparison, SCOPE_STATEMENT } from '../records/comparison.js'
import type { CostEffectiveness } from '../records/cost-effectiveness.js'
import type { ModelsSection } from '../records/models.js'
import { QUANTILE_METHOD, RESOLVE_RATE_DIFFERENCE_METHOD, ratioIntervalCoverageNote } from '../stats/index.js'
import { type Block, buildBlocks, COST_RULE, OUTCOME_RULE } from './blocks.js'
import { cellSummary, instanceRows, PASS_K_DENOMINATOR } from './cells.js'
import { classificationSummary } from './classification.js'
import { costEffectiveness, mergeCostEffectiveness, registerCostEffectiveness } from './cost-effectiveness.js'
import { SharedBootstraps } from './joint-bootstrap.js'
import {
  familyAdjustment,
  groupInput,
  INTERACTION_RULE,
  interactions,
  type ModelGroup,
  modelGroups,
  modelsSection,
  PAIRING_RULE,
} from './models.js'
import {
  ASSUMED_DISCORDANCE,
  comparePair,
  mdeFor,
  outcomeStats,
  type PairOptions,
  registerPair,
} from './pair.js'
import { type ProfilePair, requestProfile } from './request-profile.js'
import { buildScorecard } from './scorecard.js'
import { trialHalves } from './trial-halves.js'

/** α and power of every test, interval and MDE in a comparison. */
export const ALPHA = 0.05
export const POWER = 0.8

/** The stated rules, written into comparison.json and the report. */
export function statedRules(opts: {
  resamples: number
  seed: number
  level: number
}): Record<string, string> {
  return {
    outcome: OUTCOME_RULE,
    outcome_denominator:
      'blocks where every cell graded every trial, with matching identity (model, config hash, harness version), not quarantined, no duplicate rows',
    resources: COST_RULE,
    coverage_denominator: 'every planned block',
    diff_interval: `${RESOLVE_RATE_DIFFERENCE_METHOD}, ${opts.level * 100}%`,
    mcnemar:
      'exact binomial on the discordant pairs; two-sided, one-sided in the regression direction (treatment resolves less), and mid-p (Fagerland et al. 2013); no discordant pairs → p = 1',
    ratio_interval: `paired block bootstrap, B = ${opts.resamples}, seed ${opts.seed}; studentized (symmetric bootstrap-t on the log ratio, delta-method standard error per resample) when defined, else BCa (jackknife acceleration), else percentile; all three recorded; ${ratioIntervalCoverageNote()}`,
    geometric_mean_ratio:
      'exp(mean ln(treatment/baseline)) over blocks with both sides > 0; blocks with a zero are counted',
    sign_test: 'exact binomial on the count of increases, ties dropped',
    quantiles: QUANTILE_METHOD,
    pass_k: `Chen et al. 2021 (pass@k), τ-bench (pass^k), averaged over ${PASS_K_DENOMINATOR}`,
    cost_per_resolution:
      'expected cost per attempted instance = mean spend per block (every attempt summed); portfolio = Σ spend / Σ resolved per arm, block-bootstrap interval of the ratio between arms; cost conditional on success = mean spend of resolved trials, reported apart',
    multiple_tests: `Holm step-down across each comparison's tests at α = ${ALPHA}`,
    mde: `smallest resolve-rate difference the exact McNemar test detects with power ${POWER} at α = ${ALPHA}, for the panel: at the outcome n and the observed discordance, pooled over the comparisons and rounded to 0.01 (assumed ${ASSUMED_DISCORDANCE} when none is observed)`,
  }
}

/**
 * Build comparison.json's content from a ComparisonInput (pure, deterministic: the same input gives
 * the same value; statistics use only the seeded bootstrap). Never throws for missing data — every
 * gap is an incomplete block, a missing leg or an input error in the result.
 */
export function buildComparison(input: ComparisonInput): Comparison {
  const seed = input.options.seed >>> 0
  const opts: PairOptions = {
    resamples: input.options.resamples,
    seed,
    level: input.options.level,
    alpha: ALPHA,
    power: POWER,
  }
  const blocks = buildBlocks(input)
  // Made once, when first needed (in the single-model case while the worker sums).
  let classificationMemo: ReturnType<typeof classificationSummary> | undefined
  const classification = () => {
    if (classificationMemo === undefined) classificationMemo = classificationSummary(input)
    return classificationMemo
  }
  let instances: InstanceRow[] | undefined
  let span: ReturnType<typeof observedSpan> | undefined
  const groups = modelGroups(input)
  let cells: CellSummary[]
  let comparisons: ComparisonEntry[]
  let mde: Mde
  let models: ModelsSection | undefined
  let costEffectivenessSection: CostEffectiveness
  const value = input.options.valuePerResolutionUsd ?? null
  const profilePairs: ProfilePair[] = []
  let scorecard: ReturnType<typeof buildScorecard> | undefined
  if (!groups) {
    const treatments = input.treatments.filter(
      (t) => t !== input.baseline && input.cells.some((c) => c.id === t),
    )
    const ce = costEffectivenessOf(
      blocks,
      input.cells.map((c) => c.id),
      input.baseline,
      treatments,
      opts,
      value,
    )
    // The cell summaries, the scorecard, the classification summary and the instance rows are made
    // while the worker sums the bootstrap columns.
    let summaries: CellSummary[] = []
    const r = evaluate(blocks, input.baseline, treatments, opts, classification, ce.register, () => {
      summaries = input.cells.map((c) => cellSummary(c, blocks))
      scorecard = buildScorecard(input.cells, input.observations)
      classification()
      instances = instanceRows(
        blocks,
        input.cells.map((c) => c.id),
      )
      span = observedSpan(input)
    })
    for (const t of treatments) profilePairs.push({ baseline: input.baseline, treatment: t, blocks })
    cells = summaries
    comparisons = r.comparisons
    mde = r.mde
    costEffectivenessSection = ce.section()
  } else {
    // Several models: blocks pair only the cells of one model; each model is compared on its own.
    const byGroup = new Map<ModelGroup, Block[]>()
    const summaries = new Map<string, CellSummary>()
    const parts: CostEffectiveness[] = []
    comparisons = []
    let first: Mde | null = null
    for (const g of groups) {
      const sub = groupInput(input, g)
      const gBlocks = buildBlocks(sub)
      byGroup.set(g, gBlocks)
      for (const c of g.cells) summaries.set(c.id, cellSummary(c, gBlocks))
      if (!g.baseline) continue
      // Each model's cost-effectiveness: its cells on its own blocks.
      const ce = costEffectivenessOf(
        gBlocks,
        g.cells.map((c) => c.id),
        g.baseline,
        g.treatments,
        opts,
        value,
      )
      const r = evaluate(gBlocks, g.baseline, g.treatments, opts, classification, ce.register)
      for (const t of g.treatments) profilePairs.push({ baseline: g.baseline, treatment: t, blocks: gBlocks })
      first ??= r.mde
      comparisons.push(...r.comparisons.map((e) => ({ ...e, model: g.route })))
      parts.push(ce.section())
    }
    cells = input.cells.map((c) => summaries.get(c.id) ?? cellSummary(c, blocks))
    mde = first ?? mdeFor(0, 0, opts, 0)
    models = modelsSection(groups, byGroup, interactions(input, groups, byGroup, opts))
    // The frontier is taken across every placed cell of every model.
    costEffectivenessSection = mergeCostEffectiveness(parts, value)
  }
  const multiplicity = familyAdjustment(
    comparisons,
    models?.interactions ?? [],
    input.options.multiplicity ?? 'holm',
    ALPHA,
  )
  const outcomeN = blocks.filter((b) => b.outcomeComplete).length

  const coverage = { attempts: 0, complete: 0, partial: 0, missing: 0, unknown: 0 }
  for (const c of cells) {
    for (const k of ['attempts', 'complete', 'partial', 'missing', 'unknown'] as const)
      coverage[k] += c.telemetry[k]
  }
  const { startedAt, endedAt, observed } = span ?? observedSpan(input)
  const k = Math.max(1, ...input.cells.map((c) => c.trials))
  const profile = requestProfile(
    blocks,
    input.cells.map((c) => c.id),
    profilePairs,
    opts,
  )
  const halves = input.trialSplit ? trialHalves(input, input.trialSplit.seed) : null

  return {
    schema_version: COMPARISON_SCHEMA_VERSION,
    scorecard: scorecard ?? buildScorecard(input.cells, input.observations),
    kind: input.kind,
    experiment_id: input.experimentId,
    run_id: input.runId,
    round: input.round,
    stamp: {
      manifest_sha256: input.stamp.manifestSha256,
      plan_sha256: input.stamp.planSha256,
      model: { ...input.stamp.model, observed: [...observed].sort() },
      panel: { ...input.stamp.panel, instances: blocks.length, quarantine: [...input.quarantine].sort() },
      verifier: input.stamp.verifier,
      budgets: input.stamp.budgets,
      retries: input.stamp.retries,
      trials: k,
      telemetry_source: input.stamp.telemetrySource,
      thresholds: input.stamp.thresholds,
      seed,
      bootstrap_resamples: opts.resamples,
      confidence_level: opts.level,
      started_at: startedAt,
      ended_at: endedAt,
      inputs: input.inputs,
      ...(input.stamp.isolation ? { isolation: input.stamp.isolation } : {}),
      ...(input.stamp.environments ? { environments: input.stamp.environments } : {}),
    },
    rules: {
      ...statedRules(opts),
      ...(models ? { pairing: PAIRING_RULE, interaction: INTERACTION_RULE } : {}),
      family_adjustment: multiplicity.statement,
    },
    cells,
    blocks: {
      planned: blocks.length,
      outcome_complete: outcomeN,
      complete: blocks.filter((b) => b.complete).length,
      incomplete: blocks
        .filter((b) => b.reasons.length > 0 && !b.quarantined)
        .map((b) => ({ instance: b.instance, reasons: b.reasons })),
      quarantined: blocks.filter((b) => b.quarantined).map((b) => b.instance),
    },
    telemetry_coverage: coverage,
    missing_legs: [...input.missingLegs].sort((a, b) => (a.leg < b.leg ? -1 : a.leg > b.leg ? 1 : 0)),
    input_errors: [...input.inputErrors].sort((a, b) =>
      a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0),
    ),
    comparisons,
    ...(models ? { models } : {}),
    multiplicity,
    mde,
    instances:
      instances ??
      instanceRows(
        blocks,
        input.cells.map((c) => c.id),
      ),
    scope_statement: SCOPE_STATEMENT,
    notes: [...input.notes],
    ...(input.reuploads && input.reuploads.length > 0
      ? { reuploads: input.reuploads.map((r) => ({ ...r, replaces: [...r.replaces] })) }
      : {}),
    ...(input.drift && input.drift.length > 0 ? { drift: input.drift.map((d) => ({ ...d })) } : {}),
    ...(classification() ? { classification: classification()! } : {}),
    cost_effectiveness: costEffectivenessSection,
    ...(profile ? { request_profile: profile } : {}),
    ...(halves ? { trial_halves: halves } : {}),
  }
}

/** The first start and last end over the observations, and every model they observed. */
function observedSpan(input: ComparisonInput): {
  startedAt: string | null
  endedAt: string | null
  observed: Set<string>
} {
  let startedAt: string | null = null
  let endedAt: string | null = null
  const observed = new Set<string>()
  for (const o of input.observations) {
    if (o.startedAt && (startedAt === null || o.startedAt < startedAt)) startedAt = o.startedAt
    if (o.endedAt && (endedAt === null || o.endedAt > endedAt)) endedAt = o.endedAt
    for (const m of o.identity.models) observed.add(m)
  }
  return { startedAt, endedAt, observed }
}

/**
 * The cost-effectiveness section of one set of blocks (all cells, or one model's cells on that
 * model's blocks; several models' sections are merged, the frontier taken across every placed cell):
 * `register` adds its bootstrap columns to the comparisons' shared bootstrap before the sums are
 * computed, `section` then builds it from those sums.
 */
function costEffectivenessOf(
  blocks: Block[],
  cellIds: string[],
  baseline: string,
  treatments: string[],
  opts: PairOptions,
  value: number | null,
): { register: (shared: SharedBootstraps) => void; section: () => CostEffectiveness } {
  let sums: SharedBootstraps | undefined
  return {
    register: (shared) => {
      registerCostEffectiveness(blocks, cellIds, baseline, treatments, value, shared)
      sums = shared
    },
    section: () => costEffectiveness(blocks, cellIds, baseline, treatments, opts, value, sums),
  }
}

/**
 * The comparisons of one set of blocks (all cells, or one model's): every pair's bootstrap columns
 * registered first (and those of `registerMore`: the cost-effectiveness section's) so each column's
 * sums are computed once, then the panel MDE and each pair.
 */
function evaluate(
  blocks: Block[],
  baseline: string,
  treatments: string[],
  opts: PairOptions,
  classification: () => ReturnType<typeof classificationSummary>,
  registerMore: (shared: SharedBootstraps) => void,
  meanwhile?: () => void,
): { blocks: Block[]; comparisons: ComparisonEntry[]; mde: Mde } {
  // Large sums run on the worker thread while the MDE is computed here.
  const shared = new SharedBootstraps({ B: opts.resamples, seed: opts.seed, level: opts.level })
  for (const t of treatments) registerPair(blocks, baseline, t, shared)
  registerMore(shared)
  shared.computeAll()
  // The MDE is a property of the panel: outcome n is the same for every comparison (blocks are
  // complete across all cells), and the discordance is pooled over the comparisons.
  const outcomeBlocks = blocks.filter((b) => b.outcomeComplete)
  const discordant = treatments.map(
    (t) => outcomeStats(outcomeBlocks, baseline, t, opts).mcnemar.n_discordant,
  )
  const meanDiscordant = discordant.length ? discordant.reduce((x, y) => x + y, 0) / discordant.length : 0
  const mde = mdeFor(outcomeBlocks.length, meanDiscordant, opts, discordant.length)
  // Work of the caller's that needs no sums, done before the first comparison waits for them.
  meanwhile?.()
  const comparisons = treatments.map((t) =>
    notEvaluated(comparePair(blocks, baseline, t, opts, shared, mde), classification()),
  )
  return { blocks, comparisons, mde }
}

/**
 * A comparison with no evaluated pair (a cell with no agent outcome, or no outcome-complete block) is
 * not evaluated: it keeps its counts but carries no test, so nothing downstream reads a p or a
 * difference from it.
 */
function notEvaluated(
  e: ReturnType<typeof comparePair>,
  classification: ReturnType<typeof classificationSummary>,
): ReturnType<typeof comparePair> {
  if (e.denominators.outcome > 0) return e
  const dead = (classification?.cells ?? []).filter(
    (c) => (c.cell === e.baseline || c.cell === e.treatment) && c.not_evaluated !== null,
  )
  const why =
    dead.length > 0
      ? dead.map((c) => `cell ${c.cell} not evaluated: ${c.not_evaluated}`).join('; ')
      : 'no block has an agent outcome for every cell'
  return { ...e, tests: [], not_evaluated: why }
}
