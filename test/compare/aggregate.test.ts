import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { bootstrapRatioOfMeans, chosenInterval } from '../../src/stats/index.js'
import { attempt, ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

const outDir = () => mkdtempSync(path.join(tmpdir(), 'hw-agg-out-'))

/** Parse comparison.json the strict way: every number finite, schema-valid. */
function readStrict(file: string): Comparison {
  const text = readFileSync(file, 'utf8')
  expect(text).not.toMatch(/NaN|Infinity/)
  const json = JSON.parse(text, (_k, v) => {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`non-finite ${v}`)
    return v
  })
  return ComparisonSchema.parse(json)
}

async function run(plan: Awaited<ReturnType<typeof makePlan>>, dir: string, out = outDir()) {
  const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 2000 })
  return { ...r, parsed: readStrict(r.comparisonPath), out }
}

describe('aggregate: reference values flow through', () => {
  it('b = 1, c = 7 gives the exact McNemar p 0.0703125, mid-p 0.0390625, and Newcombe interval', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 10, bOnly: 1, cOnly: 7, neither: 2 }))
    const { parsed } = await run(plan, dir)
    const o = parsed.comparisons[0]!.outcome
    expect([o.n, o.both, o.baseline_only, o.treatment_only, o.neither]).toEqual([20, 10, 1, 7, 2])
    expect(o.mcnemar.p_two_sided).toBe(0.0703125)
    expect(o.mcnemar.p_mid).toBe(0.0390625)
    // one-sided in the regression direction (treatment worse): P(X ≥ b) with b = 1 of 8
    expect(o.mcnemar.p_one_sided).toBeCloseTo(255 / 256, 12)
    expect(o.diff_pp).toBe(30)
    expect(o.diff_ci![0]).toBeLessThan(30)
    expect(o.diff_ci![1]).toBeGreaterThan(30)
    expect(o.e_value).toBeCloseTo(3.5556, 4)
    expect([o.wins, o.losses, o.ties]).toEqual([7, 1, 12])
  })

  it('b = 7, c = 1 (a regression) gives the one-sided p 0.03515625', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 10, bOnly: 7, cOnly: 1, neither: 2 }))
    const o = (await run(plan, dir)).parsed.comparisons[0]!.outcome
    expect(o.mcnemar.p_one_sided).toBe(0.03515625)
    expect(o.mcnemar.p_two_sided).toBe(0.0703125)
    expect(o.diff_pp).toBe(-30)
  })

  it('ratio of means, geometric mean ratio and per-arm stats match the worked example', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const b = [100, 200, 1000]
    const t = [110, 180, 1500]
    const atts = plan.panel.instances.flatMap((instance, i) => [
      attempt(plan, { cell: 'a', instance, spend: b[i]! }),
      attempt(plan, { cell: 'b', instance, spend: t[i]! }),
    ])
    const m = (await run(plan, writeArtifacts(plan, atts))).parsed.comparisons[0]!.metrics.spend_usd
    expect(m.ratio_of_means.estimate).toBeCloseTo(1.3769, 4)
    expect(m.geometric_mean_ratio.estimate).toBeCloseTo(1.1409, 4)
    expect(m.baseline).toMatchObject({ n: 3, mean: 1300 / 3, median: 200, total: 1300 })
    expect(m.baseline.p90).toBeCloseTo(840, 9) // type 7: 200 + 0.8·(1000 − 200)
    expect(m.sign_test).toMatchObject({ increases: 2, decreases: 1, ties: 0, p_two_sided: 1 })
    expect(m.ratio_of_means.resamples).toBe(2000)
    expect(m.ratio_of_means.percentile.ci).not.toBeNull()
  })
})

