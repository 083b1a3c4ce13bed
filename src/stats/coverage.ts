/**
 * Measured coverage of the nominal 95% paired-bootstrap intervals of a ratio of means, stated beside
 * the method wherever the interval is described (comparison.json `rules.ratio_interval`, both
 * reports). Source: `npx tsx bench/intervals.ts 1000 2000` (seeded; 1,000 datasets per n, B = 2,000,
 * paired lognormal costs σ = 1, ρ = 0.5; Monte Carlo SE 0.7 points). Update with the benchmark.
 */
export const RATIO_INTERVAL_COVERAGE = {
  studentized: { 40: 0.95, 200: 0.956 },
  bca: { 40: 0.891, 200: 0.92 },
  percentile: { 40: 0.912, 200: 0.943 },
} as const

/** "measured coverage of the nominal 95% interval …: studentized 95.0% at n = 40, 95.6% at n = 200 (BCa …)". */
export function ratioIntervalCoverageNote(): string {
  const p = (x: number) => `${(100 * x).toFixed(1)}%`
  const c = RATIO_INTERVAL_COVERAGE
  return (
    `measured coverage of the nominal 95% interval on paired lognormal costs (σ = 1): studentized ${p(c.studentized[40])} at n = 40, ` +
    `${p(c.studentized[200])} at n = 200; BCa ${p(c.bca[40])} and ${p(c.bca[200])}; percentile ${p(c.percentile[40])} and ${p(c.percentile[200])} (bench/intervals.ts)`
  )
}
