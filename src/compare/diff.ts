import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { betweenRuns } from '../capability/diff.js'
import { zodMessage } from '../ingest/jsonl.js'
import { type Comparison, ComparisonSchema, type InstanceCell } from '../records/comparison.js'
import { ScorecardDiffSchema } from '../records/scorecard.js'
import { mcnemarExact } from '../stats/index.js'
import { HwError } from '../util/errors.js'
import { diffScorecards } from './scorecard.js'

export const DIFF_SCHEMA_VERSION = 1

const Nullable = z.number().nullable()
const ResourceDelta = z.strictObject({
  n: z.number().int().nonnegative(),
  old_mean: Nullable,
  new_mean: Nullable,
  delta_mean: Nullable.describe('new − old, per instance'),
  ratio_of_means: Nullable.describe('Σnew / Σold'),
  reason: z.string().nullable(),
})

export const CellDiffSchema = z.strictObject({
  cell: z.string(),
  in_old: z.boolean(),
  in_new: z.boolean(),
  identity: z.strictObject({
    old_version: z.string().nullable(),
    new_version: z.string().nullable(),
    old_config_hash: z.string().nullable(),
    new_config_hash: z.string().nullable(),
    changed: z.boolean(),
  }),
  n: z.number().int().nonnegative().describe('instances graded (resolved/unresolved) in both runs'),
  regressions: z.array(z.string()).describe('resolved in the old run, unresolved in the new'),
  fixes: z.array(z.string()).describe('unresolved in the old run, resolved in the new'),
  old_rate: Nullable,
  new_rate: Nullable,
  delta_pp: Nullable,
  mcnemar: z
    .strictObject({
      p_two_sided: Nullable,
      p_one_sided: Nullable,
      p_mid: Nullable,
      note: z.string().nullable(),
    })
    .describe('exact McNemar over regressions vs fixes; p null (with a note) when n = 0: no blocks, no test'),
  spend_usd: ResourceDelta,
  proxy_requests: ResourceDelta,
})
export type CellDiff = z.infer<typeof CellDiffSchema>

export const ComparisonDiffSchema = z.strictObject({
  schema_version: z.literal(DIFF_SCHEMA_VERSION),
  old: z.strictObject({
    experiment_id: z.string(),
    run_id: z.string().nullable(),
    round: z.number(),
    started_at: z.string().nullable(),
  }),
  new: z.strictObject({
    experiment_id: z.string(),
    run_id: z.string().nullable(),
    round: z.number(),
    started_at: z.string().nullable(),
  }),
  instances: z.strictObject({
    common: z.number().int(),
    only_old: z.array(z.string()),
    only_new: z.array(z.string()),
  }),
  cells: z.array(CellDiffSchema),
  notes: z.array(z.string()),
  scorecards: z.array(ScorecardDiffSchema).optional(),
  capabilities: z
    .array(z.string())
    .optional()
    .describe('one line per cell whose capabilities changed (both runs carry capabilities)'),
})
export type ComparisonDiff = z.infer<typeof ComparisonDiffSchema>

/** Read and validate a comparison.json; throws HwError `comparison_invalid` / `comparison_unreadable`. */
export async function readComparison(file: string): Promise<Comparison> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('comparison_unreadable', `cannot read: ${(e as NodeJS.ErrnoException).code ?? e}`, {
      where: file,
      help: 'pass a comparison.json written by `harness-watch aggregate` or `compare`',
    })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    throw new HwError('comparison_invalid', `not valid JSON: ${(e as Error).message}`, { where: file })
  }
  const parsed = ComparisonSchema.safeParse(json)
  if (!parsed.success) {
    throw new HwError('comparison_invalid', zodMessage(parsed.error), {
      where: file,
      help: 'both files must be comparison.json of the same schema_version',
    })
  }
  return parsed.data
}

export interface DiffOptions {
  /** Diff comparisons of different experiments, or with no instance in common (a warning note instead of an error). */
  allowDifferentExperiments?: boolean
}

/**
 * Self-regression between two runs (pure): for every cell present in either comparison, the instances
 * it resolved in the old run and not in the new (regressions) and the reverse (fixes), over instances
 * graded in both; the paired resolve-rate change with exact McNemar (p null when no instance is graded
 * in both); and the spend and proxy-request change over instances with both values. Cells are matched
 * by id; a changed version or config hash is flagged (the runs then compare two different cells).
 * Throws HwError `diff_unrelated` when the experiment ids differ or no instance is in both runs, unless
 * `allowDifferentExperiments` (then a note says so; the CLI prints it as a warning).
 */
