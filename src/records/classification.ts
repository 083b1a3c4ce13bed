import { z } from 'zod'

const Count = z.number().int().nonnegative()
const ClassCounts = z.record(z.string(), Count)

/**
 * comparison.json `classification`: the separate denominators and what the classifier found.
 * Trials are counted by their final attempt's class; `attempts` counts every attempt.
 * - scheduled: planned trials (instances × cells × trials);
 * - evaluated: trials whose final attempt is an agent outcome (the outcome denominator before pairing);
 * - metered: evaluated trials whose every attempt has usable telemetry (complete coverage, no
 *   anomaly, no suspect rows, no usage cut off mid-answer);
 * - infrastructure / grading / telemetry / input: trials by the class that kept them out.
 */
export const ClassificationSummarySchema = z.strictObject({
  denominators: z.strictObject({
    scheduled: Count,
    evaluated: Count,
    metered: Count,
    infrastructure: ClassCounts.describe('trials by infrastructure class'),
    grading: ClassCounts.describe('trials by grading class (grader_error, ungraded)'),
    excluded_other: ClassCounts.describe('trials kept out as telemetry_suspect or contradictory'),
  }),
  line: z.string().describe('the denominators in one line, as every report shows them'),
  telemetry: ClassCounts.describe('attempts by telemetry anomaly kind'),
  cells: z.array(
    z.strictObject({
      cell: z.string(),
      scheduled: Count,
      evaluated: Count,
      metered: Count,
      classes: ClassCounts.describe('trials by the final attempt’s class'),
      attempts: ClassCounts.describe('every attempt by class'),
      telemetry: ClassCounts.describe('attempts by telemetry anomaly kind'),
      anomalous_raw_spend_usd: z
        .number()
        .nullable()
        .describe('Σ logged spend of attempts with anomalous telemetry (not used in any comparison)'),
      anomalous_dedup_spend_usd: z
        .number()
        .nullable()
        .describe('the same attempts without suspected duplicates; null when not computable'),
      partial_usage_attempts: Count,
      partial_usage_spend_usd: z
        .number()
        .nullable()
        .describe('usage of attempts cut off mid-answer: shown, never summed into cost'),
      not_evaluated: z.string().nullable().describe('why the cell has no evaluated trial, else null'),
      non_utf8_attempts: Count.optional().describe(
        'attempts whose diff held bytes that are not UTF-8 (decoded with U+FFFD for the grader, never dropped); absent in comparisons written before it',
      ),
      non_utf8_sequences: Count.optional().describe(
        'malformed UTF-8 sequences replaced over those attempts (the records’ deliverable.non_utf8, summed)',
      ),
    }),
  ),
  findings: z.array(
    z.strictObject({
      code: z.enum(['timeouts_clustered', 'shared_error_signature', 'telemetry_thin_cell']),
      cell: z.string().nullable(),
      message: z.string(),
      attempts: Count,
    }),
  ),
})
export type ClassificationSummary = z.infer<typeof ClassificationSummarySchema>
