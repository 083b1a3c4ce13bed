import type {
  ArmSummary,
  BootstrapSummary,
  ComparisonEntry,
  CostArm,
  Mde,
  MetricComparison,
  MetricName,
  OutcomeComparison,
} from '../records/comparison.js'
import { METRIC_NAMES } from '../records/comparison.js'
import {
  bootstrapCostPerResolutionRatio,
  bootstrapMeanDifference,
  bootstrapRatioOfMeans,
  chosenInterval,
  costConditionalOnSuccess,
  describe,
  discordantEValue,
  expectedCostPerAttempt,
  geometricMeanOfRatios,
  holm,
  mcnemarExact,
  minimumDetectableEffect,
  type PairedBootstrap,
  pairedDifferences,
  portfolioCostPerResolution,
  RESOLVE_RATE_DIFFERENCE_METHOD,
  resolveRateDifference,
  signTest,
} from '../stats/index.js'
import type { Block, CellBlock } from './blocks.js'
import type { SharedBootstraps } from './joint-bootstrap.js'

export interface PairOptions {
  resamples: number
  seed: number
  level: number
  alpha: number
  power: number
}

export const METRIC_UNITS: Record<MetricName, MetricComparison['unit']> = {
  spend_usd: 'usd',
  proxy_requests: 'requests',
  input_tokens: 'tokens',
  input_fresh_tokens: 'tokens',
  cache_read_tokens: 'tokens',
  cache_write_tokens: 'tokens',
  output_tokens: 'tokens',
  wall_s: 'seconds',
}

/** Discordance assumed for the MDE when a comparison has no discordant pairs to estimate it from. */
export const ASSUMED_DISCORDANCE = 0.2

/** Blocks with at most this many residual drivers listed per comparison. */
const RESIDUAL_DRIVERS = 10

/**
 * Every statistic of one (baseline, treatment) pair over the blocks (statistics.md): W/L/T, the
 * resolve-rate difference with Newcombe's paired interval, exact McNemar (two-sided, one-sided in the
 * regression direction, mid-p), the e-value, each resource's arm summaries, ratio of means with paired
 * bootstrap percentile and BCa intervals, geometric mean ratio, paired difference and sign test, cost
 * per resolution, the MDE, and Holm across the pair's tests. Pure and deterministic for given options.
 */
export function comparePair(
  blocks: Block[],
  baseline: string,
  treatment: string,
  opts: PairOptions,
  shared?: SharedBootstraps,
  panelMde?: Mde,
): ComparisonEntry {
  const outcomeBlocks = outcomeBlocksOf(blocks)
  const costBlocks = costBlocksOf(outcomeBlocks, baseline, treatment)
  const outcome = outcomeStats(outcomeBlocks, baseline, treatment, opts)
  const metrics = {} as Record<MetricName, MetricComparison>
  for (const m of METRIC_NAMES) metrics[m] = metricStats(costBlocks, baseline, treatment, m, opts, shared)
  const cost = costPerResolution(costBlocks, baseline, treatment, opts, shared)
  const mde = panelMde ?? mdeFor(outcome.n, outcome.mcnemar.n_discordant, opts)

  const testIds: string[] = ['mcnemar']
  const ps: number[] = [outcome.mcnemar.p_two_sided]
  for (const m of METRIC_NAMES) {
    const p = metrics[m].sign_test.p_two_sided
    if (p !== null && metrics[m].n > 0) {
      testIds.push(`sign:${m}`)
      ps.push(p)
    }
  }
  const h = holm(ps, opts.alpha)
  const tests = testIds.map((id, i) => ({ id, p: ps[i]!, p_holm: h.adjusted[i]!, reject: h.reject[i]! }))

  return {
    baseline,
    treatment,
    denominators: { coverage: blocks.length, outcome: outcomeBlocks.length, cost: costBlocks.length },
    outcome,
    metrics,
    cost_per_resolution: cost,
    mde,
    tests,
    drivers: drivers(outcomeBlocks, costBlocks, baseline, treatment, metrics.spend_usd),
  }
}

