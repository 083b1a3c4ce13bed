import { describe, expect, it } from 'vitest'
import { buildBlocks } from '../../src/compare/blocks.js'
import { ALPHA, buildComparison, POWER } from '../../src/compare/build.js'
import {
  costEffectiveness,
  mergeCostEffectiveness,
  registerCostEffectiveness,
} from '../../src/compare/cost-effectiveness.js'
import { JointBootstrap, SharedBootstraps } from '../../src/compare/joint-bootstrap.js'
import { groupInput, modelGroups } from '../../src/compare/models.js'
import type { PairOptions } from '../../src/compare/pair.js'
import { readLegArtifacts, readPlan } from '../../src/ingest/artifacts.js'
import { observationsFromArtifacts } from '../../src/ingest/from-artifacts.js'
import type { ComparisonInput } from '../../src/ingest/observations.js'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import {
  bootstrapMean,
  bootstrapMeanDifference,
  meanColumn,
  netBenefitColumn,
  pairedDifferenceColumn,
  pairedNetBenefit,
} from '../../src/stats/index.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from './fixtures.js'

// The cost-effectiveness section's bootstraps are summed with the comparisons' columns, once, in the
// shared joint bootstrap. These tests hold that path to the direct computation (bootstrapMean,
// bootstrapMeanDifference, pairedNetBenefit on the same blocks with the same options): equal to the
// last bit, on blocks where the section's block set differs from a comparison's, and with several models.

const B = 1500

/** Skewed per-instance values, deterministic. */
function noise(i: number, salt: number): number {
  const x = Math.sin(i * 12.9898 + salt * 78.233) * 43758.5453
  return x - Math.floor(x)
}

/**
 * Two trials per block (resolved shares 0, ½, 1), spend skewed per cell; cell c's telemetry is partial
 * on four blocks (so the points' blocks are fewer than a→b's cost blocks) and b is unpriced on two.
 */
function attempts(plan: Plan): AttemptRecord[] {
  const out: AttemptRecord[] = []
  plan.cells.forEach((cell, ci) => {
    plan.panel.instances.forEach((instance, i) => {
      for (let trial = 0; trial < 2; trial++) {
        const u = noise(i * 2 + trial, ci + 1)
        const partial = cell.id.startsWith('c') && i % 7 === 3
        const unpriced = cell.id.startsWith('b') && i % 11 === 5
        out.push(
          attempt(plan, {
            cell: cell.id,
            instance,
            trial,
            outcome: u < 0.35 + 0.1 * ci ? 'resolved' : 'unresolved',
            spend: 0.05 * (1 + ci) * Math.exp(3 * noise(i, 10 + ci + trial)),
            telemetry: {
              ...(partial ? { coverage: 'partial', reason: 'ledger rows missing' } : {}),
              ...(unpriced ? { spend_usd: null, spend_source: 'unpriced' } : {}),
            },
          }),
        )
      }
    })
  })
  return out
}

async function inputOf(over: Record<string, unknown>): Promise<ComparisonInput> {
  const plan = await makePlan({ trials: 2, reporting: { value_per_resolution_usd: 2.5 }, ...over })
  const artifacts = writeArtifacts(plan, attempts(plan))
  const { plan: read, sha256 } = await readPlan(writePlan(plan))
  const legs = await readLegArtifacts(read, artifacts, { runAttempt: null, workflowRun: null })
  return observationsFromArtifacts(read, legs, { planSha256: sha256, resamples: B, seed: 4242 })
}

function pairOptions(input: ComparisonInput): PairOptions {
  return {
    resamples: input.options.resamples,
    seed: input.options.seed >>> 0,
    level: input.options.level,
    alpha: ALPHA,
    power: POWER,
  }
}

