import { spawn } from 'node:child_process'
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

/** One harness process to start, with its whole environment (nothing is inherited). */
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
  const started = performance.now()
  let timedOut = false
  let aborted = false
  let termTimer: NodeJS.Timeout | undefined
  let killTimer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  try {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', out, err],
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
    const pid = child.pid
    const stop = (): void => {
      if (pid === undefined) return
      killGroup(pid, 'SIGTERM')
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), opts.graceMs)
    }
    if (pid !== undefined) {
      termTimer = setTimeout(() => {
        timedOut = true
        stop()
      }, opts.timeoutMs)
      onAbort = () => {
        if (timedOut || aborted) return
        aborted = true
        stop()
      }
      if (opts.signal?.aborted) onAbort()
      else opts.signal?.addEventListener('abort', onAbort, { once: true })
    }
    const end = await ended
    const durationMs = performance.now() - started
    let strays = 0
    if (pid !== undefined) {
      killGroup(pid, 'SIGKILL')
      if (opts.sweepHome) strays = killByHome(opts.sweepHome)
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
    clearTimeout(termTimer)
    clearTimeout(killTimer)
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort)
    closeSync(out)
    closeSync(err)
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
