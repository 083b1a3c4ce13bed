import { z } from 'zod'
import { ExitClassSchema } from '../records/attempt.js'
import { MAX_LEDGER_USD } from '../records/limits.js'
import { MAX_SEED } from '../stats/index.js'
import { durationRangeMessage, MAX_TIMER_MS, MAX_TIMER_S } from '../util/duration.js'
import { HwError } from '../util/errors.js'
import { BASE_IMAGE_REF, parseImageRef } from '../util/image-ref.js'
import { templatePlaceholders } from '../util/template.js'
import { containerRefusal, HARNESS_NAMES, HARNESSES, isHarnessName } from './harness-names.js'
import { COMMAND_PLACEHOLDERS, ID_LIST_PLACEHOLDERS } from './templates.js'

/**
 * The experiment manifest: the committed, versioned declaration of one paired comparison.
 * Types flow from this schema (`Manifest = z.infer<typeof ManifestSchema>`); the JSON Schema for
 * editors (manifests/schema.json) is generated from it. Cross-field rules (duplicates, baseline is a
 * cell, harness supports the wire API…) live in `checkManifest` below so their messages can point at
 * the offending field.
 */
export const MANIFEST_SCHEMA_VERSION = 1

const idPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const idMessage = 'letters, digits, ".", "_" or "-", starting with a letter or digit, at most 64 characters'

/** An exact release version (a range or a dist-tag such as `latest` is not a pin). */
export const EXACT_VERSION = /^v?\d+(\.\d+){1,3}([-+.][0-9A-Za-z.-]+)?$/

/** Cell and experiment ids: they become parts of artifact names and folder names. */
export const Id = z.string().regex(idPattern, { message: `expected an id: ${idMessage}` })

/** Instance ids come from benchmarks (e.g. `django__django-11099`); they name per-instance folders. */
export const InstanceId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+@=-]{0,199}$/, {
    message: 'expected an instance id: letters, digits, ".", "_", "-", "+", "@", "=", no "/" or spaces',
  })
  .refine((s) => !s.includes('..'), { message: 'instance ids may not contain ".." (they name folders)' })

export const WireApiSchema = z.enum(['chat', 'responses', 'anthropic', 'gemini'])

const EnvName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'expected an environment variable name' })
const Usd = z.number().nonnegative()

/** A duration in seconds, > 0 and at most {@link MAX_TIMER_S} (timers cannot wait longer). */
export const Seconds = z
  .number()
  .positive()
  .max(MAX_TIMER_S, { message: durationRangeMessage(MAX_TIMER_S, 's') })

/** Longest first retry backoff: with `retries.max` 10 the last retry waits 2^9 × backoff_s. */
export const MAX_BACKOFF_S = Math.floor(MAX_TIMER_S / 2 ** 9)

/** A delay in milliseconds, an integer from 0 to {@link MAX_TIMER_MS}. */
const Millis = z
  .number()
  .int()
  .nonnegative()
  .max(MAX_TIMER_MS, { message: durationRangeMessage(MAX_TIMER_MS, 'ms') })

/** USD per million tokens. `cache_read`/`cache_write` default to null = not priced separately. */
export const PricesSchema = z.strictObject({
  input: Usd.describe('USD per million fresh (uncached) input tokens'),
  output: Usd.describe('USD per million output tokens (reasoning included)'),
  cache_read: Usd.nullable().default(null).describe('USD per million cache-read input tokens'),
  cache_write: Usd.nullable().default(null).describe('USD per million cache-write input tokens'),
})

const FaultsSchema = z.strictObject({
  rate_429: z.number().min(0).max(1).default(0).describe('probability a request is answered 429'),
  rate_500: z.number().min(0).max(1).default(0).describe('probability a request is answered 500'),
  hang_rate: z.number().min(0).max(1).default(0).describe('probability a request never answers'),
})

const ScriptedTaskSchema = z.strictObject({
  success_rate: z.number().min(0).max(1).optional(),
  latency_ms: Millis.optional(),
  faults: FaultsSchema.partial().optional(),
})

/**
 * Known changes injected into one cell's requests (known-regression validation of the diagnosis): the
 * scripted model behaves differently only for requests attributed to that cell.
 */
const ScriptedCellSchema = z.strictObject({
  caching: z
    .boolean()
    .optional()
    .describe(
      "false: this cell's requests never read or fill the prompt cache (caching disabled at the model)",
    ),
  repeat_reads: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe(
      "the model reads the task's first file this many extra times, unchanged (as an instruction causing repeated reads would)",
    ),
})

/** Behaviour of the built-in scripted model (provider `scripted`). */
export const ScriptedModelSchema = z.strictObject({
  seed: z.number().int().default(1).describe('seed of the per-(task, cell, trial) success draw'),
  success_rate: z
    .number()
    .min(0)
    .max(1)
    .default(0.75)
    .describe('probability the model follows the reference solution'),
  latency_ms: Millis.default(0).describe(`delay before each response, ms (0 to ${MAX_TIMER_MS})`),
  faults: FaultsSchema.default({ rate_429: 0, rate_500: 0, hang_rate: 0 }),
  caching: z.boolean().default(true).describe('simulate prompt caching of repeated prefixes'),
  tasks: z.record(z.string(), ScriptedTaskSchema).default({}).describe('per-instance overrides'),
  cells: z
    .record(z.string(), ScriptedCellSchema)
    .default({})
    .describe('per-cell injected changes (known-regression validation), by cell id'),
})

