import { z } from 'zod'
import { CapabilitiesSectionSchema } from './capabilities.js'
import { ClassificationSummarySchema } from './classification.js'
import { CostEffectivenessSchema } from './cost-effectiveness.js'
import { ModelsSectionSchema, MultiplicitySchema } from './models.js'
import { RequestProfileSchema } from './request-profile.js'
import { ScorecardSchema } from './scorecard.js'

/**
 * comparison.json: the paired comparison of every (baseline, treatment) pair of one experiment run (or of
 * two published systems), with every number the reports and the detection stage cite.
 *
 * House rules (statistics.md): no NaN or Infinity anywhere — an undefined value is `null` and the object
 * that holds it carries a `reason`; keys are written sorted and rows in a fixed order, so the same
 * inputs give the same bytes; times come from the artifacts, never from the clock.
 *
 * Units: spend in USD, time in seconds, tokens and requests as counts, rates as fractions in [0, 1],
 * differences of rates in percentage points (`_pp`), ratios treatment / baseline (unitless).
 */
export const COMPARISON_SCHEMA_VERSION = 1

const Reason = z
  .string()
  .nullable()
  .describe('why a null beside it is null; null when all values are defined')
const Interval = z.tuple([z.number(), z.number()]).describe('[low, high], same unit as the estimate')
const Count = z.number().int().nonnegative()

/** The resource metrics compared per block, in the order the reports show them. */
export const METRIC_NAMES = [
  'spend_usd',
  'proxy_requests',
  'input_tokens',
  'input_fresh_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'output_tokens',
  'wall_s',
] as const
export const MetricNameSchema = z.enum(METRIC_NAMES)
export type MetricName = z.infer<typeof MetricNameSchema>

export const BlockReasonCodeSchema = z.enum([
  'missing_leg',
  'missing_attempt',
  'ungraded',
  'infra_error',
  'telemetry_missing',
  'telemetry_partial',
  'telemetry_unknown',
  'model_mismatch',
  'image_mismatch',
  'config_drift',
  'quarantined',
  'duplicate_rows',
  'invalid_rows',
  'telemetry_anomaly',
  'telemetry_suspect',
])
export type BlockReasonCode = z.infer<typeof BlockReasonCodeSchema>

/** Outcome-level reasons remove a block from every paired statistic; telemetry ones only from cost. */
export const TELEMETRY_REASONS: readonly BlockReasonCode[] = [
  'telemetry_missing',
  'telemetry_partial',
  'telemetry_unknown',
  'telemetry_anomaly',
  'telemetry_suspect',
]

export const BlockReasonSchema = z.strictObject({
  code: BlockReasonCodeSchema,
  cell: z.string().nullable(),
  trial: z.number().int().nonnegative().nullable(),
  attempt: z.number().int().positive().nullable(),
  detail: z.string().describe('what was seen, e.g. "telemetry 8/9 requests" or "attempts.jsonl:12 and :40"'),
})
export type BlockReason = z.infer<typeof BlockReasonSchema>

/** Descriptive statistics of one arm over the blocks of a comparison. */
export const ArmSummarySchema = z.strictObject({
  n: Count,
  mean: z.number().nullable(),
  median: z.number().nullable(),
  p90: z.number().nullable(),
  total: z.number().nullable(),
  reason: Reason,
})
export type ArmSummary = z.infer<typeof ArmSummarySchema>

const OneInterval = z.strictObject({ ci: Interval.nullable(), reason: Reason })

/**
 * A paired block-bootstrap interval, with the percentile and BCa intervals (and, for a ratio of means,
 * the studentized one) from the same replicates.
 */
export const BootstrapSchema = z.strictObject({
  estimate: z.number().nullable(),
  ci: Interval.nullable().describe(
    'the interval of `method`: for a ratio of means studentized when defined, else BCa, else percentile; otherwise BCa, else percentile',
  ),
  method: z.enum(['studentized', 'bca', 'percentile']),
  level: z.number(),
  resamples: Count,
  seed: Count,
  percentile: OneInterval,
  bca: OneInterval.extend({ z0: z.number().nullable(), acceleration: z.number().nullable() }),
  studentized: OneInterval.optional().describe(
    'ratio of means: symmetric bootstrap-t on the log scale, delta-method standard error per resample',
  ),
  reason: Reason,
})
export type BootstrapSummary = z.infer<typeof BootstrapSchema>

