import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { isolationEnv } from './env.js'

/** The first version-looking token (`1.2.3`, `0.24.4-nightly.1`) in a `--version` output, or null. */
export function parseVersion(text: string): string | null {
  const m = /(?<![\d.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(text)
  return m?.[1] ?? null
}

/**
 * Run `<command> <args…> --version` the way an attempt runs (isolated throw-away HOME/TMPDIR, no
 * runner variables, stdin closed, 60 s limit) and parse the version it prints. Null when the
 * command fails or prints no version. `env` adds harness variables (e.g. quieting flags).
 */
export async function probeCliVersion(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  versionArgs: string[] = ['--version'],
): Promise<string | null> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'hw-probe-'))
  try {
    const home = path.join(base, 'home')
    const tmp = path.join(base, 'tmp')
    await mkdir(home, { recursive: true })
    await mkdir(tmp, { recursive: true })
    const r = await execa(command, [...args, ...versionArgs], {
      env: { ...isolationEnv({ home, tmp }), ...env },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
      cwd: base,
    })
    if (r.exitCode !== 0) return null
    return parseVersion(`${r.stdout}\n${r.stderr}`)
  } finally {
    await rm(base, { recursive: true, force: true })
  }
}