export const ModelRouteSchema = z.strictObject({
  id: z.string().min(1).describe('model id given to every harness (use the real id: it changes prompts)'),
  provider: z
    .string()
    .min(1)
    .describe('upstream provider, e.g. openai, anthropic, google, openrouter, scripted'),
  api: WireApiSchema.describe('default wire API of the route'),
  base_url: z.url().optional().describe('upstream base URL (literal)'),
  base_url_env: EnvName.optional().describe('environment variable holding the upstream base URL'),
  api_key_env: EnvName.optional().describe('environment variable holding the upstream API key'),
  prices: PricesSchema.optional().describe('USD per million tokens; absent = unpriced (spend unknown)'),
  cache_semantics: z
    .enum(['inclusive', 'exclusive', 'unknown'])
    .optional()
    .describe('whether reported input tokens include cache reads/writes; default from the API'),
  scripted: ScriptedModelSchema.optional(),
})

/**
 * The simulated user's model route (`user_model`): a second route, used only by multi-turn bridge tasks
 * (a task with `user/scenario.md`). It plays the customer from the hidden scenario and answers each of
 * the harness's turns with one OpenAI Chat Completions request, sent through the same recording proxy
 * as the harness (so it shares the model route's upstream: same provider, base URL and key variable)
 * under its own attribution role `user_simulation`: its spend is recorded per attempt
 * (`user_simulation` in attempts.jsonl) and reported apart, never added to the cell's cost. With
 * provider `scripted` the scripted model answers deterministically from the scenario (offline).
 * Its requests are priced with `model.prices` (the proxy's price table). `max_turns` caps the harness turns of one dialogue (1 to 50, default 10); the user ends it earlier
 * with `###STOP###`.
 */
export const UserModelSchema = z.strictObject({
  id: z.string().min(1).describe('model id of the simulated user'),
  provider: z.string().min(1).describe('must equal model.provider (the requests share the proxy upstream)'),
  max_turns: z
    .number()
    .int()
    .min(1)
    .max(50)
    .default(10)
    .describe('harness turns of one dialogue at most (the user may say ###STOP### earlier)'),
})
export type UserModel = z.output<typeof UserModelSchema>

export const VerifierSchema = z.strictObject({
  kind: z
    .enum(['task-tests', 'command'])
    .default('task-tests')
    .describe('task-tests: the task folder tests/test.sh; command: an external grading command'),
  command: z
    .string()
    .optional()
    .describe(
      'grading command template for kind=command: {instance} {workspace} {patch} {predictions} {out} {run_id}',
    ),
  timeout_s: Seconds.default(300).describe(
    `verifier wall-clock limit, seconds (> 0, at most ${MAX_TIMER_S})`,
  ),
  reports: z
    .boolean()
    .optional()
    .describe(
      'kind=command: the command writes a SWE-bench run report under {out}; an instance it does not list (a crash, a dropped instance) is ungraded, never read from the exit code (the same as contract: report)',
    ),
  contract: z
    .enum(['report', 'reward_file', 'exit_codes'])
    .optional()
    .describe(
      'how the verifier states its verdict, so that a crash is never read as a failure: report (a SWE-bench run report under {out} naming the instance), reward_file (a reward in 0..1 written to HW_REWARD_FILE), exit_codes (exit_codes.pass / exit_codes.fail; any other exit or a signal is a grader error). Default: reward_file for kind=command (a report under {out} is read too; neither is a grader error); for task-tests a reward file when written, else exit 0 pass, exit 1 tests failed, any other exit (2–255) or a signal a grader error. Under exit_codes and the task-tests default, a fail code whose error output ends in an uncaught exception raised outside the workspace (a Python traceback, a Node.js stack; not an assertion) is a grader error too',
    ),
  isolation: z
    .enum(['task', 'fresh'])
    .optional()
    .describe(
      "container backend, task-tests: where tests/test.sh runs. task (the default when absent): the task format's rule — Harbor's, in the agent's own container once the agent has exited (tests/ copied in only then), or in a fresh one where task.toml says [verifier] environment_mode = \"separate\"; fresh: always a fresh container of the same image with the final workspace (the agent's processes and /tmp gone)",
    ),
  exit_codes: z
    .strictObject({
      pass: z.array(z.number().int().min(0).max(255)).min(1).default([0]),
      fail: z.array(z.number().int().min(1).max(255)).min(1),
    })
    .optional()
    .describe(
      'contract exit_codes: the codes that mean "passed" (default [0]) and "tests failed" (e.g. pytest 1); every other code — a crash, a decode error, an interpreter exception that exits with a code outside these — is grader_error, retried, never a loss',
    ),
})
export type VerifierSpec = z.output<typeof VerifierSchema>

