import type { LoadedManifest } from '../manifest/load.js'
import { cellApi, cellRoute, isMultiModel, treatmentIds } from '../manifest/schema.js'
import type { ResolvedPanel } from '../panel/resolve.js'
import { HwError } from '../util/errors.js'
import { deriveSeed, seededShuffle } from './order.js'
import { CallKey, type Leg, PLAN_SCHEMA_VERSION, type Plan } from './schema.js'

/** GitHub Actions' limit: 256 jobs per matrix (docs.github.com/en/actions/reference/limits). */
export const MAX_LEGS = 256

export interface PlanOptions {
  /** Overrides the manifest's seed. */
  seed?: number
  /** Restrict to these cells (e.g. only harnesses a PR changed); an empty result plans zero legs. */
  cells?: string[]
  /** Restrict to these instances (confirmation: only the affected blocks). */
  instances?: string[]
  kind?: Plan['kind']
  round?: number
  /** Path written into plan.json as the manifest's location (as the user gave it). */
  manifestFile?: string
  /** The workflow call's key (CallKey): artifacts are `hw-<experiment>-<key>-…`; default none. */
  callKey?: string
}

/**
 * Turn a validated manifest and its resolved panel into a plan: cells × shards legs, each with its
 * instances in seeded order, and the matrix `{include:[{leg, cell, shard, artifact}]}`.
 *
 * Shards partition a seeded shuffle of the panel; every cell gets the same shards, and within a shard
 * every cell runs the same seeded order, so the cells of a block run at about the same time.
 * Legs are listed shard-major (s0: A, B; s1: A, B…) so a `max-parallel` limit interleaves cells.
 * More than 256 legs: a shard *count* is reduced to fit (packed, with a note); a shard *size* that
 * cannot fit, or more than 256 cells, throws HwError `plan_too_large`.
 * Pure: the same inputs give the same plan, byte for byte once serialised.
 */
export function buildPlan(loaded: LoadedManifest, panel: ResolvedPanel, opts: PlanOptions = {}): Plan {
  const m = loaded.manifest
  const seed = opts.seed ?? m.seed
  const round = opts.round ?? 0
  const kind = opts.kind ?? 'plan'
  const cells = opts.cells ? m.cells.filter((c) => opts.cells?.includes(c.id)) : m.cells
  if (opts.cells) {
    const unknown = opts.cells.filter((id) => !m.cells.some((c) => c.id === id))
    if (unknown.length > 0) {
      throw new HwError('plan_invalid', `--cells names unknown cells: ${unknown.join(', ')}`, {
        help: `cells in this manifest: ${m.cells.map((c) => c.id).join(', ')}`,
      })
    }
  }
  let instances = panel.instances
  if (opts.instances) {
    const known = new Set(instances)
    const unknown = opts.instances.filter((id) => !known.has(id))
    if (unknown.length > 0) {
      throw new HwError('plan_invalid', `instances not in the panel: ${unknown.join(', ')}`)
    }
    const wanted = new Set(opts.instances)
    instances = instances.filter((id) => wanted.has(id))
  }

  const n = instances.length
  let count: number
  let packed = false
  let note: string | null = null
  if ('count' in m.shards) {
    count = Math.min(m.shards.count, n)
    if (m.shards.count > n && n > 0)
      note = `shards: {count: ${m.shards.count}} capped at the panel's ${n} instances`
  } else {
    count = Math.ceil(n / m.shards.size)
  }
  if (cells.length > MAX_LEGS) {
    throw new HwError('plan_too_large', `${cells.length} cells exceed the ${MAX_LEGS}-job matrix limit`, {
      help: 'split the experiment into several manifests',
    })
  }
  if (cells.length * count > MAX_LEGS) {
    if ('size' in m.shards) {
      throw new HwError(
        'plan_too_large',
        `${cells.length} cells × ${count} shards (size ${m.shards.size}) = ${cells.length * count} legs exceed the ${MAX_LEGS}-job matrix limit`,
        {
          help: `use shards: {size: ${Math.ceil(n / Math.floor(MAX_LEGS / cells.length))}} or more, or shards: {count: N}`,
        },
      )
    }
    const fit = Math.floor(MAX_LEGS / cells.length)
    note = `${cells.length} cells × ${count} shards = ${cells.length * count} legs exceed ${MAX_LEGS}; packed into ${fit} shards`
    count = fit
    packed = true
  }
  if (cells.length === 0 || n === 0) count = 0

  const shuffled = seededShuffle(instances, deriveSeed(seed, m.experiment.id, 'panel', round))
  const shardLists: string[][] = []
  for (let s = 0; s < count; s++) {
    // Balanced contiguous split: shard sizes differ by at most one.
    const lo = Math.floor((s * n) / count)
    const hi = Math.floor(((s + 1) * n) / count)
    shardLists.push(
      seededShuffle(shuffled.slice(lo, hi), deriveSeed(seed, m.experiment.id, 'shard', s, round)),
    )
  }

  const callKey = CallKey.parse(opts.callKey ?? '')
  const base = callKey ? `hw-${m.experiment.id}-${callKey}` : `hw-${m.experiment.id}`
  const prefix = round > 0 ? `${base}-confirm${round}` : base
  const legs: Leg[] = []
  for (let s = 0; s < count; s++) {
    for (const cell of cells) {
      legs.push({
        leg: `${cell.id}-s${s}`,
        cell: cell.id,
        shard: s,
        artifact: artifactName(`${prefix}-${cell.id}-${s}`),
        instances: shardLists[s] ?? [],
      })
    }
  }
  const names = new Set<string>()
  for (const leg of legs) {
    if (names.has(leg.artifact)) {
      throw new HwError('plan_invalid', `two legs would upload the same artifact "${leg.artifact}"`, {
        help: 'cell ids must stay distinct after sanitising',
      })
    }
    names.add(leg.artifact)
  }

  const included = new Set(instances)
  return {
    schema_version: PLAN_SCHEMA_VERSION,
    kind,
    experiment_id: m.experiment.id,
    call_key: callKey,
    manifest_file: opts.manifestFile ?? loaded.file,
    manifest_sha256: loaded.sha256,
    manifest: m as unknown as Record<string, unknown>,
    seed,
    round,
    panel: { instances, quarantine: panel.quarantine.filter((q) => included.has(q)) },
    cells: cells.map((c) => ({
      id: c.id,
      harness: c.harness,
      version: c.version,
      api: cellApi(c, cellRoute(m, c)),
      ...(isMultiModel(m) ? { model: c.model ?? null, model_id: cellRoute(m, c).id } : {}),
      config_hash: loaded.configHashes[c.id] ?? '',
    })),
    baseline: m.baseline,
    treatments: treatmentIds(m),
    trials: m.trials,
    shards: { requested: m.shards, count, packed, note },
    legs,
    matrix: { include: legs.map(({ instances: _, ...entry }) => entry) },
  }
}

/**
 * An artifact name upload-artifact accepts: no `" : < > | * ? \ /` or control characters, at most
 * 200 characters.
 */
export function artifactName(raw: string): string {
  return raw.replace(/[":<>|*?\\/\r\n\u0000-\u001f]/g, '_').slice(0, 200)
}