// Derived arrays computed once per input array (registerPair and comparePair ask for the same ones).
// Callers never modify them.
const derived = new WeakMap<object, Map<string, unknown>>()
function once<T>(of: object, key: string, compute: () => T): T {
  let byKey = derived.get(of)
  if (!byKey) {
    byKey = new Map()
    derived.set(of, byKey)
  }
  if (!byKey.has(key)) byKey.set(key, compute())
  return byKey.get(key) as T
}

/** The outcome-complete blocks (the outcome denominator), in block order. */
export function outcomeBlocksOf(blocks: Block[]): Block[] {
  return once(blocks, 'outcome', () => blocks.filter((b) => b.outcomeComplete))
}

/** Outcome-complete blocks where both cells have complete telemetry: the cost denominator. */
export function costBlocksOf(outcomeBlocks: Block[], baseline: string, treatment: string): Block[] {
  return once(outcomeBlocks, `cost\u0000${baseline}\u0000${treatment}`, () =>
    outcomeBlocks.filter((b) => b.cells.get(baseline)?.costComplete && b.cells.get(treatment)?.costComplete),
  )
}

/**
 * Register the columns this pair's bootstraps need with `shared` (done for every pair before any is
 * computed, so each cell's sums are computed once): each metric without missing values, and the spend
 * and resolved share for cost per resolution.
 */
export function registerPair(
  blocks: Block[],
  baseline: string,
  treatment: string,
  shared: SharedBootstraps,
): void {
  const costBlocks = costBlocksOf(outcomeBlocksOf(blocks), baseline, treatment)
  for (const m of METRIC_NAMES) {
    const v = pairedValues(costBlocks, baseline, treatment, m)
    if (v.missing > 0 || v.b.length < 2) continue
    shared.get(v.instances).addRatio(columnKey(treatment, m), v.t, columnKey(baseline, m), v.b)
  }
  const c = costColumns(costBlocks, baseline, treatment)
  if (c.instances.length >= 2) {
    const jb = shared.get(c.instances)
    jb.add(columnKey(baseline, 'spend_usd'), c.sb)
    jb.add(columnKey(treatment, 'spend_usd'), c.st)
    jb.add(columnKey(baseline, 'resolved'), c.rb)
    jb.add(columnKey(treatment, 'resolved'), c.rt)
  }
}

/**
 * The key of one cell's per-block column in a shared bootstrap. A key names one quantity of one cell,
 * so on the same blocks it always holds the same values (whoever registers it).
 */
export function columnKey(cell: string, what: string): string {
  return `${cell}\u0000${what}`
}

/** Paired outcome table and tests over outcome-complete blocks (majority rule for k > 1). */
export function outcomeStats(
  blocks: Block[],
  baseline: string,
  treatment: string,
  opts: Pick<PairOptions, 'level'>,
): OutcomeComparison {
  let both = 0
  let bOnly = 0
  let cOnly = 0
  let neither = 0
  for (const blk of blocks) {
    const rb = blk.cells.get(baseline)?.resolved
    const rt = blk.cells.get(treatment)?.resolved
    if (rb && rt) both++
    else if (rb) bOnly++
    else if (rt) cOnly++
    else neither++
  }
  const n = blocks.length
  const diff = resolveRateDifference(
    { bothResolved: both, baselineOnly: bOnly, treatmentOnly: cOnly, neitherResolved: neither },
    opts.level,
  )
  const mc = mcnemarExact(bOnly, cOnly)
  const e = discordantEValue(bOnly, cOnly)
  return {
    n,
    both,
    baseline_only: bOnly,
    treatment_only: cOnly,
    neither,
    wins: cOnly,
    losses: bOnly,
    ties: both + neither,
    baseline_rate: n > 0 ? (both + bOnly) / n : null,
    treatment_rate: n > 0 ? (both + cOnly) / n : null,
    diff_pp: diff.points,
    diff_ci: diff.ci ? [diff.ci[0], diff.ci[1]] : null,
    diff_ci_method: RESOLVE_RATE_DIFFERENCE_METHOD,
    level: opts.level,
    mcnemar: {
      b: bOnly,
      c: cOnly,
      n_discordant: mc.discordant,
      p_two_sided: mc.pTwoSided,
      p_one_sided: mc.pTreatmentWorse,
      p_mid: mc.pMidTwoSided,
      note: mc.note,
    },
    e_value: e.e,
    reason: n === 0 ? 'no outcome-complete blocks' : null,
  }
}