describe('cost-effectiveness from the shared joint bootstrap', () => {
  it('JointBootstrap.mean is the library’s bootstrapMean, mean difference and net benefit, bit for bit', () => {
    const n = 53
    const opts = { B: 2500, seed: 9, level: 0.9 }
    const spendB = Float64Array.from({ length: n }, (_, i) => 0.1 * Math.exp(2 * noise(i, 1)))
    const spendT = Float64Array.from({ length: n }, (_, i) => 0.2 * Math.exp(2 * noise(i, 2)))
    const resB = Float64Array.from({ length: n }, (_, i) =>
      noise(i, 3) < 0.4 ? 1 : noise(i, 4) < 0.5 ? 0.5 : 0,
    )
    const resT = Float64Array.from({ length: n }, (_, i) => (noise(i, 5) < 0.6 ? 1 : 0))
    const blocks = {
      spendBaseline: spendB,
      spendTreatment: spendT,
      resolvedBaseline: resB,
      resolvedTreatment: resT,
    }
    const jb = new JointBootstrap(n, opts)
    jb.add('mean', meanColumn(spendT))
    jb.add('diff', pairedDifferenceColumn(resB, resT))
    jb.add('net', netBenefitColumn(blocks, 1.75))
    jb.compute()
    expect(jb.mean('mean')).toEqual(bootstrapMean(spendT, opts))
    expect(jb.mean('diff')).toEqual(bootstrapMeanDifference(resB, resT, opts))
    expect(jb.mean('net')).toEqual(pairedNetBenefit(blocks, 1.75, opts))
    expect(jb.mean('net').bca.ci).not.toBeNull()
    // one block: the library's reason, the estimate kept
    const one = new JointBootstrap(1, opts)
    one.add('x', meanColumn([0.3]))
    one.compute()
    expect(one.mean('x')).toEqual(bootstrapMean([0.3], opts))
  })

  it('comparison.json’s section equals the direct computation (three cells, incomplete and unpriced blocks)', async () => {
    const input = await inputOf({
      panel: { source: 'inline', instances: ids(40) },
      cells: [
        { id: 'a', harness: 'pi', version: '0.73.1' },
        { id: 'b', harness: 'opencode', version: '1.18.33' },
        { id: 'c', harness: 'pi', version: '0.73.2' },
      ],
    })
    const built = buildComparison(input).cost_effectiveness!
    const direct = costEffectiveness(
      buildBlocks(input),
      ['a', 'b', 'c'],
      'a',
      ['b', 'c'],
      pairOptions(input),
      2.5,
    )
    expect(built).toEqual(direct)
    // the fixture exercises what it claims: fewer placed blocks than a→b's net-benefit blocks, every
    // interval defined
    expect(direct.blocks).toBe(40 - 6 - 4 + 1) // c partial on i ≡ 3 (mod 7), b unpriced on i ≡ 5 (mod 11); i = 38 is both
    expect(direct.net_benefit.map((x) => x.n)).toEqual([40 - 4, 40 - 6])
    for (const p of direct.points) expect(p.resolve_rate.ci).not.toBeNull()
    for (const x of direct.net_benefit) expect(x.net_benefit_usd.ci).not.toBeNull()
    expect(direct.points[1]!.vs_baseline!.spend_diff_usd.method).toBe('bca')
  })

  it('the section reads the shared sums: registered with another seed, its intervals follow that seed', async () => {
    const input = await inputOf({ panel: { source: 'inline', instances: ids(25) } })
    const blocks = buildBlocks(input)
    const opts = pairOptions(input)
    const other = new SharedBootstraps({ B, seed: 77, level: opts.level })
    registerCostEffectiveness(blocks, ['a', 'b'], 'a', ['b'], 2.5, other)
    other.computeAll()
    const fromOther = costEffectiveness(blocks, ['a', 'b'], 'a', ['b'], opts, 2.5, other)
    const direct77 = costEffectiveness(blocks, ['a', 'b'], 'a', ['b'], { ...opts, seed: 77 }, 2.5)
    expect(fromOther).toEqual(direct77)
    expect(fromOther.points[1]!.resolve_rate.ci).not.toEqual(
      costEffectiveness(blocks, ['a', 'b'], 'a', ['b'], opts, 2.5).points[1]!.resolve_rate.ci,
    )
  })

  it('several models: each model’s section from its own shared sums equals the direct computation', async () => {
    const glm = { id: 'glm-4.6', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } }
    const sonnet = {
      id: 'claude-sonnet-4-5',
      provider: 'scripted',
      api: 'chat',
      prices: { input: 3, output: 15 },
    }
    const input = await inputOf({
      model: undefined,
      models: { glm, sonnet },
      panel: { source: 'inline', instances: ids(30) },
      cells: [
        { id: 'a-glm', harness: 'pi', version: '0.73.1', model: 'glm' },
        { id: 'b-glm', harness: 'opencode', version: '1.18.33', model: 'glm' },
        { id: 'c-son', harness: 'pi', version: '0.73.1', model: 'sonnet' },
        { id: 'b-son', harness: 'opencode', version: '1.18.33', model: 'sonnet' },
      ],
      baseline: 'a-glm',
    })
    const groups = modelGroups(input)!
    expect(groups).toHaveLength(2)
    const direct = mergeCostEffectiveness(
      groups
        .filter((g) => g.baseline !== null)
        .map((g) =>
          costEffectiveness(
            buildBlocks(groupInput(input, g)),
            g.cells.map((c) => c.id),
            g.baseline!,
            g.treatments,
            pairOptions(input),
            2.5,
          ),
        ),
      2.5,
    )
    expect(buildComparison(input).cost_effectiveness).toEqual(direct)
    expect(direct.points).toHaveLength(4)
    expect(direct.net_benefit).toHaveLength(2)
    for (const p of direct.points) expect(p.expected_spend_usd.ci).not.toBeNull()
  })
})
