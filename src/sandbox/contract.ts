import type { HarnessRunResult, HarnessSpawn } from '../process/exec.js'
import type { ContainerNetwork, Isolation } from '../records/isolation.js'

export type { ContainerNetwork } from '../records/isolation.js'
/** What a backend guarantees; `validate` and the run check these against what the manifest requires. */
export interface SandboxCapabilities {
  /** The harness cannot read other processes' environment or command line (own PID namespace or user). */
  hidesProcesses: boolean
  /** The harness runs as a user other than the action's. */
  separateUser: boolean
  /** The action user's home, /home, /tmp and other attempts' files are not visible. */
  hidesFiles: boolean
  /** System folders are read-only (no planting in world-writable paths). */
  readOnlySystem: boolean
}

/** Whether the backend can run here, and why not. */
export interface ProbeResult {
  ok: boolean
  /** Why not (missing tool, no root and no passwordless sudo, kernel refused), or a note. */
  reason: string | null
}

/** Resources of one container. */
export interface ContainerResources {
  cpus: number
  memory_mb: number
  pids: number
  /** Disk of the writable layer in MB; null = not limited. */
  storage_mb: number | null
}

/** Where a container's image comes from: a reference, or a task's Dockerfile folder built once per content. */
export type ImageSource = { ref: string } | { build: string; name: string; timeoutS: number }

/**
 * What an attempt asks of a container backend (others ignore it): which image, where the workspace
 * goes, which limits and network, which loopback ports (proxy, tool-bridge) to forward.
 */
export interface ContainerRequest {
  phase: 'agent' | 'verifier'
  /** Absent: the manifest's `sandbox.container.image`. */
  image?: ImageSource
  /** The task's working directory (the workspace is mounted there): absent = the image's, else /app. */
  workdir?: string
  /** The task's own values (task.toml); the manifest's fill the rest. */
  resources?: Partial<ContainerResources>
  /** Absent: the manifest's `sandbox.container.network`. */
  network?: ContainerNetwork
  /** 127.0.0.1 ports on the host the container may reach (recording proxy, tool-bridge). */
  ports?: number[]
  /** More host folders at fixed places in the container (Harbor's /tests, /logs/verifier). */
  binds?: { source: string; target: string; readOnly: boolean }[]
}

/** What ran, for the attempt record (container backend). */
export interface SandboxProvenance {
  runtime: string
  runtime_version: string
  image_ref: string
  image_id: string
  workdir: string
  network: ContainerNetwork
  resources: ContainerResources
}

/** One sandbox to open for an attempt (all paths absolute). */
export interface SandboxSpec {
  /** Folders the processes may write (the attempt's workspace and home); handed to the sandbox user. */
  writable: string[]
  /** Folders the processes may read (installed harness, tools); exposed read-only. */
  readOnly: string[]
  /**
   * Folders inside exposed ones to cover with an empty read-only folder (e.g. a checkout's `.git`,
   * which may hold a token). Only isolating backends can; others ignore it.
   */
  masked?: string[]
  /**
   * Package managers' own configuration under /etc a job beside the harness needs (`npmrc`,
   * `pip.conf`: registry, proxy and certificate settings), readable besides the sandbox's /etc
   * allowlist. Installs name them; harness attempts never do.
   */
  hostConfig?: string[]
  /** For a container backend: the container to run in. Without it a container backend runs the job beside (aux jobs: installs, git). */
  container?: ContainerRequest
  /**
   * Proxy-only network: the host's 127.0.0.1 ports reachable inside (the recording proxy). A backend
   * with a network of its own forwards these only, and nothing else of the host or outside is
   * reachable (an empty list: nothing at all); absent, the sandbox keeps the host's network (jobs
   * beside the harness: installs, git).
   */
  loopbackPorts?: number[]
}

/** Limits and output files of one exec (see HarnessRunOptions). */
export interface ExecLimits {
  timeoutMs: number
  graceMs: number
  stdoutFile: string
  stderrFile: string
  signal?: AbortSignal
  /** The attempt's HOME, for the stray sweep of same-user backends. */
  sweepHome?: string
}

export type ExecCommand = HarnessSpawn
export type ExecResult = HarnessRunResult & {
  /** A fault of the environment, not of the command (out of memory, pids or disk exhausted): never a harness result. */
  fault?: { kind: 'oom' | 'pids' | 'disk' | 'container_exit'; detail: string }
}

/** An opened sandbox: run commands in it, then close it (kills what is left, returns the folders). */
export interface Sandbox {
  kind: Isolation
  /** The first writable folder (the attempt's workspace). */
  root: string
  /**
   * `proxy-only`: the processes have a network of their own whose only way out is the forwarded
   * loopback ports; `host`: the host's network (a harness could reach a model around the proxy).
   */
  network: 'proxy-only' | 'host'
  /** Run one command; `cmd.env` is its complete environment. Never throws for the command's failures. */
  exec(cmd: ExecCommand, limits: ExecLimits): Promise<ExecResult>
  /** What ran (container backend): runtime, image, limits and network. */
  provenance?: SandboxProvenance
  /** Kill every process left, give the writable folders back to the action's user. Idempotent. */
  close(): Promise<void>
}

/** A pluggable way of running attempts (chosen once per run: select.ts). */
export interface SandboxBackend {
  kind: Isolation
  capabilities: SandboxCapabilities
  /** Can it run on this machine? Cheap, cached by the caller. Never throws. */
  probe(): Promise<ProbeResult>
  open(spec: SandboxSpec): Promise<Sandbox>
  /**
   * Container backends: copy an image's working directory into `dest` (a task whose repository lives in
   * its image, as SWE-bench's /testbed does); returns the working directory.
   */
  exportWorkdir?(image: ImageSource, dest: string, signal?: AbortSignal): Promise<string>
}

/** The warning of design/sandbox.md §5 for env-only and none, printed in logs and the report header. */
export const UNISOLATED_WARNING =
  "Harnesses ran as the action's own user. Third-party harness code could read the action's environment " +
  "(provider/LiteLLM keys, GitHub and Actions runtime tokens) and the runner's files. Results are " +
  'comparable, but treat those credentials as exposed: use budgeted throw-away keys and least-privilege tokens.'

/** Backends that do not isolate the harness from the action (the report warns about them). */
export function isUnisolated(backend: string): boolean {
  return backend === 'env-only' || backend === 'none'
}