export const BenchmarkSchema = z.strictObject({
  family: z.string().min(1).describe('e.g. builtin, harbor, swe-bench-verified'),
  revision: z.string().min(1).describe('dataset revision or commit the panel is frozen at'),
  verifier: VerifierSchema.default({ kind: 'task-tests', timeout_s: 300 }),
  gradeable_without_diff: z
    .boolean()
    .optional()
    .describe(
      'true when a task can be solved without changing the workspace (an answer, tool calls, an already-correct repository): a resolved attempt with an empty or test-only diff is then not flagged',
    ),
  setup: z
    .string()
    .optional()
    .describe(
      'for id lists: command template that prepares {workspace} for {instance} and writes the prompt to {out}/instruction.md',
    ),
})

export const PanelSchema = z.strictObject({
  source: z.enum(['inline', 'file', 'tasks', 'builtin']).describe('where the instance ids come from'),
  instances: z.array(InstanceId).optional().describe('inline ids; for other sources an optional subset'),
  file: z
    .string()
    .optional()
    .describe('source=file: JSON array or one id per line, relative to the manifest'),
  path: z.string().optional().describe('source=tasks: folder of Harbor-layout task folders'),
  name: z.string().optional().describe('source=builtin: a panel in manifests/panels/<name>'),
  quarantine: z
    .array(InstanceId)
    .default([])
    .describe('known-flaky/broken ids: run and listed, never compared'),
})

export const CellConfigSchema = z.strictObject({
  args: z.array(z.string()).default([]).describe('extra command-line arguments'),
  env: z.record(EnvName, z.string()).default({}).describe('environment variables set for the harness'),
  pass_env: z.array(EnvName).default([]).describe('runner variables passed through (allowlist)'),
  files: z.record(z.string(), z.string()).default({}).describe('files written into the isolated home'),
  command: z
    .string()
    .optional()
    .describe(
      'harness=command: template with {prompt} {prompt_file} {workspace} {base_url} {openai_base_url} {model} {api_key}; a {"type":"self_report","requests":N,…} JSON line on stdout is the command\'s own usage count (a cross-check of the proxy)',
    ),
})

export const CellSchema = z.strictObject({
  id: Id.describe('cell id'),
  harness: z.string().describe(`one of: ${HARNESS_NAMES.join(', ')}`),
  version: z.string().min(1).describe('pinned harness version (npm version for npm harnesses)'),
  model: Id.optional().describe(
    'name of the model route this cell drives, a key of `models`; absent: the top-level `model` route. Cells are declared harness × model one by one (never a product): the same harness on two models is two cells',
  ),
  api: WireApiSchema.optional().describe('wire API this cell speaks; default: the route api if supported'),
  config: CellConfigSchema.default({ args: [], env: {}, pass_env: [], files: {} }),
})

export const BudgetsSchema = z.strictObject({
  timeout_s: Seconds.default(900).describe(
    `wall-clock limit of one attempt, seconds (> 0, at most ${MAX_TIMER_S})`,
  ),
  max_spend_usd: Usd.optional().describe('per attempt; the proxy refuses further requests beyond it'),
  max_requests: z.number().int().positive().optional().describe('per attempt proxy requests'),
})

export const RetriesSchema = z.strictObject({
  max: z.number().int().min(0).max(10).default(0).describe('retries per (instance, trial)'),
  on: z.array(ExitClassSchema).default(['infra']).describe('exit classes that are retried'),
  backoff_s: z
    .number()
    .nonnegative()
    .max(MAX_BACKOFF_S, {
      message: `at most ${MAX_BACKOFF_S} s: the backoff doubles each retry and the 10th retry must wait at most ${MAX_TIMER_S} s`,
    })
    .default(5)
    .describe(`first backoff, seconds; doubles each retry (0 to ${MAX_BACKOFF_S})`),
})

export const ShardsSchema = z.union(
  [
    z.strictObject({ count: z.number().int().positive().describe('number of shards') }),
    z.strictObject({ size: z.number().int().positive().describe('instances per shard') }),
  ],
  { error: (issue) => shardsMessage(issue.input) },
)

/** Why a `shards` value matches neither `{ count }` nor `{ size }`. */
function shardsMessage(input: unknown): string {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return 'expected a mapping: { count: N } (number of shards) or { size: N } (instances per shard)'
  }
  if ('count' in input && 'size' in input) return 'give either count or size, not both'
  return 'give count (number of shards) or size (instances per shard)'
}

export const ThresholdsSchema = z.strictObject({
  resolved_deficit_pp: z
    .number()
    .positive()
    .default(10)
    .describe('alarm at a resolve-rate deficit of this many points'),
  cost_ratio: z
    .number()
    .positive()
    .default(1.5)
    .describe('alarm above this spend ratio without a resolved advantage'),
  fresh_input_ratio: z.number().positive().default(1.5).describe('alarm above this fresh-input-token ratio'),
  request_ratio: z.number().positive().default(1.5).describe('alarm above this proxy-request ratio'),
  min_coverage: z.number().min(0).max(1).default(0.8).describe('share of complete blocks needed to decide'),
  min_blocks: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'fewest blocks behind an effect for it to raise a breach alone (default 10); below it the interval is shown with a small-sample note',
    ),
})

