import { z } from 'zod'
import { MAX_LEDGER_MS, MAX_LEDGER_USD } from './limits.js'

/** Run identity: the run attempt that ran the leg, stated by attempt records, leg.json and ledger rows. */
export const LegAttemptSchema = z
  .number()
  .int()
  .positive()
  .optional()
  .describe('run identity: the run attempt that ran the leg (GITHUB_RUN_ATTEMPT; 1 locally)')

export const LEDGER_SCHEMA_VERSION = 1

const Count = z.number().int().nonnegative().nullable()

/**
 * Token classes of one proxy request, normalised across providers (see telemetry.md):
 * `input_total` counts every prompt token (fresh + cache read + cache write); `input_fresh` =
 * input_total − cache_read − cache_write. A field is null when the upstream did not report it or the
 * route's cache semantics are unknown — never guessed as zero.
 */
export const TokensSchema = z.strictObject({
  input_total: Count,
  input_fresh: Count,
  cache_read: Count,
  cache_write: Count,
  output: Count,
  reasoning: Count,
})
export type Tokens = z.infer<typeof TokensSchema>

/** One tool a request offered the model: its name and a hash of its definition, never its content. */
export const OfferedToolSchema = z.strictObject({
  name: z.string().max(200),
  schema_sha256: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .nullable()
    .describe(
      "first 16 hex digits of sha256 of the tool definition's canonical JSON; null when it could not be hashed",
    ),
})
export type OfferedTool = z.infer<typeof OfferedToolSchema>

/** Who a proxy request belongs to. */
export const AttributionSchema = z.strictObject({
  experiment_id: z.string(),
  run_id: z.string(),
  cell_id: z.string(),
  instance_id: z.string(),
  trial: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  round: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      '0 = first run; 1.. = confirmation rounds (absent in rows written before rounds were recorded)',
    ),
  plan_sha256: z
    .string()
    .optional()
    .describe(
      "run identity: sha256 of the plan's canonical JSON, as the attempt record and leg.json state it (absent in rows written before it, and in rows a gateway attributes by its own metadata alone)",
    ),
  leg_attempt: LegAttemptSchema,
  role: z
    .enum(['user_simulation', 'analyst'])
    .optional()
    .describe(
      "absent = the harness's own request; user_simulation = the simulated user of a multi-turn task; analyst = a diagnosis analyst request (both reported apart, never in a cell's spend)",
    ),
})
export type Attribution = z.infer<typeof AttributionSchema>

/**
 * One ledger row = one provider request seen at the proxy (a "proxy request"). An allowlisted
 * projection: never request/response bodies, headers or keys. `request_shape` holds only sizes and
 * counts of the request's parts (bytes, number of tools/messages), never their content.
 */
export const LedgerRowSchema = z.strictObject({
  schema_version: z.literal(LEDGER_SCHEMA_VERSION),
  request_id: z.string(),
  source: z.enum(['proxy', 'litellm']),
  call_type: z.string().describe('e.g. chat.completions, responses, messages, generateContent'),
  api: z.enum(['chat', 'responses', 'anthropic', 'gemini', 'other']),
  stream: z.boolean().nullable(),
  model: z.string().nullable().describe('model requested by the harness'),
  model_observed: z.string().nullable().describe('model named in the upstream answer'),
  model_group: z.string().nullable(),
  provider: z.string().nullable(),
  status: z.enum(['success', 'failure']),
  http_status: z.number().int().nullable(),
  error: z
    .strictObject({ class: z.string(), code: z.string().nullable(), message: z.string().nullable() })
    .nullable()
    .describe(
      'failure class, e.g. budget_exceeded, rate_limited, upstream_5xx, upstream_unreachable, client_aborted, proxy_stopped, bad_request',
    ),
  started_at: z.string().describe('UTC ISO-8601'),
  ended_at: z.string().nullable(),
  first_token_at: z
    .string()
    .nullable()
    .describe(
      'proxy: when the first byte of the answer body arrived (for streams, the first event — which for Anthropic is message_start, before any text); LiteLLM: its completionStartTime',
    ),
  duration_ms: z.number().nonnegative().max(MAX_LEDGER_MS).nullable(),
  ttft_ms: z
    .number()
    .nonnegative()
    .max(MAX_LEDGER_MS)
    .nullable()
    .describe('ms from the request to first_token_at (time to first byte of the answer body at the proxy)'),
  request_shape: z
    .strictObject({
      bytes: z.number().int().nonnegative(),
      tools: z.number().int().nonnegative().nullable(),
      messages: z.number().int().nonnegative().nullable(),
      system_bytes: z.number().int().nonnegative().nullable(),
    })
    .nullable(),
  tokens: TokensSchema,
  cache_semantics: z.enum(['inclusive', 'exclusive', 'unknown']),
  spend_usd: z
    .number()
    .nonnegative()
    .max(MAX_LEDGER_USD)
    .nullable()
    .describe('USD; null when it cannot be known (unpriced)'),
  spend_source: z.enum(['proxy', 'litellm', 'cost_breakdown', 'recomputed', 'unpriced']),
  spend_logged_usd: z
    .number()
    .min(-MAX_LEDGER_USD)
    .max(MAX_LEDGER_USD)
    .nullable()
    .describe('spend as logged by LiteLLM, when the source is LiteLLM'),
  spend_recomputed_usd: z
    .number()
    .nonnegative()
    .max(MAX_LEDGER_USD)
    .nullable()
    .describe('spend from tokens × the manifest price table'),
  flags: z.array(z.string()).describe('e.g. spend_mismatch, unpriced, model_mismatch'),
  attribution: AttributionSchema.nullable(),
  usage_object: z.record(z.string(), z.unknown()).nullable(),
  additional_usage_values: z.record(z.string(), z.unknown()).nullable(),
  gateway: z
    .strictObject({
      kind: z.enum(['retry', 'fallback', 'refusal', 'unmatched']),
      refusal: z.enum(['auth', 'budget', 'rate']).nullable(),
      evidence: z.array(z.string()),
      attempt: AttributionSchema.nullable().describe('the attempt whose spend-log window held the row'),
    })
    .optional()
    .describe(
      "a gateway's own work (LiteLLM retry, fallback, refusal outside the harness's requests, a row within none of them): kept for audit with attribution null, never counted as the harness's",
    ),
  tools_offered: z
    .array(OfferedToolSchema)
    .max(512)
    .optional()
    .describe(
      'the tools the request offered the model, by name and schema hash (capability manifests); absent when the request offered none or was not read',
    ),
})
export type LedgerRow = z.infer<typeof LedgerRowSchema>

