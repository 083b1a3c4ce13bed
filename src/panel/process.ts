import { closeSync, openSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { execa } from 'execa'

/** How one process-group run ended. */
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
  /** Variables added to the inherited environment (or the whole environment with `extendEnv: false`). */
  env?: Record<string, string>
  extendEnv?: boolean
  /** Wall-clock limit in milliseconds. */
  timeoutMs: number
  /** File that receives stdout and stderr (appended); undefined = output discarded. */
  logFile?: string
  /** Milliseconds between SIGTERM and SIGKILL on timeout. */
  graceMs?: number
}

/**
 * Run `file args` as the leader of a new process group (spawned detached) so that a timeout can end
 * it with everything it started: SIGTERM to the whole group, SIGKILL after `graceMs`. When the leader
 * exits on its own, any member it left behind (a backgrounded server, a stray `sleep`) is SIGKILLed too,
 * so no orphan outlives the run. Output goes straight to `logFile` through a file descriptor, never a
 * pipe, so a leftover child holding the descriptor cannot keep this waiting. Never throws for the
 * child's failures; they are in the result.
 */
export async function runProcessGroup(
  file: string,
  args: string[],
  opts: GroupRunOptions,
): Promise<GroupRun> {
  const fd = opts.logFile ? openSync(opts.logFile, 'a') : undefined
  // A descriptor number sends output straight to the file; execa's option types take one kind at a time.
  const out = (fd ?? 'ignore') as 'ignore'
  const started = performance.now()
  let timedOut = false
  let killTimer: NodeJS.Timeout | undefined
  let termTimer: NodeJS.Timeout | undefined
  try {
    const sub = execa(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      extendEnv: opts.extendEnv ?? true,
      detached: true,
      stdin: 'ignore',
      stdout: out,
      stderr: out,
      reject: false,
    })
    const pid = sub.pid
    if (pid !== undefined) {
      termTimer = setTimeout(() => {
        timedOut = true
        killGroup(pid, 'SIGTERM')
        killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), opts.graceMs ?? 2000)
      }, opts.timeoutMs)
    }
    const result = await sub
    const durationMs = performance.now() - started
    if (pid !== undefined) killGroup(pid, 'SIGKILL')
    const notStarted = pid === undefined || (result.exitCode === undefined && result.signal === undefined)
    return {
      exitCode: timedOut ? null : (result.exitCode ?? null),
      signal: result.signal ?? null,
      timedOut,
      durationMs,
      spawnError:
        notStarted && !timedOut ? (result.shortMessage ?? 'the process could not be started') : null,
    }
  } finally {
    clearTimeout(termTimer)
    clearTimeout(killTimer)
    if (fd !== undefined) closeSync(fd)
  }
}

/** Signal every process in group `pgid`; a group that is already gone is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e
  }
}
