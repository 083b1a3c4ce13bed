import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { ExecCommand, ExecResult, Sandbox, SandboxBackend, SandboxSpec } from './contract.js'
import { noneBackend } from './none.js'

/** Limits of one sandboxed tool job (an install, a `--version` probe, a setup script, a verifier). */
export interface JobLimits {
  /** Wall-clock limit of each command, milliseconds. */
  timeoutMs: number
  /** Milliseconds between SIGTERM and SIGKILL at the limit (default 2000). */
  graceMs?: number
  /** Aborting ends the running command at once. */
  signal?: AbortSignal
  /** File that receives each command's stdout then stderr (appended); default: only returned. */
  logFile?: string
  /**
   * A HOME used by this job alone (a fresh folder): same-user backends kill, after each command, every
   * process left with it in its environment. Never the user's real HOME (that would kill the user's
   * own processes).
   */
  sweepHome?: string
}

/** One command's end and what it printed (stdout, then stderr). */
export interface JobRun extends ExecResult {
  output: string
  /** The end of the command's stderr alone (at most 16 KiB), for evidence of how it ended. */
  errorOutput: string
}

/** How a job's command failed, for a reason line: "bash: <spawn error>", "ended by SIGKILL" or "exited 3". */
export function describeExit(run: Pick<ExecResult, 'spawnError' | 'signal' | 'exitCode'>): string {
  if (run.spawnError) return `bash: ${run.spawnError}`
  return run.signal ? `ended by ${run.signal}` : `exited ${run.exitCode}`
}

/**
 * Run `cmds` one after another in one sandbox opened for this job with `spec`'s folders (writable
 * ones are handed to the sandbox user for the job and given back when it closes), stopping at the
 * first command that does not exit 0. `backend` is the run's chosen backend; without one (a caller
 * outside a run) the job runs as the action's user with exactly `cmd.env` (backend `none`). Output
 * goes through files kept outside the sandbox; it is returned per command and appended to
 * `limits.logFile`. Never throws for the commands' failures (they are in the results); throws when
 * the sandbox cannot be opened.
 */
export async function runSandboxJob(
  backend: SandboxBackend | undefined,
  spec: SandboxSpec,
  cmds: ExecCommand[],
  limits: JobLimits,
): Promise<JobRun[]> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'hw-job-'))
  let box: Sandbox | undefined
  const runs: JobRun[] = []
  try {
    box = await (backend ?? noneBackend).open(spec)
    for (const [i, cmd] of cmds.entries()) {
      const stdoutFile = path.join(outDir, `${i}.out`)
      const stderrFile = path.join(outDir, `${i}.err`)
      const r = await box.exec(cmd, {
        timeoutMs: limits.timeoutMs,
        graceMs: limits.graceMs ?? 2000,
        stdoutFile,
        stderrFile,
        signal: limits.signal,
        sweepHome: limits.sweepHome,
      })
      const out = await readFile(stdoutFile, 'utf8').catch(() => '')
      const err = await readFile(stderrFile, 'utf8').catch(() => '')
      const output = out + (out && err && !out.endsWith('\n') ? '\n' : '') + err
      if (limits.logFile) await appendFile(limits.logFile, output)
      runs.push({ ...r, output, errorOutput: err.slice(-16_384) })
      if (r.exitCode !== 0) break
    }
    return runs
  } finally {
    await box?.close()
    await rm(outDir, { recursive: true, force: true })
  }
}

/** Whether jobs run through `backend` are kept from the action's processes and files. */
export function isolates(backend: SandboxBackend | undefined): boolean {
  return backend?.capabilities.separateUser === true
}
