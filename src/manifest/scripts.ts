import { existsSync } from 'node:fs'
import path from 'node:path'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import type { Manifest } from './schema.js'

/** A script a setup or verifier command names that is not there. */
export interface MissingScript {
  path: readonly PropertyKey[]
  message: string
}

const SCRIPT = /\.(py|sh|bash|js|mjs|cjs|ts|rb|pl)$/

/**
 * Scripts named by `benchmark.setup` and `benchmark.verifier.command` that do not exist. Both run with
 * `bash -c` from the current working directory — the repository root in GitHub Actions (the
 * workspace), not the manifest's folder — so their relative paths are checked against `cwd`. A word
 * is taken for a script path when it ends in a script extension or starts with ./ or ../, and holds no
 * {placeholder} or $variable. One problem per missing script, with the field's path for locating.
 */
export function missingScripts(m: Manifest, cwd: string): MissingScript[] {
  const out: MissingScript[] = []
  const check = (command: string | undefined, at: readonly PropertyKey[]) => {
    if (!command) return
    for (const raw of command.split(/\s+/)) {
      const word = raw.replace(/^["']|["';]$/g, '')
      if (!word || /[{}$`*?]/.test(word) || word.startsWith('-')) continue
      if (!SCRIPT.test(word) && !/^\.\.?\//.test(word)) continue
      const abs = path.resolve(cwd, word)
      if (existsSync(abs)) continue
      out.push({
        path: at,
        message: `${word} does not exist (${abs}): setup and verifier commands run from the current folder — the repository root in GitHub Actions — not from the manifest's folder`,
      })
    }
  }
  check(m.benchmark.setup, ['benchmark', 'setup'])
  check(m.benchmark.verifier.command, ['benchmark', 'verifier', 'command'])
  return out
}

/**
 * Throw `manifest_invalid` naming every missing setup or verifier script at its line (validate, plan).
 * `locate` is the loaded manifest's locator (`file:line:column` of a field).
 */
export function assertScriptsExist(
  m: Manifest,
  file: string,
  cwd: string,
  locate?: (p: readonly PropertyKey[]) => string,
): void {
  const missing = missingScripts(m, cwd)
  if (missing.length === 0) return
  throw new HwError('manifest_invalid', `${quotePath(file)}: ${missing.length} script(s) not found`, {
    details: missing.map((x) => `${locate ? `${locate(x.path)} ` : ''}${x.path.join('.')}: ${x.message}`),
    help: 'run from the repository root, or fix the path (relative to the repository root, not to the manifest)',
  })
}
