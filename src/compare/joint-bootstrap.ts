import { startSums, sumReplicates } from '../ingest/worker.js'
import {
  type BootstrapMethod,
  type BootstrapResult,
  bcaInterval,
  forEachReplicateChunk,
  getResamplePlan,
  jackknifeAcceleration,
  MAX_MATERIALIZED_INDICES,
  MEAN_REASONS,
  type PairedBootstrap,
  percentileInterval,
  ratioMomentColumns,
  selectedQuantiles,
  studentizedRatioInterval,
} from '../stats/index.js'

/**
 * One paired block bootstrap shared by every comparison of a run.
 *
 * Ratio of means, mean difference and cost per resolution depend on the resampled blocks only through
 * column sums. Every comparison of a run resamples the same blocks with the same plan (n, B, seed), so
 * a cell's per-replicate sums are the same in all of them: with 10 cells the baseline's sums serve 9
 * comparisons. This driver sums each (cell, column) once, eight columns per pass over the plan, and
 * evaluates each statistic from the sums. The intervals come from the statistics library
 * (percentileInterval, jackknifeAcceleration, bcaInterval) with the library's rules for undefined
 * replicates and jackknife values, so results are bit-identical to bootstrapRatioOfMeans and
 * bootstrapCostPerResolutionRatio on the same blocks (tested).
 */
export class JointBootstrap {
  readonly n: number
  readonly B: number
  readonly seed: number
  readonly level: number
  private readonly columns = new Map<string, Float64Array>()
  private readonly replicateSums = new Map<string, Float64Array>()
  private running: { keys: string[]; finish: () => Float64Array } | null = null
  private scratch: Float64Array | null = null
  private readonly totals = new Map<string, number>()

  constructor(n: number, opts: { B: number; seed: number; level: number }) {
    this.n = n
    this.B = opts.B
    this.seed = opts.seed
    this.level = opts.level
  }

  /** Register a block-aligned column (length n) under `key`; summed on the next `compute`. */
  add(key: string, column: Float64Array): void {
    if (column.length !== this.n)
      throw new RangeError(`JointBootstrap: column ${key} has ${column.length} values, expected ${this.n}`)
    if (this.columns.has(key)) return
    this.columns.set(key, column)
    let s = 0
    for (let i = 0; i < this.n; i++) s += column[i]!
    this.totals.set(key, s)
  }

  has(key: string): boolean {
    return this.columns.has(key)
  }

  /**
   * Whether Σt/Σb was registered as a ratio (`addRatio`: t, b and the moment columns its studentized
   * interval needs). Columns added one by one (`add`) serve means and differences, not a ratio.
   */
  hasRatio(t: string, b: string): boolean {
    return [t, b, squareKey(t), squareKey(b), crossKey(t, b)].every((k) => this.columns.has(k))
  }

  /**
   * Register the columns of a ratio of means Σt/Σb: t and b, and the moment columns t², b² and t·b
   * its studentized interval needs (squares are shared by every ratio of the same column).
   */
  addRatio(tKey: string, t: Float64Array, bKey: string, b: Float64Array): void {
    this.add(tKey, t)
    this.add(bKey, b)
    const [tt, bb, tb] = ratioMomentColumns(this.columns.get(tKey)!, this.columns.get(bKey)!)
    this.add(squareKey(tKey), tt)
    this.add(squareKey(bKey), bb)
    this.add(crossKey(tKey, bKey), tb)
  }

