import type { LoadedManifest } from '../manifest/load.js'
import { ManifestSchema } from '../manifest/schema.js'
import type { ResolvedPanel } from '../panel/resolve.js'
import { deriveSeed } from '../plan/order.js'
import { buildPlan } from '../plan/plan.js'
import type { Plan } from '../plan/schema.js'
import { createRng } from '../stats/index.js'
import type { ConfirmationDesign } from './designs/contract.js'
import { DEFAULT_DESIGN } from './designs/registry.js'
import type { PairedBlock } from './pairs.js'
import type { Decision, Signal } from './schema.js'

export interface ConfirmationSelection {
  /** Instances to rerun, in priority order (signal order; driving blocks first). */
  instances: string[]
  /** Cells to rerun: the baseline and treatment of every breached comparison. */
  cells: string[]
  /** Ids of the signals the rerun must confirm. */
  signals: string[]
  /** More blocks were affected than `maxBlocks`. */
  capped: boolean
  /** The blocks drawn at random (ratio signals are tested on these only). */
  sample: string[]
  /** The estimation half of the sample (held out of the decision). */
  estimate: string[]
}

export interface SelectionSource {
  /** The first run's pairs of a signal's comparison (competitive or self). */
  pairs: (s: Signal) => readonly PairedBlock[]
  /** Seed of the random sample (derived from the first run's seed: `confirmationSampleSeed`). */
  seed: number
  design?: ConfirmationDesign
  /** confirmation.trials (absent: the design's default). */
  trials?: number
}

/**
 * The blocks a confirmation reruns, as the confirmation design chooses them from the first run
 * (detect/designs/rerun-exact.ts): a seeded random sample of the panel for ratio signals, then the
 * discordant blocks of resolve-rate signals (driving first, unstable instances left out), at most
 * `maxBlocks` instances. Pure (the sample is a function of `source.seed`). Without a `source` no
 * pool is known, so ratio signals get no sample (their rerun would be inconclusive): callers that
 * confirm ratios pass the first run's pairs.
 */
export function selectConfirmation(
  d: Decision,
  maxBlocks: number,
  source: SelectionSource = { pairs: () => [], seed: 0 },
): ConfirmationSelection {
  const breached = new Set(d.comparisons.filter((v) => v.status === 'breach').map((v) => v.key))
  const live = d.signals.filter((s) => s.state === 'unconfirmed' && breached.has(s.key))
  const design = source.design ?? DEFAULT_DESIGN
  const chosen = design.select(
    {
      signals: live,
      pairs: source.pairs,
      unstable: new Set(d.unstable_instances),
      maxBlocks,
      ...(source.trials !== undefined ? { trials: source.trials } : {}),
    },
    createRng(source.seed >>> 0),
  )
  const cells: string[] = []
  for (const s of live) for (const c of [s.baseline, s.treatment]) if (!cells.includes(c)) cells.push(c)
  return {
    instances: chosen.instances,
    cells,
    signals: live.map((s) => s.id),
    capped: chosen.capped,
    sample: chosen.sample,
    estimate: chosen.estimate,
  }
}

/** The seed of a confirmation round's random sample: derived from the first run's seed, never reused. */
export function confirmationSampleSeed(originalSeed: number, round: number): number {
  return deriveSeed(originalSeed, 'confirmation-sample', round) >>> 0
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
  const { loaded: first, panel } = fromPlan(original)
  // The rerun runs each block confirmation.trials times per cell (the design's planned trials otherwise).
  const trials = first.manifest.confirmation.trials ?? DEFAULT_DESIGN.trials
  // Always the rerun's own count: the design selected for it (a trial split needs two or more).
  const loaded = { ...first, manifest: { ...first.manifest, trials } }
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
