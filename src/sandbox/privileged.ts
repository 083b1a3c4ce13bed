import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)

/** Root already, or passwordless `sudo -n` (GitHub-hosted runners), or neither. */
export type Privilege = 'root' | 'sudo' | null

/** A clean environment for privileged helpers: nothing of the action's reaches them. */
export const PRIV_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LANG: 'C.UTF-8',
}

let cached: Promise<Privilege> | null = null

/** How this process can act as root; probed once (`sudo -n true`). Never throws. */
export function privilege(): Promise<Privilege> {
  cached ??= (async () => {
    if (process.getuid?.() === 0) return 'root'
    try {
      await execFileP('sudo', ['-n', 'true'], { env: PRIV_ENV, timeout: 10_000 })
      return 'sudo'
    } catch {
      return null
    }
  })()
  return cached
}

/** `argv` as a root command line: as is when root, else behind `sudo -n`. */
export function asRoot(priv: Exclude<Privilege, null>, argv: string[]): string[] {
  return priv === 'root' ? argv : ['sudo', '-n', ...argv]
}

/** Run a root command and return its stdout; throws with its stderr on failure. */
export async function runAsRoot(
  priv: Exclude<Privilege, null>,
  argv: string[],
  timeoutMs = 60_000,
): Promise<string> {
  const [file, ...args] = asRoot(priv, argv)
  try {
    const r = await execFileP(file as string, args, { env: PRIV_ENV, timeout: timeoutMs })
    return r.stdout
  } catch (e) {
    const err = e as { stderr?: string; message: string }
    throw new Error(`${argv.join(' ')}: ${(err.stderr || err.message).trim().split('\n')[0]}`)
  }
}

/** The synchronous form, for the kill path (a signal handler cannot wait). Never throws. */
export function runAsRootSync(priv: Exclude<Privilege, null>, argv: string[]): void {
  const [file, ...args] = asRoot(priv, argv)
  try {
    execFileSync(file as string, args, { env: PRIV_ENV, stdio: 'ignore', timeout: 10_000 })
  } catch {
    // already gone, or nothing matched
  }
}
