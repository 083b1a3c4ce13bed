import type { LoadedManifest } from '../manifest/load.js'
import { ManifestSchema } from '../manifest/schema.js'
import type { ResolvedPanel } from '../panel/resolve.js'
import { deriveSeed } from '../plan/order.js'
import { buildPlan } from '../plan/plan.js'
import type { Plan } from '../plan/schema.js'
import type { Decision } from './schema.js'

export interface ConfirmationSelection {
  /** Instances to rerun, in priority order (signal order; driving blocks first). */
  instances: string[]
  /** Cells to rerun: the baseline and treatment of every breached comparison. */
  cells: string[]
  /** Ids of the signals the rerun must confirm. */
  signals: string[]
  /** More blocks were affected than `maxBlocks`. */
  capped: boolean
}

/**
 * The blocks a confirmation reruns: for each unconfirmed signal of a breached comparison, its driving
 * blocks (regression-direction discordant pairs, or blocks over the ratio threshold, largest excess
 * first), then its opposing discordant blocks, so the rerun can test both directions. Blocks on
 * unstable instances are left out (they can never confirm, F07). At most `maxBlocks` instances.
 * Pure.
 */
export function selectConfirmation(d: Decision, maxBlocks: number): ConfirmationSelection {
  const breached = new Set(d.comparisons.filter((v) => v.status === 'breach').map((v) => v.key))
  const live = d.signals.filter((s) => s.state === 'unconfirmed' && breached.has(s.key))
  const unstable = new Set(d.unstable_instances)
  const wanted: string[] = []
  const seen = new Set<string>()
  for (const s of live) {
    for (const id of [...s.instances.driving, ...s.instances.opposing]) {
      if (unstable.has(id) || seen.has(id)) continue
      seen.add(id)
      wanted.push(id)
    }
  }
  const cells: string[] = []
  for (const s of live) for (const c of [s.baseline, s.treatment]) if (!cells.includes(c)) cells.push(c)
  return {
    instances: wanted.slice(0, maxBlocks),
    cells,
    signals: live.map((s) => s.id),
    capped: wanted.length > maxBlocks,
  }
}

/** The order seed of confirmation round `round`: derived from the first run's seed, never reused. */
export function confirmationSeed(originalSeed: number, round: number): number {
  return deriveSeed(originalSeed, 'confirmation', round) >>> 0
}

/**
 * The rerun plan: only the selected blocks, only the breached comparisons' cells, cells interleaved
 * within each shard (buildPlan lists legs shard-major), a new order seed, `kind: confirmation` and
 * the round (its artifacts are `hw-<experiment>-confirm<round>-…`, so nothing collides with the first run).
 * Rebuilt from the first run's plan.json, which carries the manifest with its defaults filled in.
 */
export function buildConfirmationPlan(original: Plan, selection: ConfirmationSelection, round = 1): Plan {
  const { loaded, panel } = fromPlan(original)
  // Keep the original panel order so shards are reproducible; buildPlan reshuffles with the new seed.
  const wanted = new Set(selection.instances)
  return buildPlan(loaded, panel, {
    instances: original.panel.instances.filter((i) => wanted.has(i)),
    cells: selection.cells,
    kind: 'confirmation',
    round,
    seed: confirmationSeed(original.seed, round),
    manifestFile: original.manifest_file,
    callKey: original.call_key,
  })
}

/** The manifest and panel a plan was built from, as buildPlan needs them. */
export function fromPlan(plan: Plan): { loaded: LoadedManifest; panel: ResolvedPanel } {
  const manifest = ManifestSchema.parse(plan.manifest)
  return {
    loaded: {
      file: plan.manifest_file,
      dir: '.',
      sha256: plan.manifest_sha256,
      manifest,
      configHashes: Object.fromEntries(plan.cells.map((c) => [c.id, c.config_hash])),
    },
    panel: {
      source: manifest.panel.source,
      tasksDir: null,
      instances: plan.panel.instances,
      quarantine: plan.panel.quarantine,
    },
  }
}
