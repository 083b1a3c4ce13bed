// Coverage of the 95% paired-bootstrap intervals of a ratio of means (the default for spend, fresh
// input and requests), on paired lognormal costs: ln B = σ·z₁, ln T = σ·(ρ·z₁ + √(1 − ρ²)·z₂), σ = 1,
// ρ = 0.5, so the true ratio of means is exactly 1. Seeded (pure-rand); prints studentized (the
// default), percentile and BCa coverage at n = 40 and n = 200 against issue 13's targets (≥ 93.5% at n = 40, ≥ 94% at n = 200).
// A miss is reported beside the method, never hidden; a miss of the default fails the benchmark. Run: npx tsx bench/intervals.ts [datasets] [B]
import { performance } from 'node:perf_hooks'
import { normal } from '../src/calibrate/scenario.js'
import { bootstrapRatioOfMeans } from '../src/stats/bootstrap.js'
import { createRng } from '../src/stats/rng.js'

const datasets = Number(process.argv[2] ?? 1000)
const B = Number(process.argv[3] ?? 2000)
const SIGMA = 1
const RHO = 0.5
const targets: Record<number, number> = { 40: 0.935, 200: 0.94 }

for (const n of [40, 200]) {
  const rng = createRng(20261201 + n)
  let pct = 0
  let bca = 0
  let bcaDefined = 0
  let stu = 0
  let stuDefined = 0
  const t0 = performance.now()
  for (let d = 0; d < datasets; d++) {
    const base = new Float64Array(n)
    const treat = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      const z1 = normal(rng)
      const z2 = normal(rng)
      base[i] = Math.exp(SIGMA * z1)
      treat[i] = Math.exp(SIGMA * (RHO * z1 + Math.sqrt(1 - RHO * RHO) * z2))
    }
    const r = bootstrapRatioOfMeans(base, treat, { B, seed: (d * 7919 + n) >>> 0 })
    if (r.percentile.ci && r.percentile.ci[0] <= 1 && r.percentile.ci[1] >= 1) pct++
    if (r.bca.ci) {
      bcaDefined++
      if (r.bca.ci[0] <= 1 && r.bca.ci[1] >= 1) bca++
    }
    if (r.studentized?.ci) {
      stuDefined++
      if (r.studentized.ci[0] <= 1 && r.studentized.ci[1] >= 1) stu++
    }
  }
  const s = (performance.now() - t0) / 1000
  const target = targets[n] ?? 0.95
  const cp = pct / datasets
  const cb = bcaDefined > 0 ? bca / bcaDefined : 0
  const cs = stuDefined > 0 ? stu / stuDefined : 0
  const se = Math.sqrt((0.95 * 0.05) / datasets)
  console.log(
    `n = ${n}: studentized ${(100 * cs).toFixed(1)}% (defined in ${stuDefined}), percentile ${(100 * cp).toFixed(1)}%, BCa ${(100 * cb).toFixed(1)}% coverage ` +
      `(${datasets} datasets, B = ${B}, Monte Carlo SE ${(100 * se).toFixed(1)} points; target ≥ ${(100 * target).toFixed(1)}%: ` +
      `studentized ${cs >= target ? 'met' : 'MISSED'}, percentile ${cp >= target ? 'met' : 'MISSED'}, BCa ${cb >= target ? 'met' : 'MISSED'}) in ${s.toFixed(1)} s`,
  )
  // The default interval (studentized) carries the target; the others are reported beside it.
  if (cs < target) process.exitCode = 1
}