describe('aggregate: field cases', () => {
  it('F15: b = c = 0 gives p = 1, "no discordant pairs", no throw, finite JSON', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 12, bOnly: 0, cOnly: 0, neither: 8 }))
    const { parsed, markdown } = await run(plan, dir)
    const o = parsed.comparisons[0]!.outcome
    expect(o.mcnemar).toMatchObject({
      b: 0,
      c: 0,
      p_two_sided: 1,
      p_one_sided: 1,
      p_mid: 1,
      note: 'no discordant pairs',
    })
    expect(o.diff_pp).toBe(0)
    // 20 blocks at the assumed discordance cannot reach 80% power for any effect: null with the reason.
    expect(parsed.comparisons[0]!.mde).toMatchObject({ n: 20, mde_pp: null, discordance: 0.2 })
    expect(parsed.comparisons[0]!.mde.reason).toBeTruthy()
    expect(parsed.comparisons[0]!.mde.method).toMatch(/assumed/)
    expect(markdown).toContain('no discordant pairs')
  })

  it('F01: an attempt with 8/9 telemetry is excluded from cost and listed, but still counts for outcomes', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 1, cOnly: 1, neither: 0 })
    const victim = atts.find((a) => a.cell_id === 'a' && a.instance_id === 't-002')!
    victim.telemetry = {
      ...victim.telemetry,
      coverage: 'partial',
      reason: 'proxy logged 8 of the 9 requests the harness made',
      rows: 8,
      spend_usd: null,
      proxy_requests: null,
    }
    const { parsed, markdown } = await run(plan, writeArtifacts(plan, atts))
    const cmp = parsed.comparisons[0]!
    expect(cmp.denominators).toEqual({ coverage: 6, outcome: 6, cost: 5 })
    expect(cmp.outcome.n).toBe(6)
    expect(cmp.metrics.spend_usd.n).toBe(5)
    expect(cmp.cost_per_resolution.n).toBe(5)
    const listed = parsed.blocks.incomplete.find((b) => b.instance === 't-002')!
    expect(listed.reasons).toEqual([
      expect.objectContaining({
        code: 'telemetry_partial',
        cell: 'a',
        detail: expect.stringContaining('8 of the 9'),
      }),
    ])
    expect(parsed.instances.find((r) => r.instance === 't-002')!.status).toBe('cost_incomplete')
    expect(parsed.blocks).toMatchObject({ planned: 6, outcome_complete: 6, complete: 5 })
    expect(parsed.telemetry_coverage).toMatchObject({ attempts: 12, complete: 11, partial: 1 })
    expect(parsed.cells[0]!.intent_to_treat.reason).toMatch(/lower bound/)
    expect(markdown).toMatch(/`t-002` \| `telemetry_partial` `a`/)
  })

  it('F06: budget exhaustion at the proxy is an infra error: the block is incomplete, never a loss', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(5) } })
    const atts = pairedOutcomes(plan, { both: 5, bOnly: 0, cOnly: 0, neither: 0 })
    // t-004: empty patch, non-clean exit, the proxy answered budget_exceeded; graded "unresolved" upstream.
    const v = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-004')!
    v.outcome = 'unresolved'
    v.verifier = { ...v.verifier, status: 'fail' }
    v.exit = { class: 'error', code: 1, signal: null, reason: 'conversation ended in error state' }
    v.deliverable = { bytes: 0, sha256: null, files_changed: 0 }
    v.telemetry = { ...v.telemetry, budget_exceeded: true, failed_rows: 1 }
    // t-005: the run stage already classified it.
    const w = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-005')!
    w.outcome = 'infra_error'
    Object.assign(w, { outcome_reason: 'budget_exceeded' })
    w.exit = { class: 'infra', code: null, signal: null, reason: 'proxy 429 budget' }
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const o = parsed.comparisons[0]!.outcome
    expect(o.n).toBe(3)
    expect(o.losses).toBe(0)
    expect(o.baseline_only).toBe(0)
    const reasons = Object.fromEntries(
      parsed.blocks.incomplete.map((b) => [b.instance, b.reasons.map((r) => r.code)]),
    )
    expect(reasons).toEqual({ 't-004': ['infra_error'], 't-005': ['infra_error'] })
    expect(parsed.blocks.incomplete[0]!.reasons[0]!.detail).toMatch(/budget_exceeded/)
    expect(parsed.blocks.incomplete[1]!.reasons[0]!.detail).toMatch(/budget_exceeded/)
    expect(parsed.cells[1]!.final_outcomes).toMatchObject({ resolved: 3, infra_error: 2, unresolved: 0 })
  })

  it('F06 boundary: with a declared per-attempt spend limit, hitting it is the harness’s loss', async () => {
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(3) },
      budgets: { timeout_s: 60, max_spend_usd: 1 },
    })
    const atts = pairedOutcomes(plan, { both: 3, bOnly: 0, cOnly: 0, neither: 0 })
    const v = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-001')!
    v.outcome = 'unresolved'
    v.verifier = { ...v.verifier, status: 'fail' }
    v.exit = { class: 'budget', code: null, signal: null, reason: 'max_spend_usd reached' }
    v.telemetry = { ...v.telemetry, budget_exceeded: true }
    const o = (await run(plan, writeArtifacts(plan, atts))).parsed.comparisons[0]!.outcome
    expect(o).toMatchObject({ n: 3, baseline_only: 1 })
  })

  it('F09: duplicate attempt rows make the block incomplete (duplicate_rows, file:line) and are never double-counted', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 })
    const dup = {
      ...atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-002')!,
      outcome: 'unresolved' as const,
    }
    const legB = plan.legs.find((l) => l.cell === 'b')!
    const { parsed } = await run(
      plan,
      writeArtifacts(plan, atts, { extraLines: { [legB.leg]: [JSON.stringify(dup)] } }),
    )
    const blk = parsed.blocks.incomplete.find((b) => b.instance === 't-002')!
    expect(blk.reasons.map((r) => r.code)).toEqual(['duplicate_rows'])
    expect(blk.reasons[0]!.detail).toMatch(/attempts\.jsonl:2 and .*attempts\.jsonl:5/)
    expect(parsed.comparisons[0]!.outcome.n).toBe(3)
    expect(parsed.cells[1]!.intent_to_treat.attempts).toBe(4)
    expect(parsed.cells[1]!.intent_to_treat.spend_usd).toBeCloseTo(0.15 * (1 + 2 + 3 + 4), 12)
    expect(parsed.cells[1]!.final_outcomes.resolved).toBe(4)
  })

  it('F10: lists a missing leg and its blocks, never a crash and never a zero', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) }, shards: { count: 2 } })
    const atts = pairedOutcomes(plan, { both: 6, bOnly: 0, cOnly: 0, neither: 0 })
    const gone = plan.legs.find((l) => l.cell === 'b' && l.shard === 1)!
    const { parsed, markdown } = await run(plan, writeArtifacts(plan, atts, { skipLegs: [gone.leg] }))
    expect(parsed.missing_legs).toEqual([
      { leg: gone.leg, cell: 'b', shard: 1, artifact: gone.artifact, reason: 'artifact folder not found' },
    ])
    const missingBlocks = parsed.blocks.incomplete.filter((b) =>
      b.reasons.some((r) => r.code === 'missing_leg'),
    )
    expect(missingBlocks.map((b) => b.instance).sort()).toEqual([...gone.instances].sort())
    expect(parsed.comparisons[0]!.outcome.n).toBe(6 - gone.instances.length)
    expect(parsed.comparisons[0]!.metrics.spend_usd.n).toBe(6 - gone.instances.length)
    for (const inst of gone.instances) {
      const row = parsed.instances.find((r) => r.instance === inst)!
      expect(row.cells.b).toMatchObject({ outcome: 'missing', spend_usd: null, attempts: 0 })
    }
    expect(parsed.cells[1]!.final_outcomes.missing).toBe(gone.instances.length)
    expect(markdown).toContain('## Missing legs')
    expect(markdown).toContain(gone.artifact)
  })

  it('lists unparsable files and rows with file:line and reads the rest', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const atts = pairedOutcomes(plan, { both: 3, bOnly: 0, cOnly: 0, neither: 0 })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    const bad = { ...atts[0]!, outcome: 'passed' }
    const { parsed } = await run(
      plan,
      writeArtifacts(plan, atts, { extraLines: { [legA.leg]: ['{"truncated": ', JSON.stringify(bad)] } }),
    )
    expect(parsed.input_errors).toEqual([
      { file: `${legA.artifact}/attempts.jsonl`, line: 4, message: expect.stringMatching(/^not valid JSON/) },
      { file: `${legA.artifact}/attempts.jsonl`, line: 5, message: expect.stringMatching(/outcome/) },
    ])
    // The schema-invalid row still names its block (t-001 of cell a): that block is not trusted.
    expect(parsed.blocks.incomplete).toEqual([
      {
        instance: 't-001',
        reasons: [
          expect.objectContaining({
            code: 'invalid_rows',
            cell: 'a',
            detail: expect.stringContaining(':5 '),
          }),
        ],
      },
    ])
    expect(parsed.comparisons[0]!.outcome.n).toBe(2)
  })

  it('config drift, model mismatch and quarantine make blocks incomplete with their reasons', async () => {
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(5), quarantine: ['t-005'] },
    })
    const atts = pairedOutcomes(plan, { both: 5, bOnly: 0, cOnly: 0, neither: 0 })
    atts.find((a) => a.cell_id === 'a' && a.instance_id === 't-001')!.config_hash = 'f'.repeat(64)
    const mm = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-002')!
    mm.telemetry = { ...mm.telemetry, model_mismatch: true, models_observed: ['other-model'] }
    atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-003')!.harness_version = '9.9.9'
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const codes = Object.fromEntries(
      parsed.blocks.incomplete.map((b) => [b.instance, b.reasons.map((r) => r.code)]),
    )
    expect(codes).toEqual({
      't-001': ['config_drift'],
      't-002': ['model_mismatch'],
      't-003': ['config_drift'],
    })
    expect(parsed.blocks.quarantined).toEqual(['t-005'])
    expect(parsed.comparisons[0]!.outcome.n).toBe(1)
    expect(parsed.instances.find((r) => r.instance === 't-005')!.status).toBe('quarantined')
    expect(parsed.stamp.model.observed).toEqual(['gpt-5-mini', 'other-model'])
  })

  it('a block whose cells ran different container images is not compared, and says which images', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const atts = pairedOutcomes(plan, { both: 3, bOnly: 0, cOnly: 0, neither: 0 })
    const env = (id: string) => ({
      runtime: 'podman',
      runtime_version: '4.3.1',
      image_ref: 'localhost/hw-task-x:1',
      image_id: `sha256:${id.repeat(64)}`,
      workdir: '/testbed',
      resources: { cpus: 1, memory_mb: 2048, pids: 1024, storage_mb: null },
      network: { agent: 'proxy-only' as const, verifier: 'none' as const },
    })
    for (const a of atts) a.environment = env('a')
    // t-002: cell b's image was rebuilt between legs (drift); t-003 same image on both sides.
    atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-002')!.environment = env('b')
    const { parsed, out } = await run(plan, writeArtifacts(plan, atts))
    expect(parsed.blocks.incomplete).toEqual([
      {
        instance: 't-002',
        reasons: [
          {
            code: 'image_mismatch',
            cell: null,
            trial: null,
            attempt: null,
            detail: 'cells ran different images: a aaaaaaaaaaaa, b bbbbbbbbbbbb',
          },
        ],
      },
    ])
    expect(parsed.comparisons[0]!.outcome.n).toBe(2)
    // The header states each environment: image reference and id, resources, network per phase.
    expect(parsed.stamp.environments).toEqual([
      {
        runtime: 'podman 4.3.1',
        image_ref: 'localhost/hw-task-x:1',
        image_id: `sha256:${'a'.repeat(64)}`,
        resources: { cpus: 1, memory_mb: 2048, pids: 1024, storage_mb: null, storage_enforced: null },
        network: { agent: 'proxy-only', verifier: 'none' },
        verifier_container: null,
        attempts: 5,
      },
      expect.objectContaining({ image_id: `sha256:${'b'.repeat(64)}`, attempts: 1 }),
    ])
    const line =
      'podman 4.3.1; image localhost/hw-task-x:1 (id aaaaaaaaaaaa); cpus 1, memory 2048 MB, pids 1024, storage not limited; network: agent proxy-only, verifier none; 5 attempts'
    expect(readFileSync(path.join(out, 'report.md'), 'utf8').replace(/\u200d/g, '')).toContain(
      `| Environment | ${line} |`,
    )
    expect(readFileSync(path.join(out, 'report.html'), 'utf8')).toContain(
      `<th>Environment</th><td>${line}</td>`,
    )
  })

  it('a storage limit the engine could not enforce (ext4) is said so in the report header', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const atts = pairedOutcomes(plan, { both: 2, bOnly: 0, cOnly: 0, neither: 0 })
    for (const a of atts) {
      a.environment = {
        runtime: 'docker',
        runtime_version: '28.0.4',
        image_ref: 'localhost/harness-watch-base:bookworm',
        image_id: `sha256:${'c'.repeat(64)}`,
        workdir: '/app',
        resources: { cpus: 2, memory_mb: 4096, pids: 1024, storage_mb: 2048 },
        storage_enforced: false,
        network: { agent: 'proxy-only' as const, verifier: 'none' as const },
      }
    }
    const { parsed, out } = await run(plan, writeArtifacts(plan, atts))
    expect(parsed.stamp.environments?.[0]?.resources).toEqual({
      cpus: 2,
      memory_mb: 4096,
      pids: 1024,
      storage_mb: 2048,
      storage_enforced: false,
    })
    const line =
      'docker 28.0.4; image localhost/harness-watch-base:bookworm (id cccccccccccc); cpus 2, memory 4096 MB, pids 1024, storage 2048 MB (not enforced); network: agent proxy-only, verifier none; 4 attempts'
    expect(readFileSync(path.join(out, 'report.md'), 'utf8').replace(/\u200d/g, '')).toContain(
      `| Environment | ${line} |`,
    )
    expect(readFileSync(path.join(out, 'report.html'), 'utf8')).toContain(
      `<th>Environment</th><td>${line}</td>`,
    )
  })

  it('retries: the final attempt gives the outcome, every attempt is summed (intent-to-treat)', async () => {
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(2) },
      retries: { max: 1, on: ['infra'] },
    })
    const atts = [
      attempt(plan, {
        cell: 'a',
        instance: 't-001',
        attempt: 1,
        final: false,
        outcome: 'infra_error',
        exit: { class: 'infra' },
        spend: 0.05,
      }),
      attempt(plan, { cell: 'a', instance: 't-001', attempt: 2, spend: 0.2 }),
      attempt(plan, { cell: 'a', instance: 't-002', spend: 0.1 }),
      attempt(plan, { cell: 'b', instance: 't-001', spend: 0.3 }),
      attempt(plan, { cell: 'b', instance: 't-002', spend: 0.3 }),
    ]
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const a = parsed.cells[0]!
    expect(a.intent_to_treat).toMatchObject({ attempts: 3, retries: 1 })
    expect(a.intent_to_treat.spend_usd).toBeCloseTo(0.35, 12)
    expect(parsed.instances[0]!.cells.a).toMatchObject({ outcome: 'resolved', attempts: 2 })
    expect(parsed.instances[0]!.cells.a!.spend_usd).toBeCloseTo(0.25, 12)
    expect(parsed.comparisons[0]!.outcome.n).toBe(2)
  })

  it('k trials: majority rule for McNemar, pass@k and pass^k over all trials (statistics.md values)', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) }, trials: 5 })
    const successes: Record<string, number> = { 't-001': 5, 't-002': 4, 't-003': 0, 't-004': 2 }
    const atts = plan.panel.instances.flatMap((instance) =>
      Array.from({ length: 5 }, (_, trial) => [
        attempt(plan, {
          cell: 'a',
          instance,
          trial,
          outcome: trial < successes[instance]! ? 'resolved' : 'unresolved',
        }),
        attempt(plan, { cell: 'b', instance, trial, outcome: 'resolved' }),
      ]).flat(),
    )
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const a = parsed.cells[0]!
    expect(a.pass_hat_k.map((p) => p.value)).toEqual([
      expect.closeTo(0.55, 12),
      expect.closeTo(0.425, 12),
      expect.closeTo(0.35, 12),
      expect.closeTo(0.3, 12), // k = 4: (1 + 0.2 + 0 + 0) / 4
      expect.closeTo(0.25, 12),
    ])
    expect([0, 1, 2, 4].map((i) => a.pass_at_k[i]!.value)).toEqual([
      expect.closeTo(0.55, 12),
      expect.closeTo(0.675, 12),
      expect.closeTo(0.725, 12),
      expect.closeTo(0.75, 12),
    ])
    expect(a.pass_at_k[0]!.n_instances).toBe(4)
    // majority of 5: t-001 (5) and t-002 (4) resolved, t-003 (0) and t-004 (2) not
    expect(parsed.instances.map((r) => r.cells.a!.outcome)).toEqual([
      'resolved',
      'resolved',
      'unresolved',
      'unresolved',
    ])
    expect(parsed.comparisons[0]!.outcome).toMatchObject({
      n: 4,
      both: 2,
      treatment_only: 2,
      baseline_only: 0,
    })
    expect(parsed.stamp.trials).toBe(5)
  })

  it('reads a confirmation plan’s artifacts and skips rows of another round', async () => {
    const base = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
    const { loadManifest } = await import('../../src/manifest/load.js')
    const { resolvePanel } = await import('../../src/panel/resolve.js')
    const { buildPlan } = await import('../../src/plan/plan.js')
    const { writeManifest, baseManifest } = await import('../support/manifests.js')
    const loaded = await loadManifest(
      writeManifest(baseManifest({ panel: { source: 'inline', instances: ids(6) } })),
    )
    const confirm = buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir), {
      kind: 'confirmation',
      round: 1,
      instances: ['t-002', 't-005'],
    })
    expect(confirm.legs[0]!.artifact).not.toBe(base.legs[0]!.artifact)
    const atts = pairedOutcomes(confirm, { both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    const stale = { ...attempt(base, { cell: 'a', instance: 't-002' }), round: 0 }
    const legA = confirm.legs.find((l) => l.cell === 'a')!
    const { parsed } = await run(
      confirm,
      writeArtifacts(confirm, atts, { extraLines: { [legA.leg]: [JSON.stringify(stale)] } }),
    )
    expect(parsed.round).toBe(1)
    expect(parsed.blocks.planned).toBe(2)
    expect(parsed.comparisons[0]!.outcome).toMatchObject({ n: 2, both: 1, baseline_only: 1 })
    expect(parsed.input_errors).toEqual([
      expect.objectContaining({ line: 3, message: expect.stringMatching(/round 0, the plan is round 1/) }),
    ])
  })
})

