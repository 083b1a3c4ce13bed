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

/**
 * bash: run `command` with `bash -c` in the sandbox folder, with an allowlisted environment (PATH,
 * LANG, HOME and TMPDIR set to the sandbox: nothing of the bridge's own environment), stdin closed, in
 * its own process group, killed whole after `timeoutS` seconds. The result is the exit code and the
 * combined output (at most 64 KiB). A non-zero exit is a result, not a tool error; a timeout is an error.
 */
export function bashTool(root: string, args: { command: string }, timeoutS: number): Promise<ToolOutcome> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', args.command], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: root, TMPDIR: root },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const chunks: Buffer[] = []
    let size = 0
    let cut = false
    const take = (b: Buffer): void => {
      if (size >= MAX_OUTPUT_BYTES) {
        cut = true
        return
      }
      chunks.push(b.subarray(0, MAX_OUTPUT_BYTES - size))
      if (b.length > MAX_OUTPUT_BYTES - size) cut = true
      size += Math.min(b.length, MAX_OUTPUT_BYTES - size)
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
      resolve({ status: 'error', code: 'spawn_failed', text: e.message })
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      killGroup(child.pid)
      const out = Buffer.concat(chunks).toString('utf8') + (cut ? '\n[output cut at 64 KiB]' : '')
      if (timedOut)
        resolve({ status: 'error', code: 'timeout', text: `timed out after ${timeoutS} s\n${out}` })
      else resolve({ status: 'ok', text: `exit ${code ?? signal}\n${out}` })
    })
  })
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}
