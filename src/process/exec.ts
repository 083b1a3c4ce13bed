import { spawn } from 'node:child_process'
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

/** One process to start, with its whole environment (nothing is inherited). */
export interface HarnessSpawn {
  command: string
  args: string[]
  cwd: string
  /** The complete environment of the process (see env.ts: an allowlist, never the runner's own). */
  env: Record<string, string>
  /** Text written to stdin and then closed; undefined = stdin is /dev/null. */
  stdin?: string
}

export interface HarnessRunOptions {
  /** Wall-clock limit, milliseconds. */
  timeoutMs: number
  /** Milliseconds between SIGTERM and SIGKILL once the limit is hit (or the run is aborted). */
  graceMs: number
  /** Files that receive stdout and stderr (truncated first); file descriptors, never pipes. */
  stdoutFile: string
  stderrFile: string
  /** Aborting ends the whole process tree like a timeout does, but reports `aborted`. */
  signal?: AbortSignal
  /**
   * The attempt's private HOME. Processes that left the process group (setsid, double fork) still carry
   * it in their environment, so after the run every process of ours whose HOME is this path is killed.
   */
  sweepHome?: string
  /**
   * How the tree is stopped, for processes this one may not signal itself (a sandbox started through
   * `sudo`): called with the leader's pid and the signal. Default: signal the process group.
   */
  kill?: (pid: number, signal: NodeJS.Signals) => void
  /**
   * A timer inside the command (`timeout` in a sandbox): its exit codes (124, 137) after at least `ms`
   * milliseconds mean the run timed out.
   */
  innerTimeout?: { codes: readonly number[]; ms: number }
}

/** How a harness run ended. */
export interface HarnessRunResult {
  /** Exit code, or null when ended by a signal, timed out, aborted or never started. */
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  aborted: boolean
  /** Milliseconds from spawn to the leader's exit. */
  durationMs: number
  /** Why the process could not be started (e.g. `ENOENT`), or null. */
  spawnError: string | null
  /** Processes found by the HOME sweep after the run (escaped the group) and killed. */
  strays: number
}

/**
 * Process groups started here and still running, so a second Ctrl-C (or a crash path) can end them
 * all at once, synchronously, before the process exits: no harness outlives Harness Watch.
 */
const live = new Map<number, { kill: (pid: number, signal: NodeJS.Signals) => void; home?: string }>()

/** SIGKILL every process tree still running (see `live`); returns how many were signalled. Synchronous. */
export function killAllRunning(): number {
  let n = 0
  for (const [pid, { kill, home }] of live) {
    try {
      kill(pid, 'SIGKILL')
      if (home) killByHome(home)
      n++
    } catch {
      // gone already
    }
  }
  return n
}

/**
 * Run a harness as the leader of its own process group (spawned detached), so a timeout ends the whole
 * tree: SIGTERM to the group, SIGKILL after `graceMs`. When the leader exits on its own, whatever it
 * left in its group is SIGKILLed, and processes that escaped the group are found by their HOME
 * (`sweepHome`, Linux /proc) and killed too: no orphan outlives the attempt. stdout/stderr go to files
 * through descriptors, so a leftover child holding them cannot keep the run waiting. Never throws for
 * the child's failures: they are in the result.
 */
export async function runHarnessProcess(
  spec: HarnessSpawn,
  opts: HarnessRunOptions,
): Promise<HarnessRunResult> {
  const out = openSync(opts.stdoutFile, 'w')
  const err = openSync(opts.stderrFile, 'w')
  try {
    return await runGroup(spec, { ...opts, outFd: out, errFd: err })
  } finally {
    closeSync(out)
    closeSync(err)
  }
}

interface GroupOptions extends Omit<HarnessRunOptions, 'stdoutFile' | 'stderrFile'> {
  /** Descriptors for stdout/stderr, or 'ignore'. */
  outFd: number | 'ignore'
  errFd: number | 'ignore'
}