/** Values of one metric on the cost blocks where both sides report it, block-aligned. */
export function pairedValues(
  blocks: Block[],
  baseline: string,
  treatment: string,
  metric: MetricName,
): { b: Float64Array; t: Float64Array; instances: string[]; missing: number } {
  return once(blocks, `values\u0000${baseline}\u0000${treatment}\u0000${metric}`, () =>
    pairedValuesOf(blocks, baseline, treatment, metric),
  )
}

function pairedValuesOf(
  blocks: Block[],
  baseline: string,
  treatment: string,
  metric: MetricName,
): { b: Float64Array; t: Float64Array; instances: string[]; missing: number } {
  const bs: number[] = []
  const ts: number[] = []
  const instances: string[] = []
  let missing = 0
  for (const blk of blocks) {
    const vb = blk.cells.get(baseline)?.metrics[metric] ?? null
    const vt = blk.cells.get(treatment)?.metrics[metric] ?? null
    if (vb === null || vt === null) {
      missing++
      continue
    }
    bs.push(vb)
    ts.push(vt)
    instances.push(blk.instance)
  }
  // Every block reports it (the usual case): the one instance list of these blocks, shared.
  const list = missing === 0 ? instancesOf(blocks) : instances
  return { b: Float64Array.from(bs), t: Float64Array.from(ts), instances: list, missing }
}

export function metricStats(
  costBlocks: Block[],
  baseline: string,
  treatment: string,
  metric: MetricName,
  opts: PairOptions,
  shared?: SharedBootstraps,
): MetricComparison {
  const { b, t, missing, instances } = pairedValues(costBlocks, baseline, treatment, metric)
  const n = b.length
  const boot = { B: opts.resamples, seed: opts.seed, level: opts.level }
  const jb = shared?.get(instances)
  const kb = columnKey(baseline, metric)
  const kt = columnKey(treatment, metric)
  const joint = jb?.has(kb) && jb.has(kt) ? jb : null
  // A metric with missing values is not registered as a ratio, but its spend columns may be (for
  // cost per resolution, on the same blocks): the ratio is then computed here.
  const ratio = bootstrapSummary(
    joint?.hasRatio(kt, kb) ? joint.ratioOfMeans(kt, kb) : bootstrapRatioOfMeans(b, t, boot),
    opts,
  )
  const gm = geometricMeanOfRatios(b, t)
  const pd = pairedDifferences(b, t)
  // The interval of the mean difference is given for spend (the budget metric); the ratio of means
  // carries the interval for every metric.
  const pdBoot =
    n > 0 && metric === 'spend_usd'
      ? bootstrapSummary(joint ? joint.meanDifference(kt, kb) : bootstrapMeanDifference(b, t, boot), opts)
      : null
  const d = new Float64Array(n)
  for (let i = 0; i < n; i++) d[i] = t[i]! - b[i]!
  const st = signTest(d)
  const noBlocks = n === 0 ? noValueReason(costBlocks.length, missing) : null
  return {
    unit: METRIC_UNITS[metric],
    n,
    n_missing_value: missing,
    baseline: armSummary(b, noBlocks),
    treatment: armSummary(t, noBlocks),
    ratio_of_means: noBlocks ? { ...ratio, reason: noBlocks } : ratio,
    geometric_mean_ratio: {
      estimate: gm.value,
      n: gm.included,
      zeros_excluded: gm.excluded,
      reason: noBlocks ?? gm.reason,
    },
    paired_difference: {
      n: pd.n,
      mean: pd.mean,
      median: pd.median,
      ci: pdBoot?.ci ?? null,
      reason: noBlocks ?? pd.reason ?? (pdBoot ? pdBoot.reason : 'interval given for spend only'),
    },
    sign_test: {
      increases: st.increases,
      decreases: st.decreases,
      ties: st.ties,
      p_two_sided: n > 0 ? st.pTwoSided : null,
      reason: noBlocks ?? st.note,
    },
  }
}

