import { existsSync, realpathSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** How to start npm with this process's own Node, and the folder a sandbox must expose read-only for it. */
export interface NpmCli {
  command: string
  /** Arguments before npm's own (the npm-cli.js entry), empty when `npm` is run from PATH. */
  args: string[]
  /** The npm package folder (e.g. /usr/lib/node_modules/npm), or null when npm is run from PATH. */
  root: string | null
}

/**
 * npm as shipped with the running Node: `<prefix>/lib/node_modules/npm/bin/npm-cli.js` next to
 * `process.execPath` (Linux and macOS layouts), else the real file behind `npm` on `PATH` when it is
 * npm-cli.js, else plain `npm` from PATH. Run with `process.execPath`, so a sandbox only needs Node's
 * folder and the npm package (read-only), not the user's PATH.
 */
export function npmCli(pathVar: string | undefined = process.env.PATH): NpmCli {
  const prefix = path.dirname(path.dirname(process.execPath))
  const candidates = [path.join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js')]
  for (const dir of (pathVar ?? '').split(path.delimiter).filter(Boolean)) {
    const npm = path.join(dir, 'npm')
    if (!existsSync(npm)) continue
    try {
      candidates.push(realpathSync(npm))
    } catch {
      // a dangling link
    }
  }
  const cli = candidates.find((c) => path.basename(c) === 'npm-cli.js' && existsSync(c))
  if (!cli) return { command: 'npm', args: [], root: null }
  return { command: process.execPath, args: [cli], root: path.dirname(path.dirname(cli)) }
}

/** Folders a sandbox hides (every home, temporary folders). */
const hiddenRoots = (): string[] =>
  ['/home', '/root', os.homedir(), '/tmp', '/var/tmp', '/dev/shm'].filter((r) => r !== '/')

/** Inside a folder a sandbox hides: a tool living there must be exposed. */
function hidden(p: string): boolean {
  return hiddenRoots().some((r) => p === r || p.startsWith(`${r}/`))
}

/**
 * The folder to expose read-only for a Python interpreter (`python3` or a path) when it lives where a
 * sandbox hides files (pyenv or a user install under the home): `<prefix>` of its real executable
 * (`<prefix>/bin/python3`). Empty for a system Python (already visible, read-only), when not found, or
 * when the prefix would be `/`, a whole home, `/home` or a temporary folder.
 */
export function pythonRoots(python: string, pathVar: string | undefined = process.env.PATH): string[] {
  const found = resolveOnPath(python, pathVar)
  if (!path.isAbsolute(found)) return []
  let real: string
  try {
    real = realpathSync(found)
  } catch {
    return []
  }
  const prefix = path.dirname(path.dirname(real))
  // Never a whole home, /home or /tmp (an interpreter kept directly in one): that would undo the hiding.
  if (prefix === '/' || hiddenRoots().includes(prefix)) return []
  return [found, real].some(hidden) ? [prefix] : []
}

/** `name`'s absolute path from the first `PATH` folder holding it; `name` itself when absolute or not found. */
export function resolveOnPath(name: string, pathVar: string | undefined = process.env.PATH): string {
  if (path.isAbsolute(name) || name.includes('/')) return name
  const dirs = (pathVar ?? '').split(path.delimiter).filter(Boolean)
  return dirs.map((d) => path.join(d, name)).find((f) => existsSync(f)) ?? name
}
