import path from 'node:path'
import type { Manifest } from './schema.js'

/**
 * Paths a command cell's `command` names that the sandbox will not show it. Under the isolating
 * backend a harness sees its install, its workspace, system folders and `sandbox.read_only` only:
 * homes are empty, so a script in the repository (`node "$GITHUB_WORKSPACE/bin/agent.js"`) fails with
 * "Cannot find module" and every cell is classified harness_startup. Paths are found as
 * `$GITHUB_WORKSPACE/…` / `${GITHUB_WORKSPACE}/…` (resolved against `workspace`), `$HOME/…`, and
 * absolute paths outside the system folders. One warning per cell and folder, naming the folder and
 * the `sandbox.read_only` entry (relative to the manifest file) to add. Pure.
 */
export function sandboxPathWarnings(m: Manifest, manifestDir: string, workspace: string): string[] {
  if (m.sandbox.backend === 'none' || m.sandbox.backend === 'env-only') return []
  const exposed = m.sandbox.read_only.map((p) => path.resolve(manifestDir, p))
  const warnings: string[] = []
  for (const cell of m.cells) {
    if (cell.harness !== 'command') continue
    const command = (cell.config as { command?: unknown }).command
    if (typeof command !== 'string') continue
    const seen = new Set<string>()
    for (const named of namedPaths(command, workspace)) {
      if (named.home) {
        warnings.push(
          `cell ${cell.id}: its command reads ${named.text}, but the sandbox gives the harness an empty home; move it into the repository and add its folder to sandbox.read_only`,
        )
        continue
      }
      if (SYSTEM.some((d) => within(named.abs, d))) continue
      if (exposed.some((d) => within(named.abs, d))) continue
      const folder = topFolder(named.abs, workspace)
      if (seen.has(folder)) continue
      seen.add(folder)
      const entry = path.relative(manifestDir, folder) || '.'
      warnings.push(
        `cell ${cell.id}: its command reads ${named.text}, outside what the sandbox shows a harness (its install, its workspace, system folders and sandbox.read_only): add ${JSON.stringify(entry)} to sandbox.read_only (the folder ${folder}, relative to this manifest)`,
      )
    }
  }
  return warnings
}

/** System folders every sandbox shows read-only. */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/etc', '/opt', '/dev', '/proc']

function within(p: string, dir: string): boolean {
  return p === dir || p.startsWith(`${dir}${path.sep}`)
}

/** The folder to expose: the first folder below the workspace (or the file's own folder elsewhere). */
function topFolder(abs: string, workspace: string): string {
  if (within(abs, workspace) && abs !== workspace) {
    const first = path.relative(workspace, abs).split(path.sep)[0] as string
    const candidate = path.join(workspace, first)
    return candidate === abs ? path.dirname(abs) : candidate
  }
  return path.dirname(abs)
}

interface NamedPath {
  text: string
  abs: string
  home: boolean
}

function namedPaths(command: string, workspace: string): NamedPath[] {
  const out: NamedPath[] = []
  const re =
    /(\$\{?GITHUB_WORKSPACE\}?|\$\{?HOME\}?|~(?=\/))(\/[^\s"'`;|&)]*)|(?<![\w.{$/-])(\/[A-Za-z0-9_.-][^\s"'`;|&)]*)/g
  for (const m of command.matchAll(re)) {
    if (m[1]) {
      const home = !/GITHUB_WORKSPACE/.test(m[1])
      out.push({ text: `${m[1]}${m[2]}`, abs: path.join(workspace, m[2] as string), home })
    } else if (m[3]) out.push({ text: m[3], abs: path.normalize(m[3]), home: false })
  }
  return out
}