export const MetricComparisonSchema = z.strictObject({
  unit: z.enum(['usd', 'requests', 'tokens', 'seconds']),
  n: Count.describe('blocks with this metric on both sides (the cost denominator, minus null values)'),
  n_missing_value: Count.describe('cost-complete blocks where a side reported no value for this metric'),
  baseline: ArmSummarySchema,
  treatment: ArmSummarySchema,
  ratio_of_means: BootstrapSchema.describe('Σtreatment / Σbaseline over the same blocks'),
  geometric_mean_ratio: z.strictObject({
    estimate: z.number().nullable(),
    n: Count,
    zeros_excluded: Count.describe('blocks with a zero on either side, left out of the geometric mean'),
    reason: Reason,
  }),
  paired_difference: z.strictObject({
    n: Count,
    mean: z.number().nullable(),
    median: z.number().nullable(),
    ci: Interval.nullable().describe('bootstrap interval of the mean difference (same method as above)'),
    reason: Reason,
  }),
  sign_test: z.strictObject({
    increases: Count,
    decreases: Count,
    ties: Count,
    p_two_sided: z.number().nullable(),
    reason: Reason,
  }),
})
export type MetricComparison = z.infer<typeof MetricComparisonSchema>

export const OutcomeComparisonSchema = z.strictObject({
  n: Count.describe('outcome denominator: complete-outcome blocks'),
  both: Count,
  baseline_only: Count.describe('b: baseline resolved, treatment not (a treatment loss)'),
  treatment_only: Count.describe('c: treatment resolved, baseline not (a treatment win)'),
  neither: Count,
  wins: Count,
  losses: Count,
  ties: Count,
  baseline_rate: z.number().nullable(),
  treatment_rate: z.number().nullable(),
  diff_pp: z.number().nullable().describe('(c − b) / n × 100'),
  diff_ci: Interval.nullable(),
  diff_ci_method: z.string(),
  level: z.number(),
  mcnemar: z.strictObject({
    b: Count,
    c: Count,
    n_discordant: Count,
    p_two_sided: z.number(),
    p_one_sided: z.number().describe('in the regression direction: H1 treatment resolves less (b > c)'),
    p_mid: z.number(),
    note: z.string().nullable().describe('"no discordant pairs" when b = c = 0'),
  }),
  e_value: z.number().nullable().describe('Beta(1,1) mixture e-value on the discordant signs'),
  reason: Reason,
})
export type OutcomeComparison = z.infer<typeof OutcomeComparisonSchema>

export const CostArmSchema = z.strictObject({
  n: Count,
  total_spend_usd: z.number().nullable(),
  resolutions: z
    .number()
    .nullable()
    .describe('Σ resolved over the cost blocks (a fraction per block for k > 1)'),
  expected_cost_per_attempted_instance: z.number().nullable(),
  portfolio_cost_per_resolution: z.number().nullable(),
  conditional_on_success: z.strictObject({
    n: Count,
    mean: z.number().nullable(),
    reason: Reason,
  }),
  reason: Reason,
})
export type CostArm = z.infer<typeof CostArmSchema>

export const MdeSchema = z.strictObject({
  n: Count,
  alpha: z.number(),
  power: z.number(),
  discordance: z.number().nullable().describe('discordant share used (observed, or the stated assumption)'),
  mde_pp: z.number().nullable().describe('smallest resolve-rate difference detectable at this power'),
  method: z.string(),
  reason: Reason,
})
export type Mde = z.infer<typeof MdeSchema>

export const TestSchema = z.strictObject({
  id: z.string().describe('"mcnemar" or "sign:<metric>"'),
  p: z.number(),
  p_holm: z.number(),
  reject: z.boolean(),
})