/** The one process-group runner under runHarnessProcess and runProcessGroup. */
async function runGroup(spec: HarnessSpawn, opts: GroupOptions): Promise<HarnessRunResult> {
  const started = performance.now()
  const kill = opts.kill ?? killGroup
  let timedOut = false
  let aborted = false
  let termTimer: NodeJS.Timeout | undefined
  let killTimer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  let pid: number | undefined
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', opts.outFd, opts.errFd],
    })
    const ended = new Promise<{ code: number | null; signal: string | null; error: string | null }>(
      (resolve) => {
        child.once('error', (e: NodeJS.ErrnoException) =>
          resolve({ code: null, signal: null, error: e.code ?? e.message }),
        )
        child.once('exit', (code, signal) => resolve({ code, signal, error: null }))
      },
    )
    if (spec.stdin !== undefined && child.stdin) {
      // A harness that exits without reading stdin makes the write fail with EPIPE: not our error.
      child.stdin.on('error', () => {})
      child.stdin.end(spec.stdin)
    }
    pid = child.pid
    if (pid !== undefined) {
      const p = pid
      live.set(p, { kill, home: opts.sweepHome })
      const stop = (first: NodeJS.Signals): void => {
        kill(p, first)
        if (first !== 'SIGKILL') killTimer = setTimeout(() => kill(p, 'SIGKILL'), opts.graceMs)
      }
      termTimer = setTimeout(() => {
        timedOut = true
        stop('SIGTERM')
      }, opts.timeoutMs)
      onAbort = () => {
        if (timedOut || aborted) return
        aborted = true
        // A stop asked for by the user: nothing of the attempt is kept, so no grace period.
        stop('SIGKILL')
      }
      if (opts.signal?.aborted) onAbort()
      else opts.signal?.addEventListener('abort', onAbort, { once: true })
    }
    const end = await ended
    const durationMs = performance.now() - started
    let strays = 0
    if (pid !== undefined) {
      kill(pid, 'SIGKILL')
      if (opts.sweepHome) strays = killByHome(opts.sweepHome)
    }
    if (
      !aborted &&
      end.code !== null &&
      opts.innerTimeout?.codes.includes(end.code) &&
      durationMs >= opts.innerTimeout.ms - 50
    ) {
      timedOut = true
    }
    return {
      exitCode: timedOut || aborted ? null : end.code,
      signal: end.signal,
      timedOut,
      aborted,
      durationMs,
      spawnError: end.error,
      strays,
    }
  } finally {
    if (pid !== undefined) live.delete(pid)
    clearTimeout(termTimer)
    clearTimeout(killTimer)
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort)
  }
}

/** How one process-group run of a tool (setup, verifier, reference solution) ended. */
export interface GroupRun {
  /** Exit code of the leader, or null when it was ended by a signal, timed out or never started. */
  exitCode: number | null
  /** Signal that ended the leader (e.g. "SIGKILL"), or null. */
  signal: string | null
  /** True when the wall-clock limit was reached and the group was killed. */
  timedOut: boolean
  /** Wall-clock milliseconds from spawn to the leader's exit. */
  durationMs: number
  /** Why the process could not be started (missing executable, missing cwd), or null. */
  spawnError: string | null
}

export interface GroupRunOptions {
  cwd: string
  /** Variables added to the allowlisted tool environment (see toolEnv), or the whole environment with `extendEnv: false`. */
  env?: Record<string, string>
  /** false: `env` is the complete environment. Default true: toolEnv(baseEnv) plus `env`; never the whole runner environment. */
  extendEnv?: boolean
  /** The environment the allowlist is read from. Default process.env. */
  baseEnv?: NodeJS.ProcessEnv
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number
  /** File that receives stdout and stderr (appended); undefined = output discarded. */
  logFile?: string
  /** Milliseconds between SIGTERM and SIGKILL on timeout. */
  graceMs?: number
  /** Aborting kills the group at once. */
  signal?: AbortSignal
}