function noValueReason(costBlocks: number, missing: number): string {
  if (costBlocks === 0) return 'no blocks with complete telemetry on both sides'
  return `not reported on ${missing} of ${costBlocks} cost-complete blocks`
}

/** n, mean, median, P90 (type 7) and total of one arm; null statistics with a reason when empty. */
export function armSummary(values: Float64Array, reason: string | null = null): ArmSummary {
  const s = describe(values)
  return {
    n: s.n,
    mean: s.mean,
    median: s.median,
    p90: s.p90,
    total: s.total,
    reason: s.reason ? (reason ?? s.reason) : null,
  }
}

/**
 * A stats-library bootstrap as stored in comparison.json: the studentized interval when the
 * bootstrap has a defined one (ratio of means), else BCa when defined, else percentile.
 */
export function bootstrapSummary(
  pb: PairedBootstrap,
  opts: Pick<PairOptions, 'resamples' | 'seed' | 'level'>,
): BootstrapSummary {
  const chosen = chosenInterval(pb)
  const estimate = pb.percentile.estimate ?? pb.bca.estimate
  return {
    estimate,
    ci: chosen.ci ? [chosen.ci[0], chosen.ci[1]] : null,
    method: chosen.method,
    level: opts.level,
    resamples: pb.percentile.B ?? opts.resamples,
    seed: pb.percentile.seed ?? opts.seed,
    percentile: {
      ci: pb.percentile.ci ? [pb.percentile.ci[0], pb.percentile.ci[1]] : null,
      reason: pb.percentile.reason,
    },
    bca: {
      ci: pb.bca.ci ? [pb.bca.ci[0], pb.bca.ci[1]] : null,
      reason: pb.bca.reason,
      z0: pb.z0,
      acceleration: pb.acceleration,
    },
    ...(pb.studentized
      ? {
          studentized: {
            ci: pb.studentized.ci ? [pb.studentized.ci[0], pb.studentized.ci[1]] : null,
            reason: pb.studentized.reason,
          },
        }
      : {}),
    reason: chosen.ci ? null : chosen.reason,
  }
}

/** The cost-per-resolution columns: blocks with known spend on both sides, block-aligned. */
function costColumns(costBlocks: Block[], baseline: string, treatment: string) {
  return once(costBlocks, `spend\u0000${baseline}\u0000${treatment}`, () =>
    costColumnsOf(costBlocks, baseline, treatment),
  )
}

function costColumnsOf(costBlocks: Block[], baseline: string, treatment: string) {
  const sb: number[] = []
  const st: number[] = []
  const rb: number[] = []
  const rt: number[] = []
  const instances: string[] = []
  for (const blk of costBlocks) {
    const cb = blk.cells.get(baseline)
    const ct = blk.cells.get(treatment)
    const vb = cb?.metrics.spend_usd ?? null
    const vt = ct?.metrics.spend_usd ?? null
    if (!cb || !ct || vb === null || vt === null) continue
    sb.push(vb)
    st.push(vt)
    rb.push(cb.resolvedShare)
    rt.push(ct.resolvedShare)
    instances.push(blk.instance)
  }
  const f = (xs: number[]) => Float64Array.from(xs)
  const list = instances.length === costBlocks.length ? instancesOf(costBlocks) : instances
  return { sb: f(sb), st: f(st), rb: f(rb), rt: f(rt), instances: list }
}

