import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { decisionTrials } from '../../src/compare/trial-halves.js'
import { trialHalvesProblem } from '../../src/detect/trial-halves-check.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from './fixtures.js'

describe('decisionTrials: a seeded part of each block’s trials decides, the rest estimates', () => {
  it('k − max(1, ⌊k/4⌋) distinct sorted indices per instance, the same for the same seed, another split for another', () => {
    const panel = ids(200)
    const a = decisionTrials(panel, 4, 11)
    expect(decisionTrials(panel, 4, 11)).toEqual(a)
    for (const id of panel) {
      const t = a.get(id)!
      expect(t).toHaveLength(3)
      expect(new Set(t).size).toBe(3)
      expect([...t].sort((x, y) => x - y)).toEqual(t)
      for (const x of t) expect(x >= 0 && x < 4).toBe(true)
    }
    const b = decisionTrials(panel, 4, 12)
    expect(panel.filter((id) => a.get(id)!.join() !== b.get(id)!.join()).length).toBeGreaterThan(100)
    expect([...decisionTrials(panel, 5, 11).values()].every((t) => t.length === 4)).toBe(true)
    expect([...decisionTrials(panel, 8, 11).values()].every((t) => t.length === 6)).toBe(true)
    expect([...decisionTrials(panel, 2, 11).values()].every((t) => t.length === 1)).toBe(true)
  })

  it('every trial position decides equally often (no position, e.g. the cold-cache first, favoured)', () => {
    const counts = [0, 0, 0, 0]
    for (const t of decisionTrials(ids(4000), 4, 3).values()) for (const x of t) counts[x]!++
    // Each position decides with probability ¾: 3,000 of 4,000, s.d. 27.4.
    for (const c of counts) expect(Math.abs(c - 3000)).toBeLessThan(110)
  })
})

/** A confirmation plan of four trials (round 1) over `n` instances, cells a and b. */
async function confirmationPlan(n: number, trials = 4): Promise<Plan> {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(n) }, trials })
  return { ...plan, kind: 'confirmation', round: 1 }
}

/** Aggregate `attempts` of `plan` as the CLI does; comparison.json read back through its schema. */
async function aggregated(plan: Plan, attempts: AttemptRecord[]) {
  const out = mkdtempSync(path.join(tmpdir(), 'hw-halves-'))
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, attempts),
    out,
    resamples: 2000,
  })
  return ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
}

describe('aggregate of a confirmation rerun: trial_halves in comparison.json', () => {
  it('each half holds the mean over its own trials; a trial missing in one half spoils only that half', async () => {
    const plan = await confirmationPlan(6)
    const spend = (cell: string, i: number, trial: number) =>
      (cell === 'a' ? 1 : 2) * (i + 1) * (trial + 1) * 0.01
    const attempts = plan.panel.instances.flatMap((instance, i) =>
      ['a', 'b'].flatMap((cell) =>
        [0, 1, 2, 3].map((trial) => attempt(plan, { cell, instance, trial, spend: spend(cell, i, trial) })),
      ),
    )
    const chosen = decisionTrials(plan.panel.instances, 4, plan.seed)
    // t-006 loses its estimation trial in cell b.
    const lost = [0, 1, 2, 3].find((t) => !chosen.get('t-006')!.includes(t))!
    const kept = attempts.filter((a) => !(a.instance_id === 't-006' && a.cell_id === 'b' && a.trial === lost))
    const c = await aggregated(plan, kept)
    const h = c.trial_halves!
    expect(h.seed).toBe(plan.seed)
    expect(h.trials).toEqual({ decision: 3, estimate: 1 })
    expect(h.decision_trials).toEqual(Object.fromEntries(chosen))
    // What confirm checks before deciding on them: the halves as written pass; a split chosen after
    // the fact or another seed does not.
    const planned = plan.panel.instances
    expect(trialHalvesProblem(h, c.instances, planned, plan.seed)).toBeNull()
    const moved = {
      ...h,
      decision_trials: { ...h.decision_trials, 't-002': [0, 1, 2].map((t) => (t + 1) % 4) },
    }
    expect(trialHalvesProblem(moved, c.instances, planned, plan.seed)).toBe(
      "name other decision trials for t-002 than the plan's seed draws",
    )
    expect(
      trialHalvesProblem({ ...h, trials: { decision: 2, estimate: 2 } }, c.instances, planned, plan.seed),
    ).toBe("split 2 + 2 trials, not the design's for 4")
    expect(trialHalvesProblem(h, c.instances, planned, plan.seed + 1)).toMatch(
      /^name seed \d+, the confirmation plan's is/,
    )
    plan.panel.instances.forEach((id, i) => {
      const d = chosen.get(id)!
      const e = [0, 1, 2, 3].filter((t) => !d.includes(t))
      const mean = (cell: string, ts: number[]) => ts.reduce((s, t) => s + spend(cell, i, t), 0) / ts.length
      const dRow = h.decision.find((x) => x.instance === id)!
      expect(dRow.status).toBe('complete')
      expect(dRow.cells.a!.trials).toBe(3)
      expect(e).toHaveLength(1)
      expect(dRow.cells.a!.spend_usd).toBeCloseTo(mean('a', d), 12)
      expect(dRow.cells.b!.spend_usd).toBeCloseTo(mean('b', d), 12)
      const eRow = h.estimate.find((x) => x.instance === id)!
      if (id === 't-006') {
        expect(eRow.status).toBe('incomplete')
        expect(c.instances.find((x) => x.instance === id)!.status).toBe('incomplete')
      } else {
        expect(eRow.status).toBe('complete')
        expect(eRow.cells.a!.spend_usd).toBeCloseTo(mean('a', e), 12)
        expect(eRow.cells.b!.spend_usd).toBeCloseTo(mean('b', e), 12)
      }
    })
  })

  it('a first-run plan and a one-trial confirmation carry no trial_halves', async () => {
    for (const plan of [
      await makePlan({ panel: { source: 'inline', instances: ids(4) }, trials: 4 }),
      await confirmationPlan(4, 1),
    ]) {
      const trials = plan.trials
      const attempts = plan.panel.instances.flatMap((instance) =>
        ['a', 'b'].flatMap((cell) =>
          Array.from({ length: trials }, (_, trial) => attempt(plan, { cell, instance, trial })),
        ),
      )
      expect((await aggregated(plan, attempts)).trial_halves).toBeUndefined()
    }
  })
})
