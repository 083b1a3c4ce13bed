import { spawn } from 'node:child_process'
import type { ToolOutcome } from '../provider.js'

/** Bytes of combined output kept; the rest is cut with a note. */
export const MAX_OUTPUT_BYTES = 64 * 1024

export const BASH_SCHEMA = {
  type: 'object',
  properties: { command: { type: 'string', description: 'a bash command, run in the working folder' } },
  required: ['command'],
  additionalProperties: false,
}

/** A finished bash command: exit code (null when killed), combined output (capped), whether it timed out. */
export interface BashRun {
  exitCode: number | null
  signal: string | null
  output: string
  timedOut: boolean
  spawnError: string | null
}

/**
 * Run `command` with `bash -c` in `cwd`, with an allowlisted environment (PATH, LANG, HOME and TMPDIR
 * set to `cwd`: nothing of our own environment), stdin closed, in its own process group, killed whole
 * after `timeoutS` seconds. Combined output is kept up to 64 KiB.
 */
export function runBash(cwd: string, command: string, timeoutS: number): Promise<BashRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: cwd, TMPDIR: cwd },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const chunks: Buffer[] = []
    let size = 0
    let cut = false
    const take = (b: Buffer): void => {
      const room = MAX_OUTPUT_BYTES - size
      if (b.length > room) cut = true
      if (room <= 0) return
      chunks.push(b.subarray(0, room))
      size += Math.min(b.length, room)
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child.pid)
    }, timeoutS * 1000)
    child.on('error', (e) => {
      clearTimeout(timer)
      resolve({ exitCode: null, signal: null, output: '', timedOut: false, spawnError: e.message })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      killGroup(child.pid)
      const output = Buffer.concat(chunks).toString('utf8') + (cut ? '\n[output cut at 64 KiB]' : '')
      resolve({ exitCode: code, signal, output, timedOut, spawnError: null })
    })
  })
}

/**
 * The bash builtin: `runBash` in the sandbox folder. The result is the exit code and the output; a
 * non-zero exit is a result, not a tool error; a timeout is an error.
 */
export async function bashTool(
  root: string,
  args: { command: string },
  timeoutS: number,
): Promise<ToolOutcome> {
  const r = await runBash(root, args.command, timeoutS)
  if (r.spawnError) return { status: 'error', code: 'spawn_failed', text: r.spawnError }
  if (r.timedOut)
    return { status: 'error', code: 'timeout', text: `timed out after ${timeoutS} s\n${r.output}` }
  return { status: 'ok', text: `exit ${r.exitCode ?? r.signal}\n${r.output}` }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}