/** The instance ids of `blocks`, one shared array per block list. */
function instancesOf(blocks: Block[]): string[] {
  return once(blocks, 'instances', () => blocks.map((b) => b.instance))
}

/** Expected cost per attempted instance, portfolio cost per resolution (both arms) and their ratio. */
export function costPerResolution(
  costBlocks: Block[],
  baseline: string,
  treatment: string,
  opts: PairOptions,
  shared?: SharedBootstraps,
): ComparisonEntry['cost_per_resolution'] {
  const { sb, st, rb, rt, instances } = costColumns(costBlocks, baseline, treatment)
  const jb = shared?.get(instances)
  const keys = [
    columnKey(treatment, 'spend_usd'),
    columnKey(treatment, 'resolved'),
    columnKey(baseline, 'spend_usd'),
    columnKey(baseline, 'resolved'),
  ] as const
  const boot =
    jb && keys.every((k) => jb.has(k))
      ? jb.costPerResolutionRatio(...keys)
      : bootstrapCostPerResolutionRatio(
          { spendBaseline: sb, spendTreatment: st, resolvedBaseline: rb, resolvedTreatment: rt },
          { B: opts.resamples, seed: opts.seed, level: opts.level },
        )
  const ratio = bootstrapSummary(boot, opts)
  const n = sb.length
  return {
    n,
    baseline: costArm(costBlocks, baseline, sb, rb),
    treatment: costArm(costBlocks, treatment, st, rt),
    ratio: n === 0 ? { ...ratio, reason: 'no blocks with known spend on both sides' } : ratio,
  }
}

/**
 * One arm's cost figures. Every column it hands the statistics functions is a Float64Array: arrays
 * of mixed element kinds (whole-number shares, fractions, empty) made the engine throw away this
 * function's optimized code and compile it again.
 */
function costArm(costBlocks: Block[], cell: string, spend: Float64Array, resolved: Float64Array): CostArm {
  const n = spend.length
  const expected = expectedCostPerAttempt(spend)
  const portfolio = portfolioCostPerResolution(spend, resolved)
  // Conditional on success, per trial: the spend of each resolved trial (k = 1: of each resolved block).
  const successSpend: number[] = []
  for (const blk of costBlocks) {
    const c: CellBlock | undefined = blk.cells.get(cell)
    if (!c || c.metrics.spend_usd === null) continue
    for (const o of c.trials)
      if (o.outcome === 'resolved' && o.metrics.spend_usd !== null) successSpend.push(o.metrics.spend_usd)
  }
  const cond = costConditionalOnSuccess(
    Float64Array.from(successSpend),
    new Float64Array(successSpend.length).fill(1),
  )
  let total = 0
  let res = 0
  for (let i = 0; i < n; i++) {
    total += spend[i]!
    res += resolved[i]!
  }
  return {
    n,
    total_spend_usd: n > 0 ? total : null,
    resolutions: n > 0 ? res : null,
    expected_cost_per_attempted_instance: expected.value,
    portfolio_cost_per_resolution: portfolio.value,
    conditional_on_success: { n: successSpend.length, mean: cond.value, reason: cond.reason },
    reason: n === 0 ? 'no blocks with known spend on both sides' : portfolio.reason,
  }
}