  /**
   * Per-replicate sums of every registered column not yet summed, eight columns per kernel pass
   * (worker.ts `startSums`). Large jobs go to the worker thread and are collected on first use, so
   * the caller can do other work meanwhile; the sums are the same either way.
   */
  compute(opts: { parallel?: boolean } = {}): void {
    if (this.n < 2) return
    this.collect()
    const pending = [...this.columns.keys()].filter((k) => !this.replicateSums.has(k))
    if (pending.length === 0) return
    const n = this.n
    const B = this.B
    const groups = Math.ceil(pending.length / 8)
    const inter = new Float64Array(groups * n * 8)
    pending.forEach((key, c) => {
      const col = this.columns.get(key)!
      const base = Math.floor(c / 8) * n * 8 + (c % 8)
      for (let i = 0; i < n; i++) inter[base + 8 * i] = col[i]!
    })
    let finish: () => Float64Array
    if (n * B <= MAX_MATERIALIZED_INDICES) {
      // The plan of getResamplePlan(n, B, seed), drawn where the sums are made.
      finish = startSums({ seed: this.seed }, n, B, inter, groups, opts).finish
    } else {
      // A streamed plan (too large to hold): chunk by chunk, on this thread.
      const plan = getResamplePlan(n, B, this.seed)
      const out = new Float64Array(groups * 8 * B)
      forEachReplicateChunk(plan, (idx, firstRow, rowCount) => {
        const chunk = sumReplicates(idx, n, rowCount, inter, groups, { parallel: false })
        for (let c = 0; c < groups * 8; c++) {
          out.set(chunk.subarray(c * rowCount, (c + 1) * rowCount), c * B + firstRow)
        }
      })
      finish = () => out
    }
    this.running = { keys: pending, finish }
  }

  /** Takes in the sums of a running compute, if any (waiting for the worker's share). */
  private collect(): void {
    const run = this.running
    if (!run) return
    this.running = null
    const out = run.finish()
    run.keys.forEach((key, c) => {
      this.replicateSums.set(key, out.subarray(c * this.B, (c + 1) * this.B))
    })
  }

  /**
   * Ratio of means Σt/Σb (keys of two registered columns), as bootstrapRatioOfMeans(b, t).
   * Call `compute()` first.
   */
  ratioOfMeans(t: string, b: string): PairedBootstrap {
    const pb = this.statistic(
      [t, b],
      (s) => (s[1]! > 0 ? s[0]! / s[1]! : null),
      {
        estimate: 'Σbaseline = 0: the ratio of means is undefined',
        replicate: 'Σbaseline = 0 in the resampled blocks',
      },
      fillRatio,
    )
    return { ...pb, studentized: this.studentized(t, b, pb) }
  }

