import { describe, expect, it } from 'vitest'
import { JointBootstrap, SharedBootstraps } from '../../src/compare/joint-bootstrap.js'
import {
  bootstrapCostPerResolutionRatio,
  bootstrapMeanDifference,
  bootstrapRatioOfMeans,
} from '../../src/stats/index.js'

/** Skewed non-negative values with ties and zeros, deterministic. */
function column(n: number, seed: number, zeros = false): Float64Array {
  let a = seed
  return Float64Array.from({ length: n }, (_, i) => {
    a = (a * 1103515245 + 12345) % 2 ** 31
    const v = Math.exp((a / 2 ** 31) * 4) / 10
    return zeros && i % 9 === 0 ? 0 : Math.round(v * 1000) / 1000
  })
}

const opts = { B: 2000, seed: 11, level: 0.95 }

describe('JointBootstrap is bit-identical to the statistics library', () => {
  it('ratio of means, mean difference and cost per resolution on shared sums', () => {
    const n = 137
    const b = column(n, 1)
    const t = column(n, 2, true)
    const t2 = column(n, 3)
    const rb = Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0 : 1))
    const rt = Float64Array.from({ length: n }, (_, i) => (i % 4 === 0 ? 0 : 0.6))
    const jb = new JointBootstrap(n, opts)
    jb.addRatio('t', t, 'b', b)
    jb.addRatio('t2', t2, 'b', b)
    jb.add('rb', rb)
    jb.add('rt', rt)
    jb.compute()
    expect(jb.ratioOfMeans('t', 'b')).toEqual(bootstrapRatioOfMeans(b, t, opts))
    expect(jb.ratioOfMeans('t2', 'b')).toEqual(bootstrapRatioOfMeans(b, t2, opts))
    // the studentized interval is defined and is the one a figure shows
    expect(jb.ratioOfMeans('t', 'b').studentized!.ci).not.toBeNull()
    expect(jb.costPerResolutionRatio('t', 'rt', 'b', 'rb')).toEqual(
      bootstrapCostPerResolutionRatio(
        { spendBaseline: b, spendTreatment: t, resolvedBaseline: rb, resolvedTreatment: rt },
        opts,
      ),
    )
    const md = jb.meanDifference('t', 'b')
    const lib = bootstrapMeanDifference(b, t, opts)
    expect(md.percentile.estimate).toBeCloseTo(lib.percentile.estimate!, 12)
    expect(md.percentile.ci![0]).toBeCloseTo(lib.percentile.ci![0], 12)
    expect(md.bca.ci![1]).toBeCloseTo(lib.bca.ci![1], 12)
  })

  it('undefined cases carry the library’s reasons', () => {
    const n = 20
    const zeros = new Float64Array(n)
    const t = column(n, 5)
    const sparse = Float64Array.from({ length: n }, (_, i) => (i === 0 ? 1 : 0))
    const jb = new JointBootstrap(n, opts)
    jb.addRatio('t', t, 'z', zeros)
    jb.addRatio('t', t, 's', sparse)
    jb.compute()
    expect(jb.ratioOfMeans('t', 'z')).toEqual(bootstrapRatioOfMeans(zeros, t, opts))
    expect(jb.ratioOfMeans('t', 's')).toEqual(bootstrapRatioOfMeans(sparse, t, opts))
    expect(jb.costPerResolutionRatio('t', 'z', 't', 'z')).toEqual(
      bootstrapCostPerResolutionRatio(
        { spendBaseline: t, spendTreatment: t, resolvedBaseline: zeros, resolvedTreatment: zeros },
        opts,
      ),
    )
    const one = new JointBootstrap(1, opts)
    one.addRatio('b', Float64Array.of(3), 'a', Float64Array.of(2))
    one.compute()
    expect(one.ratioOfMeans('b', 'a')).toEqual(bootstrapRatioOfMeans([2], [3], opts))
  })

  it('the same results whether the worker thread draws the plan and shares the sums or not', () => {
    const n = 211
    const big = { B: 3000, seed: 5, level: 0.95 }
    const columns = Array.from({ length: 11 }, (_, c) => column(n, 20 + c, c % 3 === 0))
    const run = (parallel: boolean) => {
      const jb = new JointBootstrap(n, big)
      columns.forEach((col, c) => {
        jb.add(`c${c}`, col)
        if (c >= 1) jb.addRatio(`c${c}`, col, 'c1', columns[1]!)
      })
      jb.compute({ parallel })
      return columns.slice(1).map((_, c) => jb.ratioOfMeans(`c${c + 1}`, 'c1'))
    }
    const alone = run(false)
    expect(run(true)).toEqual(alone)
    expect(alone[0]).toEqual(bootstrapRatioOfMeans(columns[1]!, columns[1]!, big))
    // c1 / c1: every block in the same proportion, no spread: no studentized interval, BCa shown
    expect(alone[0]!.studentized!.reason).toMatch(/no spread/)
    expect(alone[4]).toEqual(bootstrapRatioOfMeans(columns[1]!, columns[5]!, big))
  })

  it('SharedBootstraps gives one bootstrap per block set', () => {
    const s = new SharedBootstraps(opts)
    expect(s.get(['x', 'y'])).toBe(s.get(['x', 'y']))
    expect(s.get(['x', 'y'])).not.toBe(s.get(['y', 'x']))
  })
})
