import { z } from 'zod'
import { ConfirmationSchema, ReportingSchema, ThresholdsSchema } from '../manifest/schema.js'

/**
 * decision.json: what the detection stage concluded from a comparison.json (written beside it).
 *
 * - `status` is the run's verdict: `ok` (no threshold crossed), `breach` (crossed on complete blocks,
 *   unconfirmed: a single run can never do more, F08), `confirmed` (the targeted rerun held the
 *   breach beyond its threshold), `cleared` (the rerun did not), `inconclusive` (evaluation health
 *   failed, e.g. coverage below thresholds.min_coverage: F06; never a regression).
 * - `signals` are threshold crossings (regressions), each with its effect and interval; `improvements`
 *   the crossings in the good direction (reported, never alarmed).
 * - `health` lists evaluation failures (failed or missing legs, harnesses that never started,
 *   missing telemetry, low coverage): they make a comparison inconclusive, never a competitive alarm.
 * - `runs` lists every run the decision rests on (the first run and, after confirmation, the rerun).
 * Units: `pp` = percentage points of resolve rate (treatment − baseline); `ratio` = treatment/baseline.
 */
/**
 * 2: a confirmation carries its rerun-only and combined figures, each with its n, and `decided_on`
 * (1 had a single `projected` figure).
 */
export const DECISION_SCHEMA_VERSION = 2

const Interval = z.tuple([z.number(), z.number()])
const Count = z.number().int().nonnegative()

export const DecisionStatusSchema = z.enum([
  'ok',
  'completed_with_gaps',
  'breach',
  'confirmed',
  'cleared',
  'inconclusive',
])
export type DecisionStatus = z.infer<typeof DecisionStatusSchema>

export const SignalMetricSchema = z.enum(['resolved', 'spend_usd', 'input_fresh_tokens', 'proxy_requests'])
export type SignalMetric = z.infer<typeof SignalMetricSchema>

/** An estimate with its interval; null with a reason when undefined. */
export const EffectSchema = z.strictObject({
  estimate: z.number().nullable(),
  ci: Interval.nullable(),
  unit: z.enum(['pp', 'ratio']),
  method: z.string().describe('how the interval was computed'),
  n: Count.describe('blocks behind the estimate'),
  reason: z.string().nullable(),
})
export type Effect = z.infer<typeof EffectSchema>

export const SignalStateSchema = z.enum([
  'unconfirmed',
  'confirmed',
  'cleared',
  'not_confirmable',
  'inconclusive',
  'small_sample',
])
export type SignalState = z.infer<typeof SignalStateSchema>

/**
 * What the targeted rerun showed for one signal. Two figures, each with its block count in `n`:
 *  - `rerun_only`: the statistic on the rerun blocks alone (every block of the confirmation plan that
 *    is complete for this metric in the rerun; `instances` names them). For a competitive signal it is
 *    the rerun comparison.json's own figure for that comparison.
 *  - `combined`: the statistic over the first run's complete blocks with every rerun block's value
 *    replaced by its rerun value (rerun blocks incomplete for this metric are left out of a ratio;
 *    for a resolve-rate deficit, affected blocks without a complete rerun count as ties).
 * `decided_on` names the figure the threshold was applied to: `rerun_only` for ratios (decide on the
 * rerun data), `combined` for a resolve-rate deficit (its threshold is in points of the whole panel;
 * the direction must also hold on the rerun blocks, b′ > c′).
 */
/**
 * The test a confirmation design decided with, on the rerun data alone (detect/designs/).
 * `p_one_sided` ≤ `alpha` rejects H0 (`hypothesis`); `advantage_p` is the exact one-sided McNemar p
 * of a resolved advantage on the rerun (ratio signals: p ≤ alpha excuses the cost), else null.
 */
export const RerunTestSchema = z.strictObject({
  design: z.string().describe('name@version of the confirmation design'),
  method: z.string(),
  hypothesis: z.string().describe('H0 the test rejects to confirm'),
  n: Count.describe('blocks (non-tied) the test counts'),
  statistic: z.number(),
  p_one_sided: z.number(),
  alpha: z.number(),
  rejects: z.boolean(),
  advantage_p: z.number().nullable(),
  estimand: z
    .string()
    .optional()
    .describe('the quantity the test is about, in words (design ≥ two-stage-split@1)'),
  stages: z
    .array(
      z.strictObject({
        stage: z.string(),
        n: Count,
        p: z.number().describe('one-sided p of this stage'),
        weight: z.number().describe('inverse-normal weight, fixed before the rerun'),
      }),
    )
    .optional()
    .describe('the independent stages a two-stage design combines (statistic: the combined z)'),
})
export type RerunTest = z.infer<typeof RerunTestSchema>