export const ClassificationSchema = z.strictObject({
  timeout_policy: z
    .enum(['verifier_decides', 'infra', 'failure'])
    .default('verifier_decides')
    .describe(
      'a timed-out attempt: verifier_decides (a completed verdict stands, the row keeps timed_out), infra (never a loss), failure (unresolved)',
    ),
  startup_max_s: z
    .number()
    .positive()
    .default(60)
    .describe('harness seconds within which a failure with no model request is a startup failure'),
  min_telemetry_share: z
    .number()
    .min(0)
    .max(1)
    .default(0.25)
    .describe(
      "rows below this share of the harness's own request count, or of the other cells' rows, make telemetry suspect",
    ),
  keep_suspect_outcomes: z
    .boolean()
    .default(true)
    .describe('count the outcome of a telemetry-suspect attempt (its resources are dropped either way)'),
})

export const ConfirmationSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('rerun the affected blocks before confirming a breach'),
  max_blocks: z.number().int().positive().default(50).describe('cap on blocks rerun for confirmation'),
  alpha: z
    .number()
    .gt(0)
    .lt(0.5)
    .default(0.05)
    .describe('one-sided level of the test that confirms a breach (first run and rerun combined)'),
  trials: z
    .number()
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe(
      "attempts per block and cell in the rerun (default 4, the trials the confirmation design's error rates are measured at): more trials give the ratio rules power at high run noise (harness-watch calibrate recommends a value)",
    ),
})

export const LiteLLMSettingsSchema = z.strictObject({
  base_url_env: EnvName.default('LITELLM_BASE_URL'),
  master_key_env: EnvName.default('LITELLM_MASTER_KEY'),
  attribution: z.enum(['virtual-key', 'metadata-header']).default('virtual-key'),
  settle_s: z
    .number()
    .nonnegative()
    .max(MAX_TIMER_S, { message: durationRangeMessage(MAX_TIMER_S, 's') })
    .default(10)
    .describe(`quiescence window before capture, seconds (0 to ${MAX_TIMER_S})`),
  max_wait_s: Seconds.default(120).describe(
    `give up waiting for LiteLLM rows after this, seconds (> 0, at most ${MAX_TIMER_S})`,
  ),
  tolerance_usd: z.number().nonnegative().default(0.0001),
  page_size: z.number().int().min(1).max(1000).default(1000),
})

export const TelemetrySchema = z.strictObject({
  source: z
    .enum(['ledger', 'litellm'])
    .default('ledger')
    .describe('ledger: our recording proxy; litellm: LiteLLM spend logs'),
  litellm: LiteLLMSettingsSchema.optional(),
  self_report_divergence: z.number().positive().default(1.5),
})

/**
 * How attempts are isolated (design/sandbox.md): `auto` takes the strongest backend that probes ok
 * and passes the canary self-test. Running without isolation (`env-only`, `none`, or `auto` where no
 * isolating backend works) needs `allow_unisolated: true`; the report then says so.
 */
export const ContainerSettingSchema = z.strictObject({
  runtime: z
    .enum(['auto', 'docker', 'podman'])
    .default('auto')
    .describe(
      'container engine CLI: auto = docker when its engine answers and runs a container, else podman',
    ),
  image: z
    .string()
    .min(1)
    .refine((s) => parseImageRef(s) !== null, {
      message: 'not a valid image reference (expected name[:tag][@sha256:<64 hex>])',
    })
    .default(BASE_IMAGE_REF)
    .describe(
      `image for tasks that declare none, optionally pinned (name@sha256:…); ${BASE_IMAGE_REF} is built from Debian's packages on first use`,
    ),
  network: z
    .enum(['proxy-only', 'none', 'task'])
    .default('proxy-only')
    .describe(
      "proxy-only: only the recording proxy (and tool-bridge) is reachable; none: nothing; task: the task's own network_mode where it declares one",
    ),
  resources: z
    .strictObject({
      cpus: z.number().positive().max(1024).default(2),
      memory_mb: z.number().int().min(64).default(4096),
      pids: z.number().int().min(16).default(1024),
      storage_mb: z.number().int().positive().nullable().default(null),
    })
    .default({ cpus: 2, memory_mb: 4096, pids: 1024, storage_mb: null })
    .describe("limits per container; a task's own task.toml values win"),
  user: z
    .string()
    .regex(/^\d+:\d+$/)
    .default('0:0')
    .describe(
      'uid:gid the agent runs as inside the container (container root is mapped to an unprivileged host id where the engine can)',
    ),
})

export type ContainerSettingValue = z.output<typeof ContainerSettingSchema>

/** The container settings when `sandbox.container` is left out. */
export function defaultContainerSetting(): ContainerSettingValue {
  return ContainerSettingSchema.parse({})
}