export const CoverageSchema = z.enum(['complete', 'partial', 'missing', 'unknown'])
export type Coverage = z.infer<typeof CoverageSchema>

/**
 * An attempt's telemetry, summed over its ledger rows. Every total is null when coverage is not
 * `complete` enough to state it (missing is never zero). `spend_usd` is null when any row is unpriced.
 */
export const TelemetrySummarySchema = z.strictObject({
  source: z.enum(['ledger', 'litellm']),
  coverage: CoverageSchema,
  reason: z.string().nullable().describe('why coverage is not complete'),
  rows: z.number().int().nonnegative(),
  failed_rows: z.number().int().nonnegative(),
  proxy_requests: z.number().int().nonnegative().nullable(),
  input_tokens: Count,
  input_fresh_tokens: Count,
  cache_read_tokens: Count,
  cache_write_tokens: Count,
  output_tokens: Count,
  reasoning_tokens: Count,
  spend_usd: z.number().nonnegative().max(MAX_LEDGER_USD).nullable(),
  spend_source: z.enum(['proxy', 'litellm', 'cost_breakdown', 'recomputed', 'unpriced', 'mixed', 'none']),
  models_observed: z.array(z.string()),
  model_mismatch: z.boolean(),
  first_request_bytes: z
    .number()
    .int()
    .nonnegative()
    .nullable()
    .describe("bytes of the first request carrying tools (the agent's opening prompt)"),
  first_request_tools: z.number().int().nonnegative().nullable(),
  aux_requests: z
    .number()
    .int()
    .nonnegative()
    .nullable()
    .describe('requests without tools (title/summary calls)'),
  budget_exceeded: z.boolean(),
  flags: z.array(z.string()),
  unpriced_rows: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('rows whose spend cannot be known (tokens without a price): the attempt spend is then null'),
  spend_mismatch_rows: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('rows whose logged spend differs from the recomputed one (the recomputed one is used)'),
  gateway: z
    .strictObject({
      harness_rows: z.number().int().nonnegative(),
      retries: z.number().int().nonnegative(),
      fallbacks: z.number().int().nonnegative(),
      refusals: z.strictObject({
        auth: z.number().int().nonnegative(),
        budget: z.number().int().nonnegative(),
        rate: z.number().int().nonnegative(),
      }),
      harness_refused: z
        .number()
        .int()
        .nonnegative()
        .describe("refusals that answered one of the harness's requests"),
      unmatched: z.number().int().nonnegative(),
      left_out: z.strictObject({
        rows: z.number().int().nonnegative(),
        spend_usd: z.number().nonnegative().max(MAX_LEDGER_USD),
        input_tokens: z.number().int().nonnegative(),
        output_tokens: z.number().int().nonnegative(),
      }),
      examples: z.array(
        z.strictObject({
          request_id: z.string(),
          kind: z.enum(['harness', 'retry', 'fallback', 'refusal', 'unmatched']),
          evidence: z.string(),
        }),
      ),
    })
    .optional()
    .describe(
      "LiteLLM source: the gateway's own rows (retries, fallbacks, refusals) told apart from the harness's requests, and what was left out",
    ),
  reconciliation: z
    .strictObject({
      rows_fetched: z
        .number()
        .int()
        .nonnegative()
        .describe('distinct rows (by request_id) fetched for the window, before the attempt filter'),
      duplicates_dropped: z.number().int().nonnegative(),
      rows_spend_usd: z.number().nonnegative().describe('Σ logged spend of the rows'),
      key_spend_usd: z
        .number()
        .nonnegative()
        .nullable()
        .describe('spend LiteLLM keeps on the key (/key/info)'),
      tolerance_usd: z.number().nonnegative(),
      proxy_requests: z
        .number()
        .int()
        .nonnegative()
        .nullable()
        .describe('requests the front proxy forwarded'),
      waited_ms: z.number().nonnegative().describe('time spent waiting for the spend logs to settle'),
    })
    .nullable()
    .optional()
    .describe('LiteLLM source: how the spend-log rows were checked'),
})
export type TelemetrySummary = z.infer<typeof TelemetrySummarySchema>