export const RerunResultSchema = z.strictObject({
  round: z.number().int().positive(),
  planned_blocks: Count.describe('blocks of the confirmation plan'),
  complete_blocks: Count.describe('planned blocks complete for this metric in the rerun'),
  instances: z.array(z.string()).describe('the rerun blocks behind rerun_only'),
  rerun_only: EffectSchema,
  combined: EffectSchema,
  decided_on: z.enum(['rerun_only', 'combined']),
  /** Ratio signals: the combined resolve-rate difference that would excuse the cost; null for resolve rate. */
  resolved_advantage: EffectSchema.nullable(),
  /** Resolve-rate difference on the rerun blocks: baseline-only (b) and treatment-only (c) wins. */
  b: Count,
  c: Count,
  p_one_sided: z.number().nullable().describe('exact McNemar in the regression direction, rerun blocks only'),
  holds: z.boolean(),
  reason: z.string().describe('why the signal was confirmed or not'),
  test: RerunTestSchema.optional().describe('the exact one-sided test that decided (design ≥ rerun-exact@1)'),
  estimate: EffectSchema.optional().describe(
    'the figure shown after the decision: estimated on rerun data the decision never used — the estimation half of the blocks (two-stage-split@1–3) or the estimation trials of the sampled blocks (two-stage-split@4)',
  ),
  concentration: z
    .strictObject({
      k: Count.describe('fewest blocks whose removal brings the ratio of totals to the threshold or below'),
      instances: z.array(z.string()),
    })
    .nullable()
    .optional()
    .describe('a ratio that rests on a few blocks (a runaway cost), named rather than read as cleared'),
})
export type RerunResult = z.infer<typeof RerunResultSchema>

export const SignalSchema = z.strictObject({
  id: z.string().describe('"<key>:<metric>"'),
  key: z
    .string()
    .describe('comparison key: "<experiment>/<baseline>-vs-<treatment>" or "<experiment>/self/<cell>"'),
  kind: z.enum(['competitive', 'self']),
  baseline: z.string().describe('baseline cell (for self: the same cell, previous run)'),
  treatment: z.string(),
  metric: SignalMetricSchema,
  direction: z.enum(['regression', 'improvement']),
  rule: z.string().describe('the threshold rule in words'),
  threshold: z.number(),
  effect: EffectSchema,
  /** For ratio signals: the resolve-rate difference that would excuse the cost (a resolved advantage). */
  resolved_advantage: EffectSchema.nullable(),
  p_one_sided: z.number().nullable(),
  instances: z.strictObject({
    driving: z.array(z.string()).describe('regression-direction discordant blocks, or over-threshold blocks'),
    opposing: z.array(z.string()).describe('discordant blocks in the other direction (rerun too)'),
    flaky: z.array(z.string()).describe('driving blocks on quarantined or unstable instances'),
  }),
  flaky_only: z.boolean().describe('every driving block is on a quarantined/unstable instance (F07)'),
  state: SignalStateSchema,
  rerun: RerunResultSchema.nullable(),
})
export type Signal = z.infer<typeof SignalSchema>

export const HealthCodeSchema = z.enum([
  'no_legs_executed',
  'leg_missing',
  'harness_startup_failure',
  'coverage_low',
  'telemetry_missing',
  'infra_errors',
  'identity_mismatch',
  'input_errors',
  'previous_not_comparable',
  'rerun_incomplete',
  'not_evaluated',
  'telemetry_anomaly',
  'timeouts_clustered',
  'shared_error_signature',
  'telemetry_thin_cell',
  'leg_reuploaded',
])
export type HealthCode = z.infer<typeof HealthCodeSchema>

export const HealthSchema = z.strictObject({
  code: HealthCodeSchema,
  severity: z.enum(['error', 'warning']).describe('error: the affected comparison cannot be decided'),
  key: z.string().nullable().describe('comparison key it affects; null = the whole run'),
  cell: z.string().nullable(),
  message: z.string(),
  count: Count,
  instances: z.array(z.string()).describe('up to 50 affected instances'),
})
export type Health = z.infer<typeof HealthSchema>

export const ComparisonVerdictSchema = z.strictObject({
  key: z.string(),
  kind: z.enum(['competitive', 'self']),
  baseline: z.string(),
  treatment: z.string(),
  status: DecisionStatusSchema,
  coverage: z.strictObject({
    planned: Count,
    outcome: Count,
    cost: Count,
    share: z.number().nullable().describe('outcome / planned'),
  }),
  reason: z.string().nullable(),
})
export type ComparisonVerdict = z.infer<typeof ComparisonVerdictSchema>

export const RunRefSchema = z.strictObject({
  round: Count,
  run_id: z.string().nullable(),
  comparison: z.string().describe('path of comparison.json, relative to decision.json'),
  comparison_sha256: z.string(),
})

export const ConfirmationRefSchema = z.strictObject({
  round: z.number().int().positive(),
  plan: z.string().describe('path of the confirmation plan.json, relative to decision.json'),
  seed: z.number().int(),
  cells: z.array(z.string()),
  instances: z.array(z.string()),
  legs: Count,
  capped: z.boolean().describe('more blocks were affected than confirmation.max_blocks'),
  sample: z
    .array(z.string())
    .optional()
    .describe('blocks drawn at random (seeded, independent of the data): ratio signals are tested on these'),
  estimate: z
    .array(z.string())
    .optional()
    .describe(
      'the estimation half of the sample: held out of the decision, the figure shown is estimated on it (empty when the design splits trials instead)',
    ),
  design: z
    .strictObject({
      name: z.string(),
      version: z.number().int().positive(),
      alpha: z.number(),
      statement: z.string(),
    })
    .optional()
    .describe('the confirmation design, its declared one-sided α and its statement for the report'),
})