  /** The studentized interval of Σt/Σb from the moment columns registered by `addRatio`. */
  private studentized(t: string, b: string, pb: PairedBootstrap): BootstrapResult {
    const estimate = pb.percentile.estimate
    if (pb.percentile.ci === null || this.n < 2) {
      return this.result('studentized', estimate, null, pb.percentile.reason ?? 'interval undefined')
    }
    const keys = [t, b, squareKey(t), squareKey(b), crossKey(t, b)]
    this.collect()
    const [st, sb, stt, sbb, stb] = keys.map((k) => {
      const s = this.replicateSums.get(k)
      if (!s)
        throw new Error(`JointBootstrap: ratio column ${k} was not computed (register ratios with addRatio)`)
      return s
    }) as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]
    const totalOf = (k: string) => this.totals.get(k)!
    const total = {
      st: totalOf(keys[0]!),
      sb: totalOf(keys[1]!),
      stt: totalOf(keys[2]!),
      sbb: totalOf(keys[3]!),
      stb: totalOf(keys[4]!),
    }
    const interval = studentizedRatioInterval(total, this.n, { st, sb, stt, sbb, stb }, this.level)
    return this.result('studentized', estimate, interval.ci, interval.reason)
  }

  /** Mean difference mean(t − b) from the two columns' sums (equal to Σ(t − b)/n up to rounding). */
  meanDifference(t: string, b: string): PairedBootstrap {
    return this.statistic(
      [t, b],
      (s, count) => (s[0]! - s[1]!) / count,
      { estimate: 'no blocks', replicate: 'empty resample' },
      fillDifference,
    )
  }

  /**
   * Mean of one registered column, (resampled Σ column) / n per replicate: bit-identical to
   * bootstrapMeanDifference(b, t) when the column is pairedDifferenceColumn(b, t), to bootstrapMean(x)
   * for meanColumn(x), and to pairedNetBenefit for netBenefitColumn (the same plan, the same sums in
   * the same order, the same intervals).
   */
  mean(key: string): PairedBootstrap {
    return this.statistic([key], (s, count) => s[0]! / count, MEAN_REASONS, fillMean)
  }

  /**
   * Ratio between arms of portfolio cost per resolution, (Σspend_t/Σres_t)/(Σspend_b/Σres_b), as
   * bootstrapCostPerResolutionRatio.
   */
  costPerResolutionRatio(spendT: string, resT: string, spendB: string, resB: string): PairedBootstrap {
    const rt = this.totals.get(resT) ?? 0
    const rb = this.totals.get(resB) ?? 0
    const estimate =
      rb === 0 && rt === 0
        ? 'no resolutions in either arm'
        : rb === 0
          ? 'no resolutions in the baseline arm'
          : rt === 0
            ? 'no resolutions in the treatment arm'
            : 'baseline spend is 0: the ratio is undefined'
    return this.statistic(
      [spendT, resT, spendB, resB],
      (s) => {
        const denominator = s[1]! * s[2]!
        return s[3]! > 0 && denominator > 0 ? (s[0]! * s[3]!) / denominator : null
      },
      { estimate, replicate: 'no resolutions or no baseline spend in the resampled blocks' },
      fillCostPerResolutionRatio,
    )
  }

  private statistic(
    keys: string[],
    evaluate: (sums: Float64Array, count: number) => number | null,
    reasons: { estimate: string; replicate: string },
    fill?: FillReplicates,
  ): PairedBootstrap {
    const n = this.n
    const K = keys.length
    if (n === 0) return this.unavailable(null, 'no blocks')
    const totals = Float64Array.from(keys.map((k) => this.totals.get(k)!))
    const estimate = evaluate(totals, n)
    if (!defined(estimate)) return this.unavailable(null, reasons.estimate)
    if (n === 1) return this.unavailable(estimate, 'one block: a bootstrap interval needs at least 2 blocks')
    this.collect()
    const outs = keys.map((k) => {
      const s = this.replicateSums.get(k)
      if (!s) throw new Error(`JointBootstrap: column ${k} was not computed`)
      return s
    })
    // One buffer for every statistic: each fills it whole (or returns early) before reading it.
    this.scratch ??= new Float64Array(this.B)
    const replicates = this.scratch
    const sums = new Float64Array(K)
    let undefinedReplicates = 0
    if (fill) undefinedReplicates = fill(outs, replicates, this.B, n)
    else {
      for (let rep = 0; rep < this.B; rep++) {
        for (let k = 0; k < K; k++) sums[k] = outs[k]![rep]!
        const v = evaluate(sums, n)
        if (defined(v)) replicates[rep] = v
        else undefinedReplicates++
      }
    }
    const cols = keys.map((k) => this.columns.get(k)!)
    let leaveOneOut: Float64Array | null = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < K; k++) sums[k] = totals[k]! - cols[k]![i]!
      const v = evaluate(sums, n - 1)
      if (!defined(v)) {
        leaveOneOut = null
        break
      }
      leaveOneOut[i] = v
    }
    if (undefinedReplicates > 0) {
      return this.unavailable(
        estimate,
        `statistic undefined in ${undefinedReplicates} of ${this.B} bootstrap replicates (${reasons.replicate})`,
      )
    }
    const sorted = selectedQuantiles(replicates)
    const pct = percentileInterval(sorted, this.level)
    const percentile = this.result('percentile', estimate, pct.ci, pct.reason)
    if (leaveOneOut === null) {
      const reason = 'BCa undefined: the statistic is undefined when some block is left out (jackknife)'
      return { n, percentile, bca: this.result('bca', estimate, null, reason), z0: null, acceleration: null }
    }
    const acceleration = jackknifeAcceleration(leaveOneOut)
    const bca = bcaInterval(sorted, estimate, acceleration, this.level)
    return { n, percentile, bca: this.result('bca', estimate, bca.ci, bca.reason), z0: bca.z0, acceleration }
  }

  private result(
    method: BootstrapMethod,
    estimate: number | null,
    ci: readonly [number, number] | null,
    reason: string | null,
  ): BootstrapResult {
    const common = { method, level: this.level, B: this.B, seed: this.seed }
    if (ci !== null && estimate !== null) return { estimate, ci, ...common, reason: null }
    return { estimate, ci: null, ...common, reason: reason ?? 'interval undefined' }
  }

  private unavailable(estimate: number | null, reason: string): PairedBootstrap {
    return {
      n: this.n,
      percentile: this.result('percentile', estimate, null, reason),
      bca: this.result('bca', estimate, null, reason),
      z0: null,
      acceleration: null,
    }
  }
}