export const SandboxSettingSchema = z.strictObject({
  backend: z
    .enum(['auto', 'container', 'namespace+uid', 'env-only', 'none'])
    .default('auto')
    .describe(
      "auto = the strongest host backend that works here; container = each attempt in its task's image; namespace+uid needs Linux and root or passwordless sudo",
    ),
  container: ContainerSettingSchema.optional().describe(
    'backend container: runtime, image, network, resources',
  ),
  allow_unisolated: z
    .boolean()
    .default(false)
    .describe(
      "allow harnesses to run as the action's own user (env-only or none): they could read its secrets",
    ),
  read_only: z
    .array(z.string().min(1))
    .default([])
    .describe('extra folders (relative to the manifest) harnesses may read in the sandbox, e.g. scripts'),
  host_commands: z
    .boolean()
    .optional()
    .describe(
      "run benchmark.setup and benchmark.verifier.command as the action's own user, outside the sandbox (for graders that need the Docker socket): code they run could read the action's secrets",
    ),
})
export type SandboxSetting = z.infer<typeof SandboxSettingSchema>

export const ReportingSchema = z.strictObject({
  labels: z.array(z.string().min(1)).default(['harness-watch']),
  recovered_after: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe('clean runs before a tracking issue is marked recovered'),
  fail_on_confirmed_regression: z
    .boolean()
    .default(true)
    .describe(
      'publish (and the action) fail the check, exit 1, on a confirmed regression; false: the report says so and the check passes',
    ),
  bootstrap_resamples: z.number().int().min(200).max(100000).default(10000),
  multiplicity: z
    .enum(['holm', 'benjamini-hochberg'])
    .optional()
    .describe(
      'default holm. Adjustment across every comparison and metric the report states: holm (family-wise error rate) or benjamini-hochberg (false discovery rate, for many comparisons)',
    ),
  dossier_instances: z
    .number()
    .int()
    .min(1)
    .max(200)
    .optional()
    .describe('driving instances per comparison in the diagnosis dossier (default 10)'),
  value_per_resolution_usd: z
    .number()
    .positive()
    .max(MAX_LEDGER_USD)
    .optional()
    .describe(
      'USD one resolved instance is worth to you (at most a billion: larger values overflow the net benefit): reports show each comparison’s paired net benefit, value × (resolved_T − resolved_B) − (spend_T − spend_B) per block, with its bootstrap interval; absent = no net benefit',
    ),
})

const ManifestObject = z.strictObject({
  schema_version: z.literal(MANIFEST_SCHEMA_VERSION).describe('manifest format version (1)'),
  experiment: z
    .strictObject({
      id: Id.describe('experiment id: names artifacts, issues and reports'),
      description: z.string().default('').describe('one line shown in reports'),
    })
    .describe('what is being compared'),
  model: ModelRouteSchema.optional().describe(
    'the model route of every cell that names none (the one route of a single-model experiment); give it, `models`, or both',
  ),
  models: z
    .record(Id, ModelRouteSchema)
    .optional()
    .describe(
      'named model routes of a several-model experiment; a cell drives one by naming it in its `model` field. Blocks pair only cells on the same model; the report compares harnesses within each model and estimates the harness × model interaction over instances both models ran',
    ),
  user_model: UserModelSchema.optional().describe(
    'the simulated user of multi-turn bridge tasks (user/scenario.md); required when the panel has one',
  ),
  benchmark: BenchmarkSchema.describe('benchmark family, revision and verifier'),
  panel: PanelSchema.describe('the fixed list of instances every cell runs'),
  cells: z
    .array(CellSchema)
    .min(1, { message: 'expected at least one cell' })
    .describe('treatments: harness + pinned version + config'),
  baseline: Id.describe('the cell every treatment is compared against'),
  treatments: z.array(Id).optional().describe('cells compared with the baseline; default: all others'),
  budgets: BudgetsSchema.default({ timeout_s: 900 }).describe('per-attempt limits'),
  trials: z
    .number()
    .int()
    .min(1, { message: 'trials (k) must be at least 1' })
    .default(1)
    .describe('k: replicates per instance (pass@k, pass^k)'),
  retries: RetriesSchema.default({ max: 0, on: ['infra'], backoff_s: 5 }).describe(
    'retries of an attempt by exit class (each retry is a new attempt; all are kept)',
  ),
  shards: ShardsSchema.default({ count: 1 }).describe('split the panel by shard count or shard size'),
  concurrency: z.number().int().positive().default(1).describe('legs run at once by `harness-watch local`'),
  seed: z
    .number()
    .int()
    .nonnegative()
    .max(MAX_SEED)
    .default(1)
    .describe(`seed of the panel split, the instance order and the bootstrap (0 to ${MAX_SEED})`),
  thresholds: ThresholdsSchema.default({
    resolved_deficit_pp: 10,
    cost_ratio: 1.5,
    fresh_input_ratio: 1.5,
    request_ratio: 1.5,
    min_coverage: 0.8,
  }),
  request_count: z
    .enum(['all', 'primary'])
    .optional()
    .describe(
      "which proxy requests the request metric and its request_ratio rule count: all (when absent), or primary only — the agent's own requests, leaving out title, summary, compaction, subagent, retry, fallback and unclassified ones (each request's role and deciding rule are in its ledger row)",
    ),
  classification: ClassificationSchema.default({
    timeout_policy: 'verifier_decides',
    startup_max_s: 60,
    min_telemetry_share: 0.25,
    keep_suspect_outcomes: true,
  }).describe('how attempts are classified before any comparison (README: Classification)'),
  confirmation: ConfirmationSchema.default({ enabled: true, max_blocks: 50, alpha: 0.05 }).describe(
    'targeted rerun of the blocks a breach touched',
  ),
  telemetry: TelemetrySchema.default({ source: 'ledger', self_report_divergence: 1.5 }).describe(
    'where provider-visible inference is measured',
  ),
  sandbox: SandboxSettingSchema.default({ backend: 'auto', allow_unisolated: false, read_only: [] }).describe(
    'how harness attempts are isolated from the action, the runner and each other',
  ),
  reporting: ReportingSchema.default({
    labels: ['harness-watch'],
    recovered_after: 2,
    fail_on_confirmed_regression: true,
    bootstrap_resamples: 10000,
  }),
})