describe('aggregate: determinism and strictness', () => {
  it('the same inputs give byte-identical comparison.json, report.md and report.html', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(30) } })
    const atts = pairedOutcomes(plan, { both: 15, bOnly: 4, cOnly: 6, neither: 5 })
    const dir = writeArtifacts(plan, atts)
    const planFile = writePlan(plan)
    const one = await aggregate({ plan: planFile, artifacts: dir, out: outDir(), resamples: 2000 })
    const two = await aggregate({ plan: planFile, artifacts: dir, out: outDir(), resamples: 2000 })
    for (const k of ['comparisonPath', 'reportPath', 'htmlPath'] as const) {
      expect(readFileSync(two[k], 'utf8')).toBe(readFileSync(one[k], 'utf8'))
    }
    // keys are sorted at every level
    const text = readFileSync(one.comparisonPath, 'utf8')
    const top = Object.keys(JSON.parse(text))
    expect(top).toEqual([...top].sort())
    expect(top).toEqual([
      'artifacts_href',
      'blocks',
      'cells',
      'classification',
      'comparisons',
      'cost_effectiveness',
      'experiment_id',
      'input_errors',
      'instances',
      'kind',
      'mde',
      'missing_legs',
      'multiplicity',
      'notes',
      'round',
      'rules',
      'run_id',
      'schema_version',
      'scope_statement',
      'scorecard',
      'stamp',
      'telemetry_coverage',
    ])
  })

  it('undefined statistics are null with a reason (Σbaseline = 0, no cost blocks), never NaN', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 0, bOnly: 0, cOnly: 0, neither: 4 }, ['a', 'b'], () => 0)
    for (const a of atts)
      a.telemetry = { ...a.telemetry, coverage: a.cell_id === 'b' ? 'missing' : 'complete' }
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const cmp = parsed.comparisons[0]!
    expect(cmp.metrics.spend_usd).toMatchObject({ n: 0, baseline: { n: 0, mean: null } })
    expect(cmp.metrics.spend_usd.ratio_of_means).toMatchObject({
      estimate: null,
      ci: null,
      reason: expect.any(String),
    })
    expect(cmp.cost_per_resolution.ratio.estimate).toBeNull()
    expect(cmp.cost_per_resolution.ratio.reason).toBeTruthy()
    expect(parsed.telemetry_coverage.missing).toBe(4)
  })

  it('spend unpriced on some blocks: its ratio of means is taken over the priced blocks, never a crash', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) } })
    const atts = pairedOutcomes(plan, { both: 5, bOnly: 2, cOnly: 3, neither: 2 })
    // b's spend is unpriced on blocks 3 and 8 (complete telemetry, no price): spend is unknown there
    const unpriced = new Set([plan.panel.instances[3], plan.panel.instances[8]])
    for (const a of atts)
      if (a.cell_id === 'b' && unpriced.has(a.instance_id))
        Object.assign(a.telemetry, { spend_usd: null, spend_source: 'unpriced' })
    const { parsed } = await run(plan, writeArtifacts(plan, atts))
    const spend = parsed.comparisons[0]!.metrics.spend_usd
    expect(spend).toMatchObject({ n: 10, n_missing_value: 2 })
    const priced = [...Array(12).keys()].filter((i) => i !== 3 && i !== 8)
    const direct = bootstrapRatioOfMeans(
      priced.map((i) => 0.1 * (1 + (i % 7))),
      priced.map((i) => 0.15 * (1 + (i % 7))),
      { B: 2000, seed: plan.seed, level: 0.95 },
    )
    expect(spend.ratio_of_means.estimate).toBeCloseTo(1.5, 12)
    expect(spend.ratio_of_means.ci).toEqual(chosenInterval(direct).ci)
    expect(spend.ratio_of_means.method).toBe(chosenInterval(direct).method)
    // cost per resolution uses the same ten blocks
    expect(parsed.comparisons[0]!.cost_per_resolution.n).toBe(10)
  })

  it('no resolutions: portfolio cost per resolution is null with "no resolutions"', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 0, bOnly: 0, cOnly: 0, neither: 4 })
    const cpr = (await run(plan, writeArtifacts(plan, atts))).parsed.comparisons[0]!.cost_per_resolution
    expect(cpr.baseline).toMatchObject({ portfolio_cost_per_resolution: null, reason: 'no resolutions' })
    expect(cpr.baseline.expected_cost_per_attempted_instance).toBeCloseTo((0.1 + 0.2 + 0.3 + 0.4) / 4, 12)
    expect(cpr.ratio).toMatchObject({ estimate: null, reason: 'no resolutions in either arm' })
  })
})
