import type { HarnessName, WireApi } from '../manifest/harness-names.js'
import type { Cell } from '../manifest/schema.js'
import type { SelfReport } from '../records/attempt.js'
import type { SandboxBackend } from '../sandbox/contract.js'
import type { AttemptEndpoint } from '../telemetry/capture.js'

/** Where installed harness packages live; shared by every attempt and leg on the machine. */
export interface InstallContext {
  /** Cache root, e.g. ~/.cache/harness-watch/harnesses; one folder per package@version inside. */
  cacheDir: string
  /** Progress lines for a person (install can take a minute). */
  log: (line: string) => void
  /**
   * The run's sandbox backend: npm/pip (and every install script of the dependency tree) run in a
   * sandbox of it opened for the install. Absent: as the action's user with an allowlisted environment.
   */
  sandbox?: SandboxBackend
  /** Aborting stops a running install. */
  signal?: AbortSignal
}

/** A harness installed at a pinned version. */
export interface InstalledHarness {
  harness: HarnessName
  /** Version declared in the manifest. */
  version: string
  /** Absolute path of the executable to launch (for npm harnesses, inside the cache folder). */
  bin: string
  /** Install folder (e.g. <cacheDir>/<package>@<version>). */
  root: string
}

/** Everything an adapter needs to render its config and build one attempt's command line. */
export interface AttemptContext {
  /** Absolute path of the attempt's git workspace; the harness's working directory. */
  workspace: string
  /** Fresh, empty HOME for this attempt (XDG_* dirs live inside it). */
  home: string
  /** Fresh TMPDIR for this attempt. */
  tmp: string
  /** The task prompt (instruction.md text). */
  prompt: string
  /** Model id as declared in the manifest route (the real id: it changes harness behaviour). */
  model: string
  /** Wire API this cell speaks. */
  api: WireApi
  /** Where to send model requests (the recording proxy or LiteLLM) and the per-attempt key. */
  endpoint: AttemptEndpoint
  /** The cell's declared config (extra args, env, files, command template). */
  config: Cell['config']
  /** Per-attempt wall-clock limit, seconds (the run stage enforces it; adapters may pass it on). */
  timeoutS: number
  /**
   * The route's prices (USD per million tokens), when declared. Harnesses that compute their own cost
   * (Pi, OpenCode) get them in their model config so their self-report is comparable; without prices
   * their self-reported cost is null, never a made-up zero.
   */
  prices?: { input: number; output: number; cache_read: number | null; cache_write: number | null }
}

/** A process to start: the run stage spawns it with only `env` (plus its own isolation variables). */
export interface Invocation {
  command: string
  args: string[]
  /** Variables the harness needs (endpoint, model, quieting flags). Nothing else from the runner leaks in. */
  env: Record<string, string>
  cwd: string
  /** Text written to stdin then closed; undefined = stdin is /dev/null. */
  stdin?: string
}

/** What the harness printed, as the run stage captured it. */
export interface RawRun {
  stdout: string
  stderr: string
  exitCode: number | null
  signal: string | null
  home: string
}

/** An adapter's reading of a finished run. Self-reported usage is a cross-check only. */
export interface ParsedRun {
  /** The harness's final answer text, or null. */
  finalMessage: string | null
  /** Parsed events/messages (JSON lines or the harness's own transcript), kept as trajectory.jsonl. */
  trajectory: unknown[]
  selfReport: SelfReport | null
  /** Set when the harness failed before doing any work (bad config, auth, crash at startup). */
  startupError: string | null
  /**
   * Set when the harness stopped itself on its own budget (e.g. agentd's exit code 7): the reason, for
   * exit class `budget`. Absent or null otherwise.
   */
  budgetStop?: string | null
}

/**
 * One adapter per harness, one small contract (after Harbor's one-file-per-agent layout):
 * install the pinned version into a shared cache, probe the version, render config into the isolated
 * home and build the headless command, and parse the output. Adapters never measure cost: the proxy does.
 */
export interface HarnessAdapter {
  readonly name: HarnessName
  /** Idempotent: reuses `<cacheDir>/<pkg>@<version>` when already installed. Throws HwError `install_failed`. */
  install(version: string, ctx: InstallContext): Promise<InstalledHarness>
  /**
   * The version the installed CLI reports, or null when it cannot tell. `sandbox`: the run's backend,
   * in which the `--version` probe runs (absent: as the action's user, allowlisted environment).
   */
  probeVersion(installed: InstalledHarness, sandbox?: SandboxBackend): Promise<string | null>
  /** Write config files into ctx.home and return the command to run for this attempt. */
  prepare(installed: InstalledHarness, ctx: AttemptContext): Promise<Invocation>
  /** Read the run's output (and files under ctx.home where the harness keeps its transcript). */
  parse(run: RawRun, ctx: AttemptContext): Promise<ParsedRun>
}