export const ManifestSchema = ManifestObject.superRefine(checkManifest)
export type Manifest = z.output<typeof ManifestSchema>
export type ManifestInput = z.input<typeof ManifestSchema>
export type Cell = Manifest['cells'][number]
export type ModelRoute = z.output<typeof ModelRouteSchema>

/** Cross-field rules; each issue carries the path of the field it is about. */
function checkManifest(m: z.output<typeof ManifestObject>, ctx: z.RefinementCtx): void {
  if ((m.sandbox.backend === 'env-only' || m.sandbox.backend === 'none') && !m.sandbox.allow_unisolated) {
    ctx.addIssue({
      code: 'custom',
      path: ['sandbox', 'allow_unisolated'],
      message: `sandbox backend "${m.sandbox.backend}" runs harnesses as the action's own user (they could read its secrets): set allow_unisolated: true to accept that`,
    })
  }
  if (m.request_count === 'primary' && m.telemetry.source !== 'ledger') {
    ctx.addIssue({
      code: 'custom',
      path: ['request_count'],
      message: `request_count "primary" needs each request's role, which the recording proxy decides: set telemetry.source: ledger, or count all requests`,
    })
  }
  const cellIds = new Map<string, number>()
  m.cells.forEach((cell, i) => {
    const first = cellIds.get(cell.id)
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'id'],
        message: `duplicate cell id "${cell.id}" (first used by cells[${first}])`,
      })
    } else cellIds.set(cell.id, i)
    if (!isHarnessName(cell.harness)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'harness'],
        message: `unknown harness "${cell.harness}" (known: ${HARNESS_NAMES.join(', ')})`,
      })
      return
    }
    if (cell.harness !== 'command' && !EXACT_VERSION.test(cell.version)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'version'],
        message: `"${cell.version}" is not an exact version: pin one release, e.g. 1.18.33 (a range or a tag like latest would change under you)`,
      })
    }
    const apis: readonly string[] = HARNESSES[cell.harness].apis
    if (cell.api && !apis.includes(cell.api)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'api'],
        message: `harness ${cell.harness} does not speak the "${cell.api}" API (it speaks: ${apis.join(', ')})`,
      })
    }
    if (cell.harness === 'command' && !cell.config.command) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'config', 'command'],
        message: 'harness "command" needs config.command (a command template)',
      })
    }
  })
  if (!cellIds.has(m.baseline)) {
    ctx.addIssue({
      code: 'custom',
      path: ['baseline'],
      message: `baseline "${m.baseline}" is not a cell (cells: ${[...cellIds.keys()].join(', ')})`,
    })
  }
  m.treatments?.forEach((t, i) => {
    if (!cellIds.has(t)) {
      ctx.addIssue({ code: 'custom', path: ['treatments', i], message: `treatment "${t}" is not a cell` })
    } else if (t === m.baseline) {
      ctx.addIssue({ code: 'custom', path: ['treatments', i], message: `treatment "${t}" is the baseline` })
    }
  })
  checkPanel(m.panel, ctx)
  checkRoutes(m, ctx)
  if (m.benchmark.verifier.kind === 'command' && !m.benchmark.verifier.command) {
    ctx.addIssue({
      code: 'custom',
      path: ['benchmark', 'verifier', 'command'],
      message: 'verifier kind "command" needs a command template',
    })
  }
  const vf = m.benchmark.verifier
  if (vf.contract === 'exit_codes' && !vf.exit_codes) {
    ctx.addIssue({
      code: 'custom',
      path: ['benchmark', 'verifier', 'exit_codes'],
      message:
        'contract exit_codes needs exit_codes: { pass: [0], fail: [...] } — the codes that mean "tests failed", so that any other exit is a grader error',
    })
  }
  if (vf.exit_codes && vf.contract !== 'exit_codes') {
    ctx.addIssue({
      code: 'custom',
      path: ['benchmark', 'verifier', 'exit_codes'],
      message: 'exit_codes is read only with contract: exit_codes',
    })
  }
  if (vf.exit_codes) {
    const both = vf.exit_codes.fail.filter((c) => vf.exit_codes?.pass.includes(c))
    if (both.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['benchmark', 'verifier', 'exit_codes', 'fail'],
        message: `exit code${both.length === 1 ? '' : 's'} ${both.join(', ')} cannot mean both pass and fail`,
      })
    }
  }
  if (vf.contract === 'report' && vf.kind !== 'command') {
    ctx.addIssue({
      code: 'custom',
      path: ['benchmark', 'verifier', 'contract'],
      message:
        'contract report needs kind: command (a run report under {out}); task-tests write none, so every attempt would be a grader error — declare reward_file or exit_codes',
    })
  }
  if (vf.reports && vf.contract !== undefined && vf.contract !== 'report') {
    ctx.addIssue({
      code: 'custom',
      path: ['benchmark', 'verifier', 'reports'],
      message: `reports: true is contract report; it contradicts contract ${vf.contract}`,
    })
  }
  checkTemplate(m.benchmark.setup, ['benchmark', 'setup'], ID_LIST_PLACEHOLDERS, ctx)
  checkTemplate(m.benchmark.verifier.command, ['benchmark', 'verifier', 'command'], ID_LIST_PLACEHOLDERS, ctx)
  m.cells.forEach((cell, i) => {
    checkTemplate(cell.config.command, ['cells', i, 'config', 'command'], COMMAND_PLACEHOLDERS, ctx)
  })
  if (m.telemetry.source === 'litellm' && !m.telemetry.litellm) {
    ctx.addIssue({
      code: 'custom',
      path: ['telemetry', 'litellm'],
      message: 'telemetry source "litellm" needs a litellm block (it may be empty: {} takes the defaults)',
    })
  }
}

