import type { EnvironmentStamp } from '../records/comparison.js'

/** At most this many environments are spelled out in a header; the rest are counted. */
const SHOWN = 4

/**
 * The Environment lines of a report header (plain text; each renderer escapes it): per distinct
 * container environment the runtime, image reference and id, resources and each phase's network, with
 * how many final attempts ran in it. Pure.
 */
export function environmentLines(rows: EnvironmentStamp[]): string[] {
  const out = rows.slice(0, SHOWN).map((r) => {
    const id = r.image_id.replace(/^sha256:/, '').slice(0, 12)
    const storage =
      r.resources.storage_mb === null
        ? 'storage not limited'
        : `storage ${r.resources.storage_mb} MB${r.resources.storage_enforced === false ? ' (not enforced)' : ''}`
    const where =
      r.verifier_container === 'agent'
        ? ", in the agent's container"
        : r.verifier_container === 'fresh'
          ? ', in a fresh container'
          : ''
    const verifier =
      r.network.verifier === null ? 'no verifier container' : `verifier ${r.network.verifier}${where}`
    return (
      `${r.runtime}; image ${r.image_ref} (id ${id}); ` +
      `cpus ${r.resources.cpus}, memory ${r.resources.memory_mb} MB, pids ${r.resources.pids}, ${storage}; ` +
      `network: agent ${r.network.agent}, ${verifier}; ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}`
    )
  })
  const rest = rows.slice(SHOWN)
  if (rest.length > 0) {
    const n = rest.reduce((s, r) => s + r.attempts, 0)
    out.push(`${rest.length} more environment(s), ${n} attempt(s): see comparison.json stamp.environments`)
  }
  return out
}
