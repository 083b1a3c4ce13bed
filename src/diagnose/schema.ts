import { z } from 'zod'
import type { TrajectoryEvent, TrajectoryIssue } from '../trajectory/schema.js'
import type { CurvePoint } from './behaviour/curve.js'
import type { BehaviourMeasures } from './behaviour/index.js'

/**
 * diagnosis/dossier.json: the evidence behind a confirmed difference, for a person or an analyst to
 * read. Every item has an `id`: a comparison `cmp:<baseline>..<treatment>`, a driving instance
 * `<cmp id>/<instance>`, an attempt `<cell>/<instance>/<trial>-<attempt>` and an event
 * `<attempt id>#<index>`. Nothing here is a statistic: the numbers are copied from comparison.json and
 * the ledger, or counted from trajectories (behaviour measures).
 */
export const DOSSIER_SCHEMA_VERSION = 1

export interface AttemptView {
  id: string
  cell: string
  harness: string
  instance: string
  trial: number
  attempt: number
  outcome: string
  exit_class: string
  verifier: { status: string; reward: number | null; log_tail: string | null }
  /** Relative to the dossier's folder, for links. */
  logs_dir: string
  patch: { bytes: number; files: string[]; text: string; truncated: boolean }
  trajectory: {
    mapper_version: number | null
    raw_count: number
    issues: TrajectoryIssue[]
    events: TrajectoryEvent[]
  }
  measures: BehaviourMeasures
  curve: CurvePoint[]
}

export interface DrivingInstance {
  id: string
  instance: string
  reason: 'treatment_loss' | 'treatment_win' | 'residual'
  metric: string | null
  baseline_value: number | null
  treatment_value: number | null
  log_ratio: number | null
  /** Final attempts, one per trial; ids into `attempts`. Empty with a note when none was found. */
  baseline: string[]
  treatment: string[]
  notes: string[]
}

export interface DossierComparison {
  id: string
  baseline: string
  treatment: string
  status: string | null
  /** Detect's confirmed signals on this pair: "<metric> <effect>" lines copied from decision.json. */
  confirmed: string[]
  instances: DrivingInstance[]
  /** Driving instances left out by the cap. */
  capped: number
}

export interface Dossier {
  schema_version: typeof DOSSIER_SCHEMA_VERSION
  experiment_id: string
  run_id: string | null
  round: number
  decision_status: string | null
  max_instances: number
  comparisons: DossierComparison[]
  attempts: Record<string, AttemptView>
  notes: string[]
}

// ---- the analyst's proposal ----------------------------------------------------------------------

const Evidence = z.strictObject({
  instance: z.string().min(1),
  cell: z.string().min(1),
  event_ids: z.array(z.string().min(1)).min(1),
  claim: z.string().min(1).max(1000),
})

export const PROPOSAL_CATEGORIES = [
  'tool_schema',
  'prompt_or_instructions',
  'caching',
  'exploration',
  'verification',
  'edit_strategy',
  'model_route',
  'infrastructure',
  'other',
] as const

/** What the analyst must answer (issue 14, point 4). Unknown keys are refused. */
export const ProposalAnswerSchema = z.strictObject({
  hypothesis: z.string().min(1).max(2000),
  alternative_hypotheses: z.array(z.string().min(1).max(1000)).max(5),
  category: z.enum(PROPOSAL_CATEGORIES),
  supporting_evidence: z.array(Evidence).min(1).max(20),
  counterevidence: z.array(Evidence).max(20),
  estimated_impact: z.string().min(1).max(1000),
  affected_instances: z.array(z.string().min(1)).min(1),
  predicted_observable_change: z.string().min(1).max(1000),
  single_variable_experiment: z.strictObject({
    variable: z.string().min(1).max(200),
    current_value: z.string().max(500),
    proposed_value: z.string().max(500),
    manifest_patch: z.string().min(1).max(4000).describe('YAML adding the candidate cell'),
    metric: z.string().min(1).max(100),
    expected_direction: z.enum(['increase', 'decrease']),
  }),
})
export type ProposalAnswer = z.infer<typeof ProposalAnswerSchema>

export const GroundingSchema = z.strictObject({
  status: z.enum(['grounded', 'ungrounded', 'not_run']),
  attempts: z.number().int().nonnegative(),
  problems: z.array(z.string()).describe('why each rejected answer was rejected'),
})

/** diagnosis/proposal.json. An ungrounded proposal keeps no claims (`answer: null`). */
export const ProposalFileSchema = z.strictObject({
  schema_version: z.literal(1),
  grounding: GroundingSchema,
  answer: ProposalAnswerSchema.nullable(),
  analyst: z.strictObject({
    route: z.string().describe('how the analyst ran (e.g. "scripted", "harness:pi")'),
    requests: z.number().int().nonnegative().nullable(),
    spend_usd: z
      .number()
      .nonnegative()
      .nullable()
      .describe('the analyst’s own spend, apart from the comparison'),
    harness: z.string().optional().describe('harness and version the analyst ran in, e.g. "pi@0.73.1"'),
    isolation: z.string().optional().describe('sandbox isolation of the analyst’s process'),
    ledger: z
      .string()
      .optional()
      .describe('the analyst’s ledger (proxy requests, attribution role "analyst"), relative to diagnosis/'),
    fallback: z
      .string()
      .optional()
      .describe('why the in-process scripted analyst answered instead of the harness'),
    notes: z.array(z.string()).optional(),
  }),
})
export type ProposalFile = z.infer<typeof ProposalFileSchema>
