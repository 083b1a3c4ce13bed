import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

let cachedRoot: string | undefined

/**
 * The harness-watch package root (the folder with its package.json, manifests/ and dist/), found by
 * walking up from this module. Works from src/ (tests, tsx), from dist/ (the action) and from an npm
 * install (the CLI).
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const pkg = path.join(dir, 'package.json')
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'harness-watch') {
          cachedRoot = dir
          return dir
        }
      } catch {
        // not ours; keep walking
      }
    }
    const up = path.dirname(dir)
    if (up === dir) throw new Error('cannot find the harness-watch package root')
    dir = up
  }
}

/** Folder of the built-in panels (manifests/panels/<name>). */
export function builtinPanelsDir(): string {
  return path.join(packageRoot(), 'manifests', 'panels')
}

/**
 * An instance id as a single safe path segment. Ids are validated by the manifest schema (no "/",
 * no ".."); this is a second guard for ids read from result files.
 */
export function safeSegment(id: string): string {
  const s = id.replace(/[^A-Za-z0-9._+@=-]/g, '_')
  if (s === '' || s === '.' || s === '..' || s.startsWith('.')) return `_${s}`
  return s
}

/**
 * A path (or `path:line:column`) as shown in messages: unchanged when it holds only characters that
 * cannot be misread (letters, digits, `/ . _ - @ + , = : ~`), else in double quotes (JSON escaping),
 * so a path with spaces reads as one token: `"/tmp/trial m/exp.yml:9:3"`.
 */
export function quotePath(p: string): string {
  return /^[\w./@+,=:~-]+$/.test(p) ? p : JSON.stringify(p)
}