/** Every declared route with its path in the manifest: the top-level `model`, then `models` by name. */
export function declaredRoutes(
  m: Pick<Manifest, 'model' | 'models'>,
): Array<{ name: string | null; path: (string | number)[]; route: ModelRoute }> {
  const out: Array<{ name: string | null; path: (string | number)[]; route: ModelRoute }> = []
  if (m.model) out.push({ name: null, path: ['model'], route: m.model })
  for (const [name, route] of Object.entries(m.models ?? {}))
    out.push({ name, path: ['models', name], route })
  return out
}

/** Route rules: one route at least, each cell's model declared, scripted settings on scripted routes. */
function checkRoutes(m: z.output<typeof ManifestObject>, ctx: z.RefinementCtx): void {
  const named = Object.keys(m.models ?? {})
  if (!m.model && named.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['model'],
      message:
        'no model route: give `model` (one route for every cell) or `models` (named routes cells choose)',
    })
  }
  m.cells.forEach((cell, i) => {
    if (cell.model === undefined) {
      if (!m.model && named.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['cells', i, 'model'],
          message: `cell "${cell.id}" names no model and there is no top-level model route: name one of ${named.join(', ')}`,
        })
      }
    } else if (!named.includes(cell.model)) {
      ctx.addIssue({
        code: 'custom',
        path: ['cells', i, 'model'],
        message: `unknown model "${cell.model}" (models: ${named.join(', ') || 'none declared'})`,
      })
    }
  })
  for (const { name, path, route } of declaredRoutes(m)) {
    const users = m.cells.filter((c) => (c.model ?? null) === name)
    for (const id of Object.keys(route.scripted?.cells ?? {})) {
      if (users.some((c) => c.id === id)) continue
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'scripted', 'cells', id],
        message: `no cell "${id}"${name === null && !m.models ? '' : ' on this route'} to inject a change into (cells: ${users.map((c) => c.id).join(', ') || 'none'})`,
      })
    }
    if (route.provider !== 'scripted' && !route.base_url && !route.base_url_env) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: 'a non-scripted model route needs base_url or base_url_env',
      })
    }
    if (route.scripted && route.provider !== 'scripted') {
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'scripted'],
        message: `${path.join('.')}.scripted needs provider: scripted`,
      })
    }
    if (m.user_model && users.length > 0 && m.user_model.provider !== route.provider) {
      ctx.addIssue({
        code: 'custom',
        path: ['user_model', 'provider'],
        message: `user_model.provider "${m.user_model.provider}" must equal ${path.join('.')}.provider "${route.provider}": the simulated user's requests go through the same recording proxy and upstream`,
      })
    }
  }
}

/** A command template may only use its field's placeholders, never inside quotes. */
function checkTemplate(
  template: string | undefined,
  path: (string | number)[],
  allowed: readonly string[],
  ctx: z.RefinementCtx,
): void {
  if (template === undefined) return
  try {
    templatePlaceholders(template, allowed)
  } catch (e) {
    if (!(e instanceof HwError)) throw e
    ctx.addIssue({ code: 'custom', path, message: `${e.message}${e.help ? ` (${e.help})` : ''}` })
  }
}

function checkPanel(p: z.output<typeof PanelSchema>, ctx: z.RefinementCtx): void {
  const need: Record<string, 'instances' | 'file' | 'path' | 'name'> = {
    inline: 'instances',
    file: 'file',
    tasks: 'path',
    builtin: 'name',
  }
  const field = need[p.source]
  if (field && p[field] === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['panel', field],
      message: `panel source "${p.source}" needs panel.${field}`,
    })
  }
  if (p.source === 'inline' && p.instances && p.instances.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['panel', 'instances'],
      message: 'the panel is empty: list at least one instance',
    })
  }
  dupes(p.instances ?? [], ['panel', 'instances'], 'instance', ctx)
  dupes(p.quarantine, ['panel', 'quarantine'], 'quarantined instance', ctx)
  // Other sources list their ids only once resolved (resolvePanel checks quarantine there).
  if (p.source === 'inline' && p.instances && p.instances.length > 0) {
    const inPanel = new Set(p.instances)
    p.quarantine.forEach((id, i) => {
      if (!inPanel.has(id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['panel', 'quarantine', i],
          message: `"${id}" is not in the panel (panel.instances)`,
        })
      }
    })
    const quarantined = new Set(p.quarantine)
    if (p.instances.every((id) => quarantined.has(id))) {
      ctx.addIssue({
        code: 'custom',
        path: ['panel', 'quarantine'],
        message: 'the panel is empty after quarantine: every instance is quarantined, so nothing is compared',
      })
    }
  }
}