/**
 * `evaluate` over every replicate, inlined for one statistic: the same arithmetic without a call
 * per replicate. Writes each defined value to replicates[rep]; returns how many are undefined.
 */
type FillReplicates = (sums: Float64Array[], replicates: Float64Array, B: number, n: number) => number

/** Σt/Σb, undefined when Σb ≤ 0 (ratioOfMeans). */
const fillRatio: FillReplicates = (sums, replicates, B) => {
  const st = sums[0]!
  const sb = sums[1]!
  let undefinedReplicates = 0
  for (let rep = 0; rep < B; rep++) {
    const b = sb[rep]!
    const v = b > 0 ? st[rep]! / b : Number.NaN
    if (Number.isFinite(v)) replicates[rep] = v
    else undefinedReplicates++
  }
  return undefinedReplicates
}

/** (Σt − Σb)/n (meanDifference). */
const fillDifference: FillReplicates = (sums, replicates, B, n) => {
  const st = sums[0]!
  const sb = sums[1]!
  let undefinedReplicates = 0
  for (let rep = 0; rep < B; rep++) {
    const v = (st[rep]! - sb[rep]!) / n
    if (Number.isFinite(v)) replicates[rep] = v
    else undefinedReplicates++
  }
  return undefinedReplicates
}

/** Σx/n (mean). */
const fillMean: FillReplicates = (sums, replicates, B, n) => {
  const sx = sums[0]!
  let undefinedReplicates = 0
  for (let rep = 0; rep < B; rep++) {
    const v = sx[rep]! / n
    if (Number.isFinite(v)) replicates[rep] = v
    else undefinedReplicates++
  }
  return undefinedReplicates
}

/** (Σspend_t·Σres_b)/(Σres_t·Σspend_b), undefined unless Σres_b > 0 and the denominator > 0. */
const fillCostPerResolutionRatio: FillReplicates = (sums, replicates, B) => {
  const spendT = sums[0]!
  const resT = sums[1]!
  const spendB = sums[2]!
  const resB = sums[3]!
  let undefinedReplicates = 0
  for (let rep = 0; rep < B; rep++) {
    const denominator = resT[rep]! * spendB[rep]!
    const rb = resB[rep]!
    const v = rb > 0 && denominator > 0 ? (spendT[rep]! * rb) / denominator : Number.NaN
    if (Number.isFinite(v)) replicates[rep] = v
    else undefinedReplicates++
  }
  return undefinedReplicates
}

function squareKey(key: string): string {
  return `${key}\u0001²`
}

function crossKey(t: string, b: string): string {
  return `${t}\u0001×\u0001${b}`
}

function defined(v: number | null): v is number {
  return v !== null && Number.isFinite(v)
}

/**
 * JointBootstraps by block set: comparisons whose blocks are the same instances in the same order
 * share one (and so share every cell's sums). Register every column first, then `computeAll`.
 */
export class SharedBootstraps {
  private readonly sets = new Map<string, JointBootstrap>()
  /** The key of an instance list already seen (callers pass the same arrays again and again). */
  private readonly keys = new WeakMap<readonly string[], string>()
  constructor(private readonly opts: { B: number; seed: number; level: number }) {}

  /** The bootstrap over exactly these blocks (instance ids in block order). */
  get(instances: readonly string[]): JointBootstrap {
    let key = this.keys.get(instances)
    if (key === undefined) {
      key = instances.join('\u0000')
      this.keys.set(instances, key)
    }
    let jb = this.sets.get(key)
    if (!jb) {
      jb = new JointBootstrap(instances.length, this.opts)
      this.sets.set(key, jb)
    }
    return jb
  }

  computeAll(opts: { parallel?: boolean } = {}): void {
    for (const jb of this.sets.values()) jb.compute(opts)
  }
}
