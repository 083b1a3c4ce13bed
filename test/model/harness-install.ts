import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Shared harness cache, as the run stage uses it: `$HW_CACHE_DIR` or ~/.cache/harness-watch/harnesses. */
export function cacheDir(): string {
  return process.env.HW_CACHE_DIR || path.join(os.homedir(), '.cache', 'harness-watch', 'harnesses')
}

/**
 * `<cache>/<pkg with / as __>@<version>`, installed with npm once (HOME pointed at a scratch folder
 * because OpenCode's postinstall writes into HOME). Returns the install root, or a reason to skip when
 * npm cannot install it (no registry).
 */
export async function ensureNpmPackage(
  pkg: string,
  version: string,
  opts: { ignoreScripts?: boolean } = {},
): Promise<{ root: string } | { skip: string }> {
  const root = path.join(cacheDir(), `${pkg.replace(/\//g, '__')}@${version}`)
  const manifest = path.join(root, 'node_modules', pkg, 'package.json')
  if (installedVersion(manifest) === version) return { root }
  mkdirSync(root, { recursive: true })
  const scratchHome = path.join(root, '.install-home')
  mkdirSync(scratchHome, { recursive: true })
  try {
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefix',
        root,
        ...(opts.ignoreScripts ? ['--ignore-scripts'] : []),
        `${pkg}@${version}`,
      ],
      {
        env: { ...process.env, HOME: scratchHome, npm_config_cache: path.join(cacheDir(), '.npm') },
        timeout: 600_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    )
  } catch (e) {
    return { skip: `cannot install ${pkg}@${version} from npm: ${(e as Error).message.split('\n')[0]}` }
  }
  return installedVersion(manifest) === version
    ? { root }
    : { skip: `${pkg}@${version} did not install into ${root}` }
}

function installedVersion(manifest: string): string | null {
  if (!existsSync(manifest)) return null
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? null
  } catch {
    return null
  }
}

/**
 * A fresh folder for one real harness run (`<tmpdir>/<prefix>XXXXXX`) holding an empty `home/` and
 * `tmp/`, and the isolated base environment the harness gets, as the run stage builds it: a fixed PATH,
 * that HOME with the XDG folders inside it, that TMPDIR, C.UTF-8, UTC, no colour, CI.
 */
export function isolatedHarnessRun(prefix: string): { home: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  const home = path.join(dir, 'home')
  mkdirSync(home)
  mkdirSync(path.join(dir, 'tmp'))
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    SHELL: '/bin/bash',
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    TMPDIR: path.join(dir, 'tmp'),
    NO_COLOR: '1',
    CI: '1',
  }
  return { home, env }
}