export function diffComparisons(oldC: Comparison, newC: Comparison, opts: DiffOptions = {}): ComparisonDiff {
  const oldRows = new Map(oldC.instances.map((r) => [r.instance, r]))
  const newRows = new Map(newC.instances.map((r) => [r.instance, r]))
  const common = [...oldRows.keys()].filter((k) => newRows.has(k)).sort()
  const onlyOld = [...oldRows.keys()].filter((k) => !newRows.has(k)).sort()
  const onlyNew = [...newRows.keys()].filter((k) => !oldRows.has(k)).sort()
  const cellIds = [...new Set([...oldC.cells.map((c) => c.id), ...newC.cells.map((c) => c.id)])].sort()
  const notes = unrelated(oldC, newC, common.length, opts)
  const cells = cellIds.map((id) => {
    const oc = oldC.cells.find((c) => c.id === id)
    const nc = newC.cells.find((c) => c.id === id)
    const graded = (x: InstanceCell | undefined) =>
      x !== undefined && (x.outcome === 'resolved' || x.outcome === 'unresolved')
    const regressions: string[] = []
    const fixes: string[] = []
    let n = 0
    let oldResolved = 0
    let newResolved = 0
    const spend: Array<[number, number]> = []
    const reqs: Array<[number, number]> = []
    for (const inst of common) {
      const o = oldRows.get(inst)?.cells[id]
      const w = newRows.get(inst)?.cells[id]
      if (!o || !w) continue
      if (graded(o) && graded(w)) {
        n++
        const ro = o.outcome === 'resolved'
        const rn = w.outcome === 'resolved'
        if (ro) oldResolved++
        if (rn) newResolved++
        if (ro && !rn) regressions.push(inst)
        if (!ro && rn) fixes.push(inst)
      }
      if (o.coverage === 'complete' && w.coverage === 'complete') {
        if (o.spend_usd !== null && w.spend_usd !== null) spend.push([o.spend_usd, w.spend_usd])
        if (o.proxy_requests !== null && w.proxy_requests !== null)
          reqs.push([o.proxy_requests, w.proxy_requests])
      }
    }
    const mc = n > 0 ? mcnemarExact(regressions.length, fixes.length) : null
    const oldRate = n > 0 ? oldResolved / n : null
    const newRate = n > 0 ? newResolved / n : null
    const changed =
      oc !== undefined &&
      nc !== undefined &&
      (oc.version_declared !== nc.version_declared || oc.config_hash !== nc.config_hash)
    return {
      cell: id,
      in_old: oc !== undefined,
      in_new: nc !== undefined,
      identity: {
        old_version: oc?.version_declared ?? null,
        new_version: nc?.version_declared ?? null,
        old_config_hash: oc?.config_hash ?? null,
        new_config_hash: nc?.config_hash ?? null,
        changed,
      },
      n,
      regressions,
      fixes,
      old_rate: oldRate,
      new_rate: newRate,
      delta_pp: oldRate !== null && newRate !== null ? (newRate - oldRate) * 100 : null,
      mcnemar: mc
        ? {
            p_two_sided: mc.pTwoSided,
            p_one_sided: mc.pTreatmentWorse,
            p_mid: mc.pMidTwoSided,
            note: mc.note,
          }
        : { p_two_sided: null, p_one_sided: null, p_mid: null, note: 'no instance graded in both runs' },
      spend_usd: resourceDelta(spend),
      proxy_requests: resourceDelta(reqs),
    }
  })
  return {
    schema_version: DIFF_SCHEMA_VERSION,
    old: {
      experiment_id: oldC.experiment_id,
      run_id: oldC.run_id,
      round: oldC.round,
      started_at: oldC.stamp.started_at,
    },
    new: {
      experiment_id: newC.experiment_id,
      run_id: newC.run_id,
      round: newC.round,
      started_at: newC.stamp.started_at,
    },
    instances: { common: common.length, only_old: onlyOld, only_new: onlyNew },
    cells,
    notes,
    ...(oldC.scorecard && newC.scorecard
      ? { scorecards: diffScorecards(oldC.scorecard, newC.scorecard) }
      : {}),
    ...(oldC.capabilities && newC.capabilities
      ? { capabilities: betweenRuns(oldC.capabilities.cells, newC.capabilities.cells) }
      : {}),
  }
}

/**
 * Two comparisons of different experiments (or with no instance in common) are not two runs of one
 * thing: an error, or with `allowDifferentExperiments` the warning notes.
 */
function unrelated(oldC: Comparison, newC: Comparison, common: number, opts: DiffOptions): string[] {
  const problems: string[] = []
  if (oldC.experiment_id !== newC.experiment_id) {
    problems.push(
      `different experiments: old ${oldC.experiment_id} (manifest ${short(oldC.stamp.manifest_sha256)}), new ${newC.experiment_id} (manifest ${short(newC.stamp.manifest_sha256)})`,
    )
  }
  if (common === 0) {
    problems.push(
      `no instance in both runs (old ${oldC.instances.length}, new ${newC.instances.length}): nothing to pair`,
    )
  }
  if (problems.length === 0) return []
  if (opts.allowDifferentExperiments)
    return problems.map((p) => `${p}; diffed anyway (--allow-different-experiments)`)
  throw new HwError(
    'diff_unrelated',
    `the two comparisons are not runs of one experiment: ${problems.join('; ')}`,
    {
      help: 'pass two comparison.json files of the same experiment, or --allow-different-experiments to diff them anyway',
    },
  )
}

function short(sha: string | null): string {
  return sha ? sha.slice(0, 12) : 'none'
}

function resourceDelta(pairs: Array<[number, number]>): CellDiff['spend_usd'] {
  const n = pairs.length
  if (n === 0) {
    return {
      n,
      old_mean: null,
      new_mean: null,
      delta_mean: null,
      ratio_of_means: null,
      reason: 'no instance with complete telemetry in both runs',
    }
  }
  let so = 0
  let sn = 0
  for (const [o, w] of pairs) {
    so += o
    sn += w
  }
  return {
    n,
    old_mean: so / n,
    new_mean: sn / n,
    delta_mean: (sn - so) / n,
    ratio_of_means: so > 0 ? sn / so : null,
    reason: so > 0 ? null : 'old total is 0: the ratio is undefined',
  }
}