/** MDE at the comparison's outcome n: observed discordance, or the stated assumption when there is none. */
export function mdeFor(
  n: number,
  discordant: number,
  opts: Pick<PairOptions, 'alpha' | 'power'>,
  pooledOver = 1,
): Mde {
  const method = `exact McNemar, two-sided α = ${opts.alpha}, power ${opts.power}, by enumeration`
  if (n === 0) {
    return {
      n,
      alpha: opts.alpha,
      power: opts.power,
      discordance: null,
      mde_pp: null,
      method,
      reason: 'no outcome-complete blocks',
    }
  }
  const observed = discordant / n
  // Rounded to 0.01: the MDE is a planning figure, and comparisons with about the same discordance
  // then share one (exact, enumerated) computation.
  const discordance = observed > 0 ? Math.max(0.01, round(observed, 2)) : ASSUMED_DISCORDANCE
  const r = mdeMemo(n, discordance, opts.alpha, opts.power)
  const assumption =
    observed > 0
      ? `observed discordance ${round(observed, 4)}${pooledOver > 1 ? ` (mean over ${pooledOver} comparisons)` : ''}, used as ${discordance}`
      : `no discordant pairs observed: discordance assumed ${ASSUMED_DISCORDANCE}`
  return {
    n,
    alpha: opts.alpha,
    power: opts.power,
    discordance,
    mde_pp: r.points,
    method: `${method}; ${assumption}`,
    reason: r.reason,
  }
}

const mdeCache = new Map<string, ReturnType<typeof minimumDetectableEffect>>()

function mdeMemo(n: number, discordanceRate: number, alpha: number, power: number) {
  const key = `${n}|${discordanceRate}|${alpha}|${power}`
  let r = mdeCache.get(key)
  if (!r) {
    r = minimumDetectableEffect({ n, discordanceRate, alpha, power })
    if (mdeCache.size > 256) mdeCache.clear()
    mdeCache.set(key, r)
  }
  return r
}

function drivers(
  outcomeBlocks: Block[],
  costBlocks: Block[],
  baseline: string,
  treatment: string,
  spend: MetricComparison,
): ComparisonEntry['drivers'] {
  const out: ComparisonEntry['drivers'] = []
  const spendOf = (blk: Block, cell: string) => blk.cells.get(cell)?.metrics.spend_usd ?? null
  for (const kind of ['treatment_loss', 'treatment_win'] as const) {
    for (const blk of outcomeBlocks) {
      const rb = blk.cells.get(baseline)?.resolved
      const rt = blk.cells.get(treatment)?.resolved
      const hit = kind === 'treatment_loss' ? rb && !rt : rt && !rb
      if (!hit) continue
      const vb = spendOf(blk, baseline)
      const vt = spendOf(blk, treatment)
      out.push({
        instance: blk.instance,
        kind,
        metric: null,
        baseline: vb,
        treatment: vt,
        log_ratio: logRatio(vb, vt),
      })
    }
  }
  // Largest residuals of ln(t/b) around the typical (geometric mean) ratio, spend first, else requests.
  const metric: MetricName = spend.n > 0 ? 'spend_usd' : 'proxy_requests'
  const gm = spend.n > 0 ? spend.geometric_mean_ratio.estimate : null
  const centre = gm && gm > 0 ? Math.log(gm) : 0
  const residuals: Array<{ blk: Block; vb: number; vt: number; lr: number | null; score: number }> = []
  for (const blk of costBlocks) {
    const vb = blk.cells.get(baseline)?.metrics[metric] ?? null
    const vt = blk.cells.get(treatment)?.metrics[metric] ?? null
    if (vb === null || vt === null) continue
    const lr = logRatio(vb, vt)
    residuals.push({ blk, vb, vt, lr, score: lr === null ? Math.abs(vt - vb) : Math.abs(lr - centre) })
  }
  // Log-ratio residuals rank first; blocks with a zero side follow by absolute difference.
  residuals.sort(
    (x, y) =>
      (x.lr === null ? 1 : 0) - (y.lr === null ? 1 : 0) ||
      y.score - x.score ||
      (x.blk.instance < y.blk.instance ? -1 : 1),
  )
  for (const r of residuals.slice(0, RESIDUAL_DRIVERS)) {
    out.push({
      instance: r.blk.instance,
      kind: 'residual',
      metric,
      baseline: r.vb,
      treatment: r.vt,
      log_ratio: r.lr,
    })
  }
  return out
}

function logRatio(b: number | null, t: number | null): number | null {
  if (b === null || t === null || b <= 0 || t <= 0) return null
  return Math.log(t / b)
}

function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
