import { z } from 'zod'

/**
 * comparison.json `cost_effectiveness`: each cell's resolve rate against its expected spend per
 * attempted instance on the blocks every cell shares with known spend (a Pareto view), and, at a
 * declared value per resolution, each comparison's paired net benefit. Unknown spend is null with a
 * reason, never 0.
 */
const Reason = z.string().nullable().describe('why a null beside it is null')
const Interval = z.tuple([z.number(), z.number()])
const Count = z.number().int().nonnegative()

export const EstimateSchema = z.strictObject({
  estimate: z.number().nullable(),
  ci: Interval.nullable(),
  method: z.string().nullable().describe('bootstrap interval method (bca or percentile)'),
  reason: Reason,
})
export type Estimate = z.infer<typeof EstimateSchema>

export const CostPointSchema = z.strictObject({
  cell: z.string(),
  resolve_rate: EstimateSchema.describe('mean resolved share per block, fraction'),
  expected_spend_usd: EstimateSchema.describe(
    'mean spend per attempted instance (every attempt summed), USD',
  ),
  vs_baseline: z
    .strictObject({
      resolve_rate_diff: EstimateSchema.describe('paired mean of treatment − baseline resolved share'),
      spend_diff_usd: EstimateSchema.describe('paired mean of treatment − baseline spend, USD'),
    })
    .nullable()
    .describe('paired differences with the baseline on the same blocks; null for the baseline itself'),
  frontier: z
    .boolean()
    .nullable()
    .describe('on the Pareto frontier (no cell spends ≤ and resolves ≥, one strictly); null when unplaced'),
})
export type CostPoint = z.infer<typeof CostPointSchema>

export const NetBenefitSchema = z.strictObject({
  baseline: z.string(),
  treatment: z.string(),
  n: Count.describe('outcome-complete blocks with known spend on both sides'),
  value_per_resolution_usd: z.number(),
  net_benefit_usd: EstimateSchema.describe(
    'mean over blocks of V·(resolved_T − resolved_B) − (spend_T − spend_B), USD per attempted instance',
  ),
  resolved_diff: z.number().nullable().describe('mean of resolved_T − resolved_B per block'),
  spend_diff_usd: z.number().nullable().describe('mean of spend_T − spend_B per block, USD'),
})
export type NetBenefit = z.infer<typeof NetBenefitSchema>

export const CostEffectivenessSchema = z.strictObject({
  rule: z.string().describe('how the points, the frontier and the net benefit are computed'),
  blocks: Count.describe('outcome-complete blocks with known spend for every cell: the points’ denominator'),
  reason: Reason.describe('why there are no placed points (e.g. spend unpriced)'),
  points: z.array(CostPointSchema),
  value_per_resolution_usd: z
    .number()
    .nullable()
    .describe('manifest reporting.value_per_resolution_usd; null when not declared (no net benefit)'),
  net_benefit: z.array(NetBenefitSchema).describe('one per comparison; empty when no value is declared'),
})
export type CostEffectiveness = z.infer<typeof CostEffectivenessSchema>
