import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { benjaminiHochberg, holm } from '../../src/stats/index.js'
import { fmtP } from '../../src/util/format.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from './fixtures.js'

const glm = { id: 'glm-4.6', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } }
const sonnet = {
  id: 'claude-sonnet-4-5',
  provider: 'scripted',
  api: 'chat',
  prices: { input: 3, output: 15 },
}

function twoByTwo(over: Record<string, unknown> = {}) {
  return makePlan({
    model: undefined,
    models: { glm, sonnet },
    panel: { source: 'inline', instances: ids(12) },
    cells: [
      { id: 'pi-glm', harness: 'pi', version: '0.73.1', model: 'glm' },
      { id: 'oc-glm', harness: 'opencode', version: '1.18.33', model: 'glm' },
      { id: 'pi-son', harness: 'pi', version: '0.73.1', model: 'sonnet' },
      { id: 'oc-son', harness: 'opencode', version: '1.18.33', model: 'sonnet' },
    ],
    baseline: 'pi-glm',
    ...over,
  })
}

/**
 * On glm, opencode resolves t-001…t-010 and pi t-001…t-004 (+50 pp for opencode); on sonnet the reverse
 * (−50 pp). pi on sonnet has an infra error on t-012, so that block is incomplete on sonnet only.
 */
function reversal(plan: Plan): AttemptRecord[] {
  const resolves: Record<string, number> = { 'pi-glm': 4, 'oc-glm': 10, 'pi-son': 10, 'oc-son': 4 }
  const out: AttemptRecord[] = []
  for (const c of plan.cells) {
    plan.panel.instances.forEach((instance, i) => {
      const infra = c.id === 'pi-son' && instance === 't-012'
      out.push(
        attempt(plan, {
          cell: c.id,
          instance,
          outcome: infra ? 'unresolved' : i < (resolves[c.id] ?? 0) ? 'resolved' : 'unresolved',
          spend: (c.id.startsWith('oc') ? 0.2 : 0.1) * (1 + (i % 3)),
          ...(infra ? { exit: { class: 'infra', reason: 'runner lost' } } : {}),
        }),
      )
    })
  }
  return out
}

const out = () => mkdtempSync(path.join(tmpdir(), 'hw-models-out-'))

