import { canonicalJson, sha256 } from '../util/json.js'
import type { Cell } from './schema.js'

/**
 * Several models in one experiment: which cells run the same harness configuration on different models.
 * Cells are declared harness × model one by one; two cells on different models are the same harness
 * when harness, version and config (args, env, pass_env, files, command) are equal — the wire API may
 * differ with the route and is left out. The harness × model interaction compares such cells.
 */

/** sha256 of what makes a harness configuration, across models (harness, version, config; no API). */
export function harnessKey(cell: Pick<Cell, 'harness' | 'version' | 'config'>): string {
  return sha256(canonicalJson({ harness: cell.harness, version: cell.version, config: cell.config }))
}
