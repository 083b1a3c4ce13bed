import { z } from 'zod'
import { CanaryResultSchema, ContainerNetworkSchema, IsolationSchema } from './isolation.js'
import { LegAttemptSchema, TelemetrySummarySchema } from './ledger.js'
import { LedgerCheckSchema } from './ledger-check.js'
import { MAX_LEDGER_MS } from './limits.js'

/** How an attempt's process ended; the manifest's retry rule names these too. */
export const ExitClassSchema = z.enum(['clean', 'timeout', 'budget', 'error', 'infra'])
export type ExitClass = z.infer<typeof ExitClassSchema>

export const ATTEMPT_SCHEMA_VERSION = 1
export const LEG_SCHEMA_VERSION = 1

export const OutcomeSchema = z.enum(['resolved', 'unresolved', 'infra_error', 'ungraded'])
export type Outcome = z.infer<typeof OutcomeSchema>

/** What the harness said about its own usage; kept only as a cross-check of the proxy ledger. */
export const SelfReportSchema = z.strictObject({
  input_tokens: z.number().nonnegative().nullable(),
  output_tokens: z.number().nonnegative().nullable(),
  cache_read_tokens: z.number().nonnegative().nullable(),
  cache_write_tokens: z.number().nonnegative().nullable(),
  cost_usd: z.number().nonnegative().nullable(),
  requests: z.number().int().nonnegative().nullable(),
  turns: z.number().int().nonnegative().nullable(),
})
export type SelfReport = z.infer<typeof SelfReportSchema>

/**
 * One line of attempts.jsonl: one execution of a cell on an instance (retries are new attempts;
 * every attempt is kept — intent-to-treat). Times are UTC ISO-8601; durations in milliseconds.
 */
/** What the container an attempt ran in was (container backend). */
export const AttemptEnvironmentSchema = z.strictObject({
  runtime: z.string().describe('docker or podman'),
  runtime_version: z.string(),
  image_ref: z.string(),
  image_id: z.string().describe('the local image id (sha256:…): per-machine provenance'),
  workdir: z.string(),
  resources: z.strictObject({
    cpus: z.number().positive(),
    memory_mb: z.number().int().positive(),
    pids: z.number().int().positive(),
    storage_mb: z.number().int().positive().nullable(),
  }),
  network: z.strictObject({
    agent: ContainerNetworkSchema,
    verifier: ContainerNetworkSchema.nullable().describe('null when no verifier container ran'),
  }),
  verifier_container: z
    .enum(['agent', 'fresh'])
    .nullable()
    .optional()
    .describe(
      "where tests/test.sh ran: agent (the agent's own container after it exited, Harbor's rule) or fresh (a new container of the same image with the final workspace); null when no verifier ran",
    ),
  verifier_container_reason: z
    .string()
    .nullable()
    .optional()
    .describe(
      'why a fresh container (environment_mode separate, verifier.isolation fresh, the agent container gone…)',
    ),
  storage_enforced: z
    .boolean()
    .optional()
    .describe('whether resources.storage_mb was enforced (false: declared but this runtime cannot limit it)'),
})
export type AttemptEnvironment = z.infer<typeof AttemptEnvironmentSchema>

