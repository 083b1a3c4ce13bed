import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

export type Table = { both: number; bOnly: number; cOnly: number; neither: number }

/** A real comparison.json from the aggregate stage; its run id and start are a weekly run's. */
export async function weeklyRun(
  runId: string,
  startedAt: string,
  table: Table,
  over: { instances?: number; bVersion?: string } = {},
): Promise<Comparison> {
  const plan = await makePlan({
    panel: { source: 'inline', instances: ids(over.instances ?? 12) },
    cells: [
      { id: 'a', harness: 'pi', version: '0.73.1' },
      { id: 'b', harness: 'opencode', version: over.bVersion ?? '1.18.33' },
    ],
    reporting: { value_per_resolution_usd: 2 },
  })
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, pairedOutcomes(plan, table)),
    out: mkdtempSync(path.join(tmpdir(), 'hw-hist-agg-')),
    resamples: 400,
  })
  const c = structuredClone(r.comparison)
  c.run_id = runId
  c.stamp.started_at = startedAt
  return ComparisonSchema.parse(c)
}