export const DriverSchema = z.strictObject({
  instance: z.string(),
  kind: z.enum(['treatment_loss', 'treatment_win', 'residual']),
  metric: MetricNameSchema.nullable(),
  baseline: z.number().nullable(),
  treatment: z.number().nullable(),
  log_ratio: z.number().nullable().describe('ln(treatment / baseline); null when a side is 0'),
})

export const ComparisonEntrySchema = z.strictObject({
  baseline: z.string(),
  treatment: z.string(),
  model: z
    .string()
    .nullable()
    .optional()
    .describe('several-model experiments: the model route both cells drive (null: the top-level route)'),
  denominators: z.strictObject({
    coverage: Count.describe('planned blocks'),
    outcome: Count,
    cost: Count.describe('outcome blocks with complete telemetry on both sides'),
  }),
  outcome: OutcomeComparisonSchema,
  metrics: z.strictObject(
    Object.fromEntries(METRIC_NAMES.map((m) => [m, MetricComparisonSchema])) as Record<
      MetricName,
      typeof MetricComparisonSchema
    >,
  ),
  cost_per_resolution: z.strictObject({
    n: Count,
    baseline: CostArmSchema,
    treatment: CostArmSchema,
    ratio: BootstrapSchema.describe('treatment / baseline portfolio cost per resolution'),
  }),
  mde: MdeSchema,
  tests: z.array(TestSchema).describe('Holm step-down across this comparison'),
  not_evaluated: z
    .string()
    .optional()
    .describe(
      'why the comparison has no evaluated pair (a cell with no agent outcome): no test, no difference, no chart row; absent when evaluated',
    ),
  drivers: z.array(DriverSchema).describe('discordant blocks, then the largest paired spend residuals'),
})
export type ComparisonEntry = z.infer<typeof ComparisonEntrySchema>

export const PassKSchema = z.strictObject({
  k: z.number().int().positive(),
  value: z.number().nullable(),
  n_instances: Count,
  reason: Reason,
})

const Spread = ArmSummarySchema

export const CellSummarySchema = z.strictObject({
  id: z.string(),
  role: z.enum(['baseline', 'treatment', 'other']),
  label: z.string().describe('display name'),
  harness: z.string(),
  version_declared: z.string().nullable(),
  versions_observed: z.array(z.string()),
  config_hash: z.string().nullable(),
  config_hashes_observed: z.array(z.string()),
  api: z.string().nullable(),
  model_declared: z.string().nullable(),
  models_observed: z.array(z.string()),
  final_outcomes: z.strictObject({
    resolved: Count,
    unresolved: Count,
    infra_error: Count,
    ungraded: Count,
    missing: Count,
  }),
  exit_classes: z.record(z.string(), Count),
  resolve_rate: z.strictObject({
    n: Count,
    value: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe('resolved share of the outcome-complete blocks, 0 to 1'),
    reason: Reason,
  }),
  pass_at_k: z.array(PassKSchema),
  pass_hat_k: z.array(PassKSchema),
  pass_k_denominator: z.string(),
  intent_to_treat: z.strictObject({
    attempts: Count,
    retries: Count,
    spend_usd: z.number().nullable(),
    proxy_requests: z.number().nullable(),
    wall_s: z.number().nullable(),
    reason: Reason,
  }),
  telemetry: z.strictObject({
    attempts: Count,
    complete: Count,
    partial: Count,
    missing: Count,
    unknown: Count,
  }),
  resources: z
    .strictObject(
      Object.fromEntries(METRIC_NAMES.map((m) => [m, ArmSummarySchema])) as Record<
        MetricName,
        typeof ArmSummarySchema
      >,
    )
    .optional()
    .describe(
      'unpaired, per cell: every non-quarantined instance whose telemetry is complete and reports the metric',
    ),
  request_shape: z.strictObject({
    n: Count,
    first_request_bytes: Spread,
    first_request_tools: Spread,
    input_tokens_per_request: Spread,
    requests_per_task: Spread,
    aux_requests_per_task: Spread,
  }),
})
export type CellSummary = z.infer<typeof CellSummarySchema>