export const AttemptRecordSchema = z.strictObject({
  schema_version: z.literal(ATTEMPT_SCHEMA_VERSION),
  experiment_id: z.string(),
  run_id: z.string(),
  round: z.number().int().nonnegative().describe('0 = first run; 1.. = confirmation rounds'),
  leg: z.string(),
  cell_id: z.string(),
  harness: z.string(),
  harness_version: z.string().nullable().describe('version probed from the installed CLI'),
  config_hash: z.string(),
  model: z.string().describe('model id declared in the manifest'),
  instance_id: z.string(),
  trial: z.number().int().nonnegative(),
  attempt: z.number().int().positive().describe('1-based, per (instance, trial)'),
  final: z.boolean().describe('true for the attempt whose outcome counts (the last one)'),
  quarantined: z.boolean(),
  started_at: z.string(),
  ended_at: z.string(),
  phases_ms: z.strictObject({
    setup: z.number().nonnegative().max(MAX_LEDGER_MS),
    harness: z.number().nonnegative().max(MAX_LEDGER_MS),
    verifier: z.number().nonnegative().max(MAX_LEDGER_MS),
  }),
  exit: z.strictObject({
    class: ExitClassSchema,
    code: z.number().int().nullable(),
    signal: z.string().nullable(),
    reason: z.string().nullable(),
  }),
  timed_out: z.boolean(),
  outcome: OutcomeSchema,
  outcome_reason: z
    .string()
    .nullable()
    .optional()
    .describe('why the outcome is infra_error or ungraded, e.g. budget_exceeded (F06); null when graded'),
  verifier: z.strictObject({
    status: z.enum(['pass', 'fail', 'error', 'timeout', 'skipped']),
    exit_code: z.number().int().nullable(),
    reward: z.number().nullable(),
    duration_ms: z.number().nonnegative().max(MAX_LEDGER_MS),
  }),
  deliverable: z.strictObject({
    bytes: z.number().int().nonnegative(),
    sha256: z.string().nullable(),
    files_changed: z.number().int().nonnegative(),
    test_only: z
      .boolean()
      .optional()
      .describe(
        'every file the diff changes is a test file (absent in records written before it was recorded)',
      ),
    non_utf8: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'malformed UTF-8 sequences in the diff, decoded with U+FFFD for the grader (absent or 0: none)',
      ),
  }),
  telemetry: TelemetrySummarySchema,
  ledger_check: LedgerCheckSchema.optional().describe(
    'the ledger rows checked against the front proxy: duplicates, raw and de-duplicated spend, last rows (absent in older records)',
  ),
  self_report: SelfReportSchema.nullable(),
  final_message: z.string().nullable().describe("the harness's final answer, truncated to 2,000 characters"),
  logs_dir: z.string().describe('relative to the leg folder: logs/<instance>/<trial>-<attempt>'),
  atif: z
    .string()
    .optional()
    .describe(
      "the attempt's trajectory as ATIF v1.7, relative to logs_dir (trajectory.atif.json); absent when none was written",
    ),
  plan_sha256: z
    .string()
    .optional()
    .describe("run identity: sha256 of the plan's canonical JSON (absent in records written before it)"),
  leg_attempt: LegAttemptSchema,
  transport: z
    .enum(['mcp-stdio', 'mcp-http', 'pi-extension'])
    .optional()
    .describe('bridge tasks: how the harness reached the tool-bridge (its MCP client, or our Pi extension)'),
  tools: z
    .strictObject({
      calls: z.number().int().nonnegative(),
      ok: z.number().int().nonnegative(),
      error: z.number().int().nonnegative(),
      invalid_arguments: z.number().int().nonnegative(),
      unreadable: z.number().int().nonnegative(),
    })
    .optional()
    .describe("bridge tasks: the attempt's tool calls by status, summed from calls.jsonl"),
  dialogue: z
    .strictObject({
      turns: z.number().int().nonnegative().describe('harness turns run (turn 1 = the instruction)'),
      ended: z
        .enum(['stop', 'max_turns', 'turn_failed', 'cancelled', 'user_failed'])
        .describe(
          'the user said ###STOP###, the turn limit, a failed turn, a cancel, or the user model failed',
        ),
      resumed_session: z.boolean().describe("turns after the first resumed the harness's session"),
      user_simulation: z
        .strictObject({
          requests: z.number().int().nonnegative().nullable(),
          input_tokens: z.number().int().nonnegative().nullable(),
          output_tokens: z.number().int().nonnegative().nullable(),
          spend_usd: z.number().nonnegative().nullable(),
          coverage: z.enum(['complete', 'partial', 'missing', 'unknown']),
        })
        .describe(
          "the simulated user's own proxy requests (role user_simulation): never in the cell's spend",
        ),
    })
    .optional()
    .describe('multi-turn bridge tasks: the dialogue with the simulated user'),
  isolation: IsolationSchema.optional().describe(
    'sandbox backend the harness ran in (absent in records written before sandboxes)',
  ),
  canary: CanaryResultSchema.optional().describe("the sandbox's canary self-test before the first attempt"),
  environment: AttemptEnvironmentSchema.optional().describe(
    'container backend: the runtime, image, resources and network the attempt ran with',
  ),
  network: z
    .enum(['proxy-only', 'host'])
    .optional()
    .describe(
      "the harness's network: proxy-only (its only way out was the proxy) or host (it could reach a model around the proxy); absent in earlier records",
    ),
})
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>

/** leg.json: what ran in one matrix leg. */
export const LegRecordSchema = z.strictObject({
  schema_version: z.literal(LEG_SCHEMA_VERSION),
  experiment_id: z.string(),
  run_id: z.string(),
  round: z.number().int().nonnegative(),
  leg: z.string(),
  cell_id: z.string(),
  shard: z.number().int().nonnegative(),
  harness: z.string(),
  harness_version_declared: z.string(),
  harness_version_observed: z.string().nullable(),
  config_hash: z.string(),
  manifest_sha256: z.string(),
  model: z.string(),
  api: z.string(),
  telemetry_source: z.enum(['ledger', 'litellm']),
  runner: z.strictObject({
    os: z.string(),
    arch: z.string(),
    node: z.string(),
    ci: z.boolean(),
    runner_name: z.string().nullable(),
  }),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  planned_instances: z.array(z.string()),
  attempts: z.number().int().nonnegative(),
  status: z.enum(['complete', 'partial', 'failed']),
  error: z.string().nullable(),
  isolation: IsolationSchema.optional().describe('sandbox backend of the leg (absent before sandboxes)'),
  canary: CanaryResultSchema.optional(),
  plan_sha256: z.string().optional().describe("run identity: sha256 of the plan's canonical JSON"),
  leg_attempt: LegAttemptSchema,
  runs: z
    .array(z.string())
    .optional()
    .describe("run ids whose attempt and ledger rows the leg's files hold (more than one after a resume)"),
})
export type LegRecord = z.infer<typeof LegRecordSchema>