/**
 * Runner variables a setup script, verifier or installer may read, by name: where programs are,
 * locale, time zone, the user's home (tool caches), and network settings (proxy, CA bundles, Docker
 * host). Never a credential: nothing of `GITHUB_*`, `ACTIONS_*`, `INPUT_*` or a provider key; of `RUNNER_*` only
 * the job marker RUNNER_TRACKING_ID, for the runner's orphan cleanup.
 */
export const TOOL_ENV_ALLOWLIST = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'REQUESTS_CA_BUNDLE',
  'PIP_INDEX_URL',
  'PIP_EXTRA_INDEX_URL',
  'DOCKER_HOST',
  // The Actions runner's job marker (not a credential): its orphan cleanup finds processes by it.
  'RUNNER_TRACKING_ID',
] as const

/**
 * The environment of a tool process: the allowlisted runner variables (TOOL_ENV_ALLOWLIST), TERM=dumb
 * and CI=1, then `extra`. Pure.
 */
export function toolEnv(base: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', TERM: 'dumb', CI: '1' }
  for (const name of TOOL_ENV_ALLOWLIST) {
    const v = base[name]
    if (v !== undefined) env[name] = v
  }
  return { ...env, ...extra }
}

/**
 * Run `file args` as the leader of a new process group (spawned detached) with the allowlisted tool
 * environment (toolEnv: never the runner's whole environment), so that a timeout can end it with
 * everything it started: SIGTERM to the whole group, SIGKILL after `graceMs`. When the leader exits on
 * its own, any member it left behind (a backgrounded server, a stray `sleep`) is SIGKILLed too, so no
 * orphan outlives the run. Output goes straight to `logFile` through a file descriptor (appended),
 * never a pipe, so a leftover child holding the descriptor cannot keep this waiting. Never throws for
 * the child's failures; they are in the result.
 */
export async function runProcessGroup(
  file: string,
  args: string[],
  opts: GroupRunOptions,
): Promise<GroupRun> {
  const fd = opts.logFile ? openSync(opts.logFile, 'a') : undefined
  try {
    const r = await runGroup(
      {
        command: file,
        args,
        cwd: opts.cwd,
        env:
          opts.extendEnv === false ? { ...(opts.env ?? {}) } : toolEnv(opts.baseEnv ?? process.env, opts.env),
      },
      {
        timeoutMs: opts.timeoutMs,
        graceMs: opts.graceMs ?? 2000,
        signal: opts.signal,
        outFd: fd ?? 'ignore',
        errFd: fd ?? 'ignore',
      },
    )
    return {
      exitCode: r.exitCode,
      signal: r.signal,
      timedOut: r.timedOut,
      durationMs: r.durationMs,
      spawnError: r.spawnError === null ? null : `${file}: ${r.spawnError}`,
    }
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Signal every process in group `pgid`; a group that is already gone is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code !== 'ESRCH' && code !== 'EPERM') throw e
  }
}

/**
 * SIGKILL every process (Linux /proc) whose environment has `HOME=<home>`, and return how many. Each
 * attempt's HOME is a fresh unique path, so this only finds that attempt's processes. Other users'
 * processes are unreadable and skipped. Elsewhere (no /proc) it does nothing.
 */
export function killByHome(home: string): number {
  const pids = pidsWithHome(home)
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone already, or not ours
    }
  }
  return pids.length
}

/**
 * Pids (Linux /proc) whose environment holds `HOME=<home>`; empty where /proc is unavailable. Reads are
 * synchronous on purpose: a few hundred tiny /proc files read faster in one go than through the
 * thread pool.
 */
export function pidsWithHome(home: string): number[] {
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return []
  }
  const entry = Buffer.from(`HOME=${home}\0`)
  const inner = Buffer.concat([Buffer.from([0]), entry])
  const found: number[] = []
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    let env: Buffer
    try {
      env = readFileSync(`/proc/${name}/environ`)
    } catch {
      continue // gone, or another user's
    }
    if (env.subarray(0, entry.length).equals(entry) || env.includes(inner)) found.push(Number(name))
  }
  return found
}
