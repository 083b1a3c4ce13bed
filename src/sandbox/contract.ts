import type { HarnessRunResult, HarnessSpawn } from '../process/exec.js'
import type { Isolation } from '../records/isolation.js'
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
   * Proxy-only network: the host's 127.0.0.1 ports reachable inside (the recording proxy). A backend
   * with a network of its own forwards these only, and nothing else of the host or outside is
   * reachable; absent, the sandbox keeps the host's network.
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
export type ExecResult = HarnessRunResult

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