describe('compare: several models', () => {
  it('pairs within each model, compares each harness within each model, and estimates the interaction', async () => {
    const plan = await twoByTwo()
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, reversal(plan)),
      out: out(),
      resamples: 2000,
    })
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
    expect(c.comparisons.map((e) => [e.model, e.baseline, e.treatment])).toEqual([
      ['glm', 'pi-glm', 'oc-glm'],
      ['sonnet', 'pi-son', 'oc-son'],
    ])
    const [onGlm, onSon] = c.comparisons
    // Within glm every block is complete (the infra error on sonnet does not touch glm's blocks).
    expect(onGlm!.denominators.outcome).toBe(12)
    expect(onGlm!.outcome).toMatchObject({ wins: 6, losses: 0 })
    expect(onGlm!.outcome.mcnemar.p_two_sided).toBe(0.03125)
    expect(onSon!.denominators.outcome).toBe(11)
    expect(onSon!.outcome).toMatchObject({ wins: 0, losses: 6 })
    expect(c.models!.groups).toEqual([
      {
        route: 'glm',
        model_id: 'glm-4.6',
        cells: ['pi-glm', 'oc-glm'],
        baseline: 'pi-glm',
        blocks: { planned: 12, outcome_complete: 12 },
      },
      {
        route: 'sonnet',
        model_id: 'claude-sonnet-4-5',
        cells: ['pi-son', 'oc-son'],
        baseline: 'pi-son',
        blocks: { planned: 12, outcome_complete: 11 },
      },
    ])
    // Shared instances: 11. D = 2 on t-005…t-010 (6 blocks), 0 elsewhere: Î = 12/11, exact p = 2/64.
    const [ix] = c.models!.interactions
    expect(ix).toMatchObject({
      baseline_harness: 'pi@0.73.1',
      treatment_harness: 'opencode@1.18.33',
      model_a: 'glm',
      model_b: 'sonnet',
      n: 11,
      gap_a_pp: 54.545454545,
      gap_b_pp: -54.545454545,
      estimate_pp: 109.090909091,
      p: 0.03125,
      reverses: true,
      not_evaluated: null,
    })
    expect(ix!.interval_pp![0]).toBeGreaterThan(0)
    expect(c.rules.pairing).toMatch(/a block pairs only cells that drive the same model/)
    // One Holm family: every comparison's tests and the interaction, adjusted together.
    const fam = c.multiplicity!
    expect(fam.method).toBe('holm')
    expect(fam.tests.length).toBe(onGlm!.tests.length + onSon!.tests.length + 1)
    const expected = holm(fam.tests.map((t) => t.p))
    expect(fam.tests.map((t) => t.p_adjusted)).toEqual(expected.adjusted)
    expect(fam.tests.at(-1)).toMatchObject({ id: 'interaction', p: 0.03125 })
    const adjusted = fam.tests.at(-1)!.p_adjusted
    expect(adjusted).toBeGreaterThan(0.05)
    // Both reports: each comparison within its model, the interaction with its interval, the sentence.
    // (an "@" is kept from reading as a mention with a zero-width joiner)
    const md = readFileSync(r.reportPath, 'utf8').replaceAll('\u200d', '')
    expect(md).toContain('## Harness × model')
    expect(md).toContain('| Model route | 2 models: glm (glm-4.6), sonnet (claude-sonnet-4-5)')
    expect(md).toContain('| Treatment `oc-son` | `opencode` `1.18.33`')
    expect(md).toMatch(/\| Treatment `oc-son` \|[^\n]*, model `claude-sonnet-4-5` \|/)
    expect(md).toContain('| glm | pi-glm → oc-glm | 33.3% | 83.3% | +50.0 pp \\[')
    expect(md).toContain('| sonnet | pi-son → oc-son | 90.9% | 36.4% | −54.5 pp \\[')
    expect(md).toContain(
      '| opencode@1.18.33 vs pi@0.73.1 | glm / sonnet | 11 | +54.5 pp | −54.5 pp | +109.1 pp \\[',
    )
    expect(md).toContain(
      `| 0.0313 | ${fmtP(adjusted)} | the gap has opposite signs, not significant after adjustment |`,
    )
    expect(md).toContain(`_${fam.statement}_`)
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).toContain('<h2>Harness × model</h2>')
    expect(html).toContain('<td>+109.1 pp')
    expect(fam.statement).toMatch(
      new RegExp(
        `^Holm's step-down adjustment across all ${fam.tests.length} tests this report states \\(2 comparisons × resolve rate and resources, 1 harness × model interaction\\)`,
      ),
    )
  })

  it('cost-effectiveness: each model’s cells placed on that model’s blocks, one frontier across all', async () => {
    const plan = await twoByTwo({ reporting: { value_per_resolution_usd: 1 } })
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, reversal(plan)),
      out: out(),
      resamples: 500,
    })
    const ce = r.comparison.cost_effectiveness!
    // spend of block i: 0.1·(1 + i mod 3) for pi, twice that for opencode; glm: 12 blocks (Σ = 24),
    // sonnet: 11 blocks (t-012 is incomplete there; Σ over i < 11 = 21)
    const placed = ce.points.map((p) => [
      p.cell,
      p.resolve_rate.estimate,
      p.expected_spend_usd.estimate,
      p.frontier,
    ])
    expect(placed).toEqual([
      ['pi-glm', expect.closeTo(4 / 12, 12), expect.closeTo(0.2, 12), false],
      ['oc-glm', expect.closeTo(10 / 12, 12), expect.closeTo(0.4, 12), false],
      // pi on sonnet resolves the most for the least: it dominates every other cell
      ['pi-son', expect.closeTo(10 / 11, 12), expect.closeTo(2.1 / 11, 12), true],
      ['oc-son', expect.closeTo(4 / 11, 12), expect.closeTo(4.2 / 11, 12), false],
    ])
    expect(ce.blocks).toBe(11)
    // net benefit within each model: glm 1·(6/12) − 0.2 = 0.3; sonnet 1·(−6/11) − 2.1/11 = −8.1/11
    expect(ce.net_benefit.map((n) => [n.baseline, n.treatment, n.n])).toEqual([
      ['pi-glm', 'oc-glm', 12],
      ['pi-son', 'oc-son', 11],
    ])
    expect(ce.net_benefit[0]!.net_benefit_usd.estimate).toBeCloseTo(0.3, 12)
    expect(ce.net_benefit[1]!.net_benefit_usd.estimate).toBeCloseTo(-8.1 / 11, 12)
  })

  it('Benjamini–Hochberg when the manifest asks for it', async () => {
    const plan = await twoByTwo({
      reporting: { bootstrap_resamples: 2000, multiplicity: 'benjamini-hochberg' },
    })
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, reversal(plan)),
      out: out(),
      resamples: 2000,
    })
    const fam = r.comparison.multiplicity!
    expect(fam.method).toBe('benjamini-hochberg')
    expect(fam.tests.map((t) => t.p_adjusted)).toEqual(benjaminiHochberg(fam.tests.map((t) => t.p)).adjusted)
    expect(fam.statement).toMatch(/^Benjamini–Hochberg adjustment across all \d+ tests/)
  })

  it('two models with no shared instance: no interaction, and the comparison says so', async () => {
    const plan = await twoByTwo()
    const sonnetLegs = plan.legs.filter((l) => l.cell.endsWith('-son')).map((l) => l.leg)
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, reversal(plan), { skipLegs: sonnetLegs }),
      out: out(),
      resamples: 2000,
    })
    const ix = r.comparison.models!.interactions[0]!
    expect(ix).toMatchObject({ n: 0, estimate_pp: null, p: null, interval_pp: null })
    expect(ix.not_evaluated).toBe(
      'no instance is outcome-complete on both glm and sonnet: no comparison across the models',
    )
    expect(r.comparison.models!.notes.join('\n')).toContain('no comparison across the models')
    // glm is still compared on its 12 blocks.
    expect(r.comparison.comparisons[0]!.denominators.outcome).toBe(12)
    expect(r.comparison.multiplicity!.tests.some((t) => t.id === 'interaction')).toBe(false)
  })

  it('an attempt recorded with another model than its cell declares is a model mismatch on that model only', async () => {
    const plan = await twoByTwo()
    const atts = reversal(plan).map((a) => (a.cell_id === 'oc-son' ? { ...a, model: 'glm-4.6' } : a))
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, atts),
      out: out(),
      resamples: 500,
    })
    const [onGlm, onSon] = r.comparison.comparisons
    expect(onGlm!.denominators.outcome).toBe(12)
    expect(onSon!.denominators.outcome).toBe(0)
    expect(onSon!.not_evaluated).toBeDefined()
    const reasons = r.comparison.blocks.incomplete
      .flatMap((b) => b.reasons)
      .filter((x) => x.code === 'model_mismatch')
    expect(reasons).toHaveLength(12)
    expect(reasons[0]).toMatchObject({ cell: 'oc-son', detail: 'model glm-4.6 ≠ declared claude-sonnet-4-5' })
    expect(r.comparison.models!.interactions[0]!.not_evaluated).toMatch(
      /no instance is outcome-complete on both/,
    )
  })

  it('a harness on one model only, or a model without the baseline harness, is named and not compared', async () => {
    const threeCells = (cells: Array<Record<string, unknown>>) =>
      makePlan({
        model: undefined,
        models: { glm, sonnet },
        panel: { source: 'inline', instances: ids(4) },
        cells,
        baseline: 'pi-glm',
      })
    const pi = { harness: 'pi', version: '0.73.1' }
    const oc = { harness: 'opencode', version: '1.18.33' }
    const p1 = await threeCells([
      { id: 'pi-glm', ...pi, model: 'glm' },
      { id: 'oc-glm', ...oc, model: 'glm' },
      { id: 'pi-son', ...pi, model: 'sonnet' },
    ])
    const r1 = await aggregate({
      plan: writePlan(p1),
      artifacts: writeArtifacts(p1, reversal(p1)),
      out: out(),
      resamples: 500,
    })
    expect(r1.comparison.comparisons.map((e) => [e.model, e.baseline, e.treatment])).toEqual([
      ['glm', 'pi-glm', 'oc-glm'],
    ])
    expect(r1.comparison.models!.interactions).toEqual([])
    expect(r1.comparison.models!.notes).toEqual([
      'oc-glm has no cell with its harness configuration on sonnet: no interaction',
    ])
    const p2 = await threeCells([
      { id: 'pi-glm', ...pi, model: 'glm' },
      { id: 'oc-glm', ...oc, model: 'glm' },
      { id: 'oc-son', ...oc, model: 'sonnet' },
    ])
    const r2 = await aggregate({
      plan: writePlan(p2),
      artifacts: writeArtifacts(p2, reversal(p2)),
      out: out(),
      resamples: 500,
    })
    expect(r2.comparison.comparisons.map((e) => e.treatment)).toEqual(['oc-glm'])
    expect(r2.comparison.models!.groups[1]!.baseline).toBeNull()
    expect(r2.comparison.models!.notes).toEqual([
      "sonnet: no cell runs the baseline's harness configuration, so no comparison on this model",
    ])
    expect(readFileSync(r2.reportPath, 'utf8')).toContain(
      "sonnet: no cell runs the baseline's harness configuration",
    )
  })
})