export const InstanceCellSchema = z.strictObject({
  outcome: z.enum(['resolved', 'unresolved', 'infra_error', 'ungraded', 'missing']),
  exit_class: z.string().nullable(),
  trials: Count,
  resolved_trials: Count,
  attempts: Count,
  coverage: z.enum(['complete', 'partial', 'missing', 'unknown']),
  spend_usd: z.number().nullable(),
  proxy_requests: z.number().nullable(),
  input_tokens: z.number().nullable(),
  input_fresh_tokens: z.number().nullable(),
  cache_read_tokens: z.number().nullable(),
  cache_write_tokens: z.number().nullable(),
  output_tokens: z.number().nullable(),
  wall_s: z.number().nullable(),
  atif: z
    .array(z.string())
    .optional()
    .describe("each attempt's ATIF v1.7 trajectory file, relative to the artifacts folder"),
})
export type InstanceCell = z.infer<typeof InstanceCellSchema>

export const InstanceRowSchema = z.strictObject({
  instance: z.string(),
  status: z.enum(['complete', 'cost_incomplete', 'incomplete', 'quarantined']),
  cells: z.record(z.string(), InstanceCellSchema),
})
export type InstanceRow = z.infer<typeof InstanceRowSchema>

/** A confirmation rerun's trials split per block into the decision trials and the estimation trials. */
export const TrialHalvesSchema = z.strictObject({
  seed: z.number().int().describe("the plan's seed the split was drawn from"),
  trials: z.strictObject({ decision: Count, estimate: Count }),
  decision_trials: z
    .record(z.string(), z.array(z.number().int().nonnegative()))
    .describe(
      "each planned instance's decision trials (0-based trial indices); the rest are its estimation trials",
    ),
  decision: z.array(InstanceRowSchema).describe("each block's row over its decision trials alone"),
  estimate: z.array(InstanceRowSchema).describe("each block's row over its estimation trials alone"),
})
export type TrialHalves = z.infer<typeof TrialHalvesSchema>

/** One distinct container environment of the final attempts (image, limits, network per phase). */
export const EnvironmentStampSchema = z.strictObject({
  runtime: z.string(),
  image_ref: z.string(),
  image_id: z.string(),
  resources: z.strictObject({
    cpus: z.number(),
    memory_mb: z.number(),
    pids: z.number(),
    storage_mb: z.number().nullable(),
    storage_enforced: z.boolean().nullable(),
  }),
  network: z.strictObject({ agent: z.string(), verifier: z.string().nullable() }),
  verifier_container: z.string().nullable(),
  attempts: Count,
})
export type EnvironmentStamp = z.infer<typeof EnvironmentStampSchema>

