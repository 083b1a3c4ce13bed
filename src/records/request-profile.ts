import { z } from 'zod'
import { RequestRoleSchema } from './ledger.js'

const Count = z.number().int().nonnegative()
const Num = z.number().nonnegative().nullable()

/** Metrics of a cell's requests compared between cells, each a per-block sum (mean over trials). */
export const REQUEST_PROFILE_METRICS = [
  'primary_requests',
  'other_requests',
  'request_bytes',
  'tool_schema_bytes',
  'system_bytes',
  'history_bytes',
  'latest_message_bytes',
  'cache_prefix_bytes',
] as const
export const RequestProfileMetricSchema = z.enum(REQUEST_PROFILE_METRICS)
export type RequestProfileMetric = z.infer<typeof RequestProfileMetricSchema>

export const RequestProfileRatioSchema = z.strictObject({
  metric: RequestProfileMetricSchema,
  n: Count.describe('blocks paired: complete telemetry with roles (or parts) on both cells'),
  baseline_total: Num,
  treatment_total: Num,
  estimate: z.number().nullable().describe('ratio of means Σtreatment/Σbaseline over the paired blocks'),
  ci: z.tuple([z.number(), z.number()]).nullable(),
  method: z.string(),
  reason: z.string().nullable(),
})

/**
 * Each cell's proxy requests by role (with spend) and the parts of its requests, and every
 * treatment's paired ratios against the baseline. Sizes, counts and parameter values only.
 */
export const RequestProfileSchema = z.strictObject({
  rule: z.string().describe('how roles are decided and what is summed'),
  cells: z.array(
    z.strictObject({
      id: z.string(),
      trials: Count.describe('trials whose attempts all recorded request roles'),
      trials_without_roles: Count,
      roles: z.array(
        z.strictObject({
          role: RequestRoleSchema,
          requests: Count,
          share: z.number().min(0).max(1).nullable().describe("of the cell's requests"),
          spend_usd: Num.describe('null when any request of the role is unpriced'),
        }),
      ),
      parts: z
        .strictObject({
          requests: Count,
          unread: Count.describe('requests whose parts could not be read (left out of the means)'),
          per_request: z.strictObject({
            request_bytes: Num,
            tool_schema_bytes: Num,
            system_bytes: Num,
            history_bytes: Num,
            latest_message_bytes: Num,
            cache_prefix_bytes: Num,
          }),
          cache_prefix_share: z
            .number()
            .min(0)
            .max(1)
            .nullable()
            .describe("share of request bytes identical to the attempt's previous request's prefix"),
        })
        .nullable(),
      params: z
        .record(z.string(), z.array(z.string()))
        .describe('allowlisted parameters sent: distinct values'),
    }),
  ),
  comparisons: z.array(
    z.strictObject({
      baseline: z.string(),
      treatment: z.string(),
      ratios: z.array(RequestProfileRatioSchema),
    }),
  ),
})
export type RequestProfile = z.infer<typeof RequestProfileSchema>
