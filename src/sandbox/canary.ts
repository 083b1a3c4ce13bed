import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { CanaryResult } from '../records/isolation.js'
import type { SandboxBackend } from './contract.js'

/**
 * What the probe does inside the sandbox: print every `/proc/<pid>/environ` and `/proc/<pid>/cmdline` it can
 * read, the files it is told about, and the listing of the homes. It is never told the canary itself
 * (it would then see it in its own command line): the caller looks for the canary in its output.
 */
const PROBE = `for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < "$f" 2>/dev/null; done
for f in "$@"; do cat "$f" 2>/dev/null; done
ls -la /home /root "$HOME" 2>/dev/null
exit 0`

/** The outcome of one canary self-test. */
export interface CanaryCheck {
  result: CanaryResult
  /** Where the canary was seen (`environ or cmdline of another process`, `a file under ~`, ...), empty when passed. */
  seen: string[]
  /** Milliseconds the probe took (open + exec + close). */
  ms: number
}

/**
 * The canary self-test (design/sandbox.md §5.3): put a random canary in the environment and on the
 * command line of a live process of the action's user, and in files under the user's home and /tmp
 * (mode 0644), then run a probe through `backend` and look for the canary in what it printed. `workRoot`
 * holds the probe's own workspace and home. Never throws for the probe's failures: a probe that could
 * not run is `exposed` (nothing was proven).
 */
export async function runCanary(backend: SandboxBackend, workRoot: string): Promise<CanaryCheck> {
  const t0 = performance.now()
  const canary = `hw-canary-${randomBytes(16).toString('hex')}`
  const tag = randomBytes(6).toString('hex')
  const homeFile = path.join(os.homedir(), `.hw-canary-${tag}`)
  const tmpFile = path.join(os.tmpdir(), `hw-canary-${tag}`)
  const base = path.join(workRoot, 'canary', tag)
  const ws = path.join(base, 'w')
  const home = path.join(base, 'h')
  // A stand-in for the action: the canary in its environment and on its command line.
  const standIn = spawn('sh', ['-c', 'sleep 120', canary], {
    env: { PATH: '/usr/bin:/bin', HW_ACTION_SECRET: canary },
    stdio: 'ignore',
    detached: true,
  })
  try {
    await Promise.all([mkdir(ws, { recursive: true }), mkdir(home, { recursive: true })])
    await writeFile(homeFile, `HW_CANARY_FILE=${canary}\n`, { mode: 0o644 })
    await writeFile(tmpFile, `HW_CANARY_FILE=${canary}\n`, { mode: 0o644 })
    const out = path.join(base, 'probe.out')
    const err = path.join(base, 'probe.err')
    const box = await backend.open({ writable: [ws, home], readOnly: [], container: { phase: 'agent' } })
    let ran = false
    try {
      const r = await box.exec(
        {
          command: 'sh',
          args: ['-c', PROBE, 'probe', homeFile, tmpFile],
          cwd: ws,
          env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' },
        },
        { timeoutMs: 30_000, graceMs: 1000, stdoutFile: out, stderrFile: err, sweepHome: home },
      )
      ran = r.exitCode === 0
    } finally {
      await box.close()
    }
    const text = await readFile(out, 'utf8').catch(() => '')
    const seen: string[] = []
    for (const line of text.split('\n')) {
      if (!line.includes(canary)) continue
      if (line.startsWith('HW_ACTION_SECRET=')) seen.push("the action's environment (/proc/<pid>/environ)")
      else if (line.startsWith('HW_CANARY_FILE=')) seen.push('a file of the action user (home or /tmp)')
      else seen.push('a command line (/proc/<pid>/cmdline)')
    }
    if (!ran) seen.push('the probe did not run to its end')
    return {
      result: seen.length === 0 ? 'passed' : 'exposed',
      seen: [...new Set(seen)],
      ms: performance.now() - t0,
    }
  } finally {
    if (standIn.pid !== undefined) {
      try {
        process.kill(-standIn.pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
    await Promise.all([
      rm(homeFile, { force: true }),
      rm(tmpFile, { force: true }),
      rm(base, { recursive: true, force: true }),
    ])
  }
}