function dupes(ids: string[], path: (string | number)[], what: string, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>()
  ids.forEach((id, i) => {
    const first = seen.get(id)
    if (first !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [...path, i],
        message: `duplicate ${what} id "${id}" (also at index ${first})`,
      })
    } else seen.set(id, i)
  })
}

/**
 * The model route a cell drives: `models[cell.model]`, else the top-level `model`. A validated manifest
 * always has one; a manifest that does not validate throws HwError `manifest_invalid`.
 */
export function cellRoute(
  m: Pick<Manifest, 'model' | 'models'>,
  cell: Pick<Cell, 'id' | 'model'>,
): ModelRoute {
  const route = cell.model === undefined ? m.model : m.models?.[cell.model]
  if (!route) {
    throw new HwError(
      'manifest_invalid',
      `cell "${cell.id}" has no model route (model: ${cell.model ?? 'absent'})`,
    )
  }
  return route
}

/** A cell's route with its manifest path for messages (`model` or `models.<name>`). */
export function cellRouteWhere(
  m: Pick<Manifest, 'model' | 'models'>,
  cell: Pick<Cell, 'id' | 'model'>,
): { route: ModelRoute; where: string } {
  return { route: cellRoute(m, cell), where: cell.model === undefined ? 'model' : `models.${cell.model}` }
}

/**
 * The name of a cell's model route as comparisons group cells: its `model` key, or null for the
 * top-level route.
 */
export function cellModelName(cell: Pick<Cell, 'model'>): string | null {
  return cell.model ?? null
}

/** The route of the baseline cell: the one route the header states for the experiment as a whole. */
export function primaryRoute(m: Manifest): ModelRoute {
  const base = m.cells.find((c) => c.id === m.baseline) ?? m.cells[0]
  if (base) return cellRoute(m, base)
  const first = declaredRoutes(m)[0]
  if (!first) throw new HwError('manifest_invalid', 'the manifest declares no model route')
  return first.route
}

/** True when the cells drive more than one model route (blocks then pair within a model only). */
export function isMultiModel(m: Pick<Manifest, 'cells'>): boolean {
  return new Set(m.cells.map((c) => c.model ?? null)).size > 1
}

/** The wire API a cell speaks: its own `api`, else the route's if the harness speaks it, else its first. */
export function cellApi(cell: Cell, route: ModelRoute): z.infer<typeof WireApiSchema> {
  if (cell.api) return cell.api
  if (!isHarnessName(cell.harness)) return route.api
  const apis: readonly z.infer<typeof WireApiSchema>[] = HARNESSES[cell.harness].apis
  return apis.includes(route.api) ? route.api : (apis[0] ?? route.api)
}

/** Cells compared with the baseline, in manifest order. */
export function treatmentIds(m: Manifest): string[] {
  return m.treatments ?? m.cells.map((c) => c.id).filter((id) => id !== m.baseline)
}

/** A problem with one field of a valid manifest: its path and what is wrong. */
export interface FieldProblem {
  path: (string | number)[]
  message: string
}

/**
 * Pairings the schema accepts but a leg cannot run (pure): task-tests grading needs task folders
 * (panel source tasks or builtin), and an id-list panel (inline or file) needs `benchmark.setup` to
 * prepare each workspace. Empty when the manifest can run. `validate`, `plan`, `run` and `local`
 * refuse such a manifest before anything starts.
 */
export function runnableProblems(m: Manifest): FieldProblem[] {
  const problems: FieldProblem[] = []
  if (m.sandbox.backend === 'container') {
    m.cells.forEach((cell, i) => {
      const why = isHarnessName(cell.harness) ? containerRefusal(cell.harness) : null
      if (why)
        problems.push({ path: ['cells', i, 'harness'], message: `${why} (sandbox.backend: container)` })
    })
  }
  const idList = m.panel.source === 'inline' || m.panel.source === 'file'
  if (!idList) return problems
  if (m.benchmark.verifier.kind === 'task-tests') {
    problems.push({
      path: ['benchmark', 'verifier', 'kind'],
      message:
        `"task-tests" (the default kind) needs panel.source tasks or builtin (task folders); ` +
        `for an id list (panel.source ${m.panel.source}) use kind: command with a grading command`,
    })
  }
  if (!m.benchmark.setup) {
    problems.push({
      path: ['benchmark', 'setup'],
      message:
        `an id list (panel.source ${m.panel.source}) needs benchmark.setup: a command that fills ` +
        '{workspace} for {instance} and writes the prompt to {out}/instruction.md',
    })
  }
  return problems
}