export const ComparisonSchema = z.strictObject({
  schema_version: z.literal(COMPARISON_SCHEMA_VERSION),
  kind: z.enum(['experiment', 'published']),
  experiment_id: z.string(),
  run_id: z.string().nullable(),
  round: Count.describe('0 = first run; 1.. = confirmation rounds'),
  stamp: z.strictObject({
    manifest_sha256: z.string().nullable(),
    plan_sha256: z.string().nullable(),
    model: z.strictObject({
      declared: z.string().nullable(),
      provider: z.string().nullable(),
      api: z.string().nullable(),
      observed: z.array(z.string()),
    }),
    panel: z.strictObject({
      family: z.string().nullable(),
      revision: z.string().nullable(),
      source: z.string().nullable(),
      instances: Count,
      quarantine: z.array(z.string()),
    }),
    verifier: z.string().nullable(),
    budgets: z.string().nullable(),
    retries: z.string().nullable(),
    trials: z.number().int().positive(),
    telemetry_source: z.string().nullable(),
    thresholds: z.record(z.string(), z.number()).nullable(),
    seed: Count,
    bootstrap_resamples: Count,
    confidence_level: z.number(),
    started_at: z.string().nullable().describe('earliest attempt start in the artifacts'),
    ended_at: z.string().nullable().describe('latest attempt end in the artifacts'),
    inputs: z.array(z.strictObject({ path: z.string(), sha256: z.string() })),
    isolation: z
      .array(z.strictObject({ backend: z.string(), canary: z.string().nullable(), legs: Count }))
      .optional()
      .describe('sandbox backends the legs ran in (leg.json isolation, canary); absent before sandboxes'),
    environments: z
      .array(EnvironmentStampSchema)
      .optional()
      .describe(
        'container backend: each distinct image, resources and per-phase network the final attempts ran with, and how many; absent without containers',
      ),
  }),
  rules: z.record(z.string(), z.string()).describe('the stated rule behind each statistic'),
  cells: z.array(CellSummarySchema),
  blocks: z.strictObject({
    planned: Count,
    outcome_complete: Count,
    complete: Count.describe('outcome-complete with complete telemetry for every cell'),
    incomplete: z.array(z.strictObject({ instance: z.string(), reasons: z.array(BlockReasonSchema) })),
    quarantined: z.array(z.string()),
  }),
  telemetry_coverage: z.strictObject({
    attempts: Count,
    complete: Count,
    partial: Count,
    missing: Count,
    unknown: Count,
  }),
  missing_legs: z.array(
    z.strictObject({
      leg: z.string(),
      cell: z.string(),
      shard: Count,
      artifact: z.string(),
      reason: z.string(),
    }),
  ),
  input_errors: z.array(
    z.strictObject({ file: z.string(), line: z.number().int().positive().nullable(), message: z.string() }),
  ),
  comparisons: z.array(ComparisonEntrySchema),
  models: ModelsSectionSchema.optional().describe(
    'several models: per-model groups, harness × model interactions; absent with one model',
  ),
  multiplicity: MultiplicitySchema.optional().describe('adjustment across every test the report states'),
  mde: MdeSchema.describe('for the panel: outcome n, discordance pooled over the comparisons (or assumed)'),
  instances: z.array(InstanceRowSchema),
  scope_statement: z.string(),
  notes: z.array(z.string()),
  reuploads: z
    .array(
      z.strictObject({
        leg: z.string(),
        read: z.string(),
        run_attempt: Count,
        replaces: z.array(z.string()),
      }),
    )
    .optional()
    .describe('legs read from a re-upload (a later run attempt) in place of earlier uploads'),
  scorecard: ScorecardSchema.optional().describe(
    'per cell: pass@1, pass^k, cost per solved task, tool-call error rate, exits',
  ),
  drift: z
    .array(
      z.strictObject({
        leg: z.string(),
        cell: z.string(),
        file: z.string().describe('leg.json, relative to the artifacts folder'),
        manifest_sha256: z.string().nullable().describe('what the leg states, when not the plan’s'),
        config_hash: z.string().nullable().describe('what the leg states, when not the planned one'),
      }),
    )
    .optional()
    .describe(
      'legs that ran under another manifest version or config hash than the plan (their blocks are config_drift); absent when none',
    ),
  classification: ClassificationSummarySchema.optional().describe(
    'every attempt’s failure class: separate denominators, telemetry anomalies, findings (experiments only)',
  ),
  cost_effectiveness: CostEffectivenessSchema.optional().describe(
    'resolve rate against expected spend per cell (Pareto view) and the paired net benefit at a declared value per resolution',
  ),
  artifacts_href: z
    .string()
    .optional()
    .describe(
      "the artifacts folder, relative to this file's folder, through which the reports' ATIF links resolve (written again by detect and confirm); absent: the same folder",
    ),
  capabilities: CapabilitiesSectionSchema.optional().describe(
    "each cell's capabilities (its configuration and the tools the proxy saw) and their differences, one line each (experiments only)",
  ),
  request_profile: RequestProfileSchema.optional().describe(
    "each cell's proxy requests by role and their parts, with paired ratios; absent when no attempt recorded request roles",
  ),
  trial_halves: TrialHalvesSchema.optional().describe(
    "confirmation rounds of two or more trials: each block's rows over a seeded half of its trials (the decision trials) and over the rest (the estimation trials), so a confirmation can decide on one and estimate on the other",
  ),
})
export type Comparison = z.infer<typeof ComparisonSchema>

/** The scope statement every report carries (statistics.md, "Scope statement"). */
export const SCOPE_STATEMENT =
  'Equal verifier scores do not establish equal maintainability or architecture; one model and one panel ' +
  'do not establish a universal harness ranking; a non-significant difference is not parity (see the ' +
  'minimum detectable effect).'
