import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { SandboxBackend } from '../sandbox/contract.js'
import { runSandboxJob } from '../sandbox/job.js'
import { isolationEnv } from './env.js'

/** The first version-looking token (`1.2.3`, `0.24.4-nightly.1`) in a `--version` output, or null. */
export function parseVersion(text: string): string | null {
  const m = /(?<![\d.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text)
  return m?.[1] ?? null
}

/** Where a `--version` probe runs: the run's sandbox backend and the install folder(s) it reads. */
export interface ProbeBox {
  /** Absent: as the action's user with only the probe's environment (backend `none`). */
  sandbox?: SandboxBackend
  /** Folders the probe reads (the install folder), exposed read-only. */
  readOnly: string[]
}

/**
 * Run `<command> <args…> --version` the way an attempt runs — as a job of the run's sandbox (`box`),
 * with a throw-away HOME/TMPDIR as its only writable folder, no runner variables, stdin closed, 60 s
 * limit — and parse the version it prints. Null when the command fails or prints no version. `env`
 * adds harness variables (e.g. quieting flags).
 */
export async function probeCliVersion(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  versionArgs: string[] = ['--version'],
  box: ProbeBox = { readOnly: [] },
): Promise<string | null> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'hw-probe-'))
  try {
    const home = path.join(base, 'home')
    const tmp = path.join(base, 'tmp')
    await mkdir(home, { recursive: true })
    await mkdir(tmp, { recursive: true })
    const [r] = await runSandboxJob(
      box.sandbox,
      { writable: [base], readOnly: box.readOnly },
      [
        {
          command,
          args: [...args, ...versionArgs],
          cwd: base,
          env: { ...isolationEnv({ home, tmp }), ...env },
        },
      ],
      { timeoutMs: 60_000, sweepHome: home },
    )
    if (r?.exitCode !== 0) return null
    return parseVersion(r.output)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}