/**
 * Evidence of the earlier weekly rule (likelihood-ratio e-values multiplied across runs): read from
 * older records only, never written; its crossing is kept (detect/evidence.ts).
 */
export const LegacyEvidenceSchema = z.strictObject({
  key: z.string(),
  alpha: z.number(),
  runs: z.array(
    z.strictObject({
      run_id: z.string(),
      b: Count,
      c: Count,
      theta: z.number().gt(0.5).lt(1).optional(),
      blocks: Count.optional(),
      log_e: z.number(),
    }),
  ),
  log_e: z.number(),
  e: z.number().nullable(),
  threshold: z.number(),
  sufficient: z.boolean(),
  crossed_at: z.string().nullable().optional(),
  statement: z.string(),
})

/** Evidence so far for one comparison key across weekly runs (detect/evidence.ts). */
export const GroupSequentialEvidenceSchema = z.strictObject({
  key: z.string(),
  alpha: z.number().describe('declared one-sided α (confirmation.alpha)'),
  design: z.literal('obrien-fleming'),
  plan: z
    .strictObject({
      looks: z.number().int().positive(),
      constant: z.number(),
      blocks_per_look: z.number().int().positive(),
      max_blocks: z.number().int().positive(),
      discordance: z.number(),
      deficit_pp: z.number(),
      alpha: z.number(),
      power_target: z.number(),
      planned_power: z.number(),
    })
    .describe("the cycle's plan, computed from its first run (recomputed, never read back)"),
  cycle: z
    .number()
    .int()
    .positive()
    .describe('1 for the first test; a test that ends uncrossed starts the next'),
  runs: z.array(
    z.strictObject({
      run_id: z.string(),
      b: Count,
      c: Count,
      blocks: Count.describe('outcome-complete blocks of that run'),
      look: z.number().int().positive(),
      z: z.number().describe('continuity-corrected McNemar Z of the cycle up to this look'),
      bound: z.number().describe("O'Brien–Fleming bound at this look"),
    }),
  ),
  b: Count,
  c: Count,
  blocks: Count,
  z: z.number(),
  bound: z.number(),
  sufficient: z.boolean().describe('the bound was crossed at some look; never reset by a later run'),
  crossed_at: z.string().nullable().describe('the run whose look crossed the bound'),
  ended: z
    .boolean()
    .describe('the last planned look passed without crossing: the next run starts a new test'),
  statement: z.string(),
})
export type GroupSequentialEvidence = z.infer<typeof GroupSequentialEvidenceSchema>
export const EvidenceSchema = z.union([GroupSequentialEvidenceSchema, LegacyEvidenceSchema])
export type Evidence = z.infer<typeof EvidenceSchema>

export const DecisionSchema = z.strictObject({
  schema_version: z.literal(DECISION_SCHEMA_VERSION),
  experiment_id: z.string(),
  run_id: z.string().nullable(),
  round: Count,
  status: DecisionStatusSchema,
  summary: z.string().describe('one line for logs and titles'),
  comparisons: z.array(ComparisonVerdictSchema),
  signals: z.array(SignalSchema),
  improvements: z.array(SignalSchema),
  health: z.array(HealthSchema),
  affected_blocks: z.array(z.string()).describe('instances the confirmation reruns (or reran)'),
  unstable_instances: z.array(z.string()).describe('quarantined, mixed trials, or flipped between runs'),
  thresholds: ThresholdsSchema,
  policy: z.strictObject({ confirmation: ConfirmationSchema, reporting: ReportingSchema }),
  runs: z.array(RunRefSchema),
  previous: RunRefSchema.nullable().describe('the earlier run of the self-regression check'),
  confirmation: ConfirmationRefSchema.nullable(),
  notes: z.array(z.string()),
  evidence: z
    .array(EvidenceSchema)
    .optional()
    .describe('per competitive comparison: the weekly group-sequential test so far'),
})
export type Decision = z.infer<typeof DecisionSchema>

/**
 * confirmation.json, written beside a confirmation plan.json: where the first run's decision is, so
 * that aggregating the rerun can decide without extra inputs (paths relative to this file).
 */
export const CONFIRMATION_SCHEMA_VERSION = 1
export const ConfirmationSidecarSchema = z.strictObject({
  schema_version: z.literal(CONFIRMATION_SCHEMA_VERSION),
  round: z.number().int().positive(),
  decision: z.string().describe('the first run decision.json, relative to this file'),
  signals: z.array(z.string()).describe('ids of the signals the rerun must confirm'),
})
export type ConfirmationSidecar = z.infer<typeof ConfirmationSidecarSchema>
