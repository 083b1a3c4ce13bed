import { describe, expect, it } from 'vitest'
import {
  buildScorecard,
  choiceRatio,
  costPerSolved,
  diffScorecards,
  exitDistribution,
  passAt1,
  passHatK,
  toolCallErrorRate,
} from '../../src/compare/scorecard.js'
import type { TrialObservation } from '../../src/ingest/observations.js'
import { scorecardMarkdown } from '../../src/report/scorecard.js'
import { createRng } from '../../src/stats/rng.js'
import { strictJson } from '../../src/util/json.js'

function obs(
  cell: string,
  instance: string,
  trial: number,
  outcome: TrialObservation['outcome'],
  extra: Partial<TrialObservation> = {},
): TrialObservation {
  return {
    cell,
    instance,
    trial,
    outcome,
    exitClass: outcome === 'infra_error' ? 'infra' : 'clean',
    attempts: 1,
    coverage: 'complete',
    coverageDetail: null,
    attemptCoverage: { complete: 1, partial: 0, missing: 0, unknown: 0 },
    metrics: { spend_usd: 0.5 } as TrialObservation['metrics'],
    shape: { firstRequestBytes: null, firstRequestTools: null, auxRequests: null },
    identity: { harnessVersion: null, configHash: null, models: [] },
    reasons: [],
    startedAt: null,
    endedAt: null,
    ...extra,
  }
}

describe('scorecard metrics (reference values)', () => {
  // Instance a: 3 of 4 resolved; b: 1 of 4; c: 4 of 4 but one trial infra (3 graded).
  const trials = [
    ...[1, 1, 1, 0].map((r, i) => obs('x', 'a', i, r ? 'resolved' : 'unresolved')),
    ...[1, 0, 0, 0].map((r, i) => obs('x', 'b', i, r ? 'resolved' : 'unresolved')),
    ...[1, 1, 1].map((_, i) => obs('x', 'c', i, 'resolved')),
    obs('x', 'c', 3, 'infra_error'),
  ]
  it('pass@1 is the mean per-instance rate over graded trials', () => {
    expect(passAt1(trials)).toBeCloseTo((3 / 4 + 1 / 4 + 3 / 3) / 3, 12)
  })
  it('pass^k is the mean of C(c,k)/C(n,k) over instances with n ≥ k', () => {
    expect(choiceRatio(3, 4, 2)).toBe(0.5)
    expect(choiceRatio(1, 4, 2)).toBe(0)
    expect(passHatK(trials, 2)).toEqual({ value: (0.5 + 0 + 1) / 3, instances: 3 })
    // Only a and b have 4 graded trials.
    expect(passHatK(trials, 4)).toEqual({ value: 0, instances: 2 })
    expect(passHatK(trials, 5)).toEqual({ value: null, instances: 0 })
  })
  it('cost per solved task, exit distribution, tool-call error rate', () => {
    expect(costPerSolved(trials)).toBeCloseTo((12 * 0.5) / 7, 12)
    expect(costPerSolved(trials.filter((o) => o.outcome !== 'resolved'))).toBeNull()
    const unknownSpend = [
      ...trials,
      obs('x', 'd', 0, 'resolved', { metrics: { spend_usd: null } as TrialObservation['metrics'] }),
    ]
    expect(costPerSolved(unknownSpend)).toBeNull()
    expect(exitDistribution(trials)).toEqual({ clean: 11, infra: 1 })
    expect(toolCallErrorRate(trials)).toEqual({ calls: null, rate: null })
    const withTools = [
      obs('x', 'a', 0, 'resolved', { tools: { calls: 8, failed: 1 } }),
      obs('x', 'a', 1, 'resolved', { tools: { calls: 2, failed: 1 } }),
    ]
    expect(toolCallErrorRate(withTools)).toEqual({ calls: 10, rate: 0.2 })
    expect(toolCallErrorRate([obs('x', 'a', 0, 'resolved', { tools: { calls: 0, failed: 0 } })])).toEqual({
      calls: 0,
      rate: null,
    })
  })
  it('the scorecard is strict JSON (no NaN) even for a cell with nothing graded', () => {
    const card = buildScorecard(
      [
        { id: 'x', trials: 4 },
        { id: 'empty', trials: 4 },
      ],
      [...trials, obs('empty', 'a', 0, 'infra_error')],
    )
    expect(() => strictJson(card)).not.toThrow()
    expect(card[1]).toMatchObject({
      pass_at_1: null,
      cost_per_solved_usd: null,
      graded_trials: 0,
      exits: { infra: 1 },
    })
    expect(card[0]?.pass_hat_k.map((p) => p.k)).toEqual([1, 2, 3, 4])
  })
})

describe('scorecard task order', () => {
  it('lists each cell its own tasks in localeCompare order, also when two tasks compare equal', () => {
    const ids = ['b-2', 'B-1', 'a10', 'a9', 'é', 'e']
    const card = buildScorecard(
      [
        { id: 'x', trials: 1 },
        { id: 'y', trials: 1 },
      ],
      [
        ...ids.map((i) => obs('x', i, 0, 'resolved')),
        ...ids.slice(2).map((i) => obs('y', i, 0, 'unresolved')),
      ],
    )
    const expected = (list: string[]) => [...list].sort((a, b) => a.localeCompare(b))
    expect(Object.keys(card[0]!.tasks)).toEqual(expected(ids))
    expect(Object.keys(card[1]!.tasks)).toEqual(expected(ids.slice(2)))
    // ids of one pattern, whose code-unit order is already the localeCompare order
    const same = ['repo__pkg-00002', 'repo__pkg-00010', 'repo__pkg-00001']
    const plain = buildScorecard(
      [{ id: 'x', trials: 1 }],
      same.map((i) => obs('x', i, 0, 'resolved')),
    )
    expect(Object.keys(plain[0]!.tasks)).toEqual(['repo__pkg-00001', 'repo__pkg-00002', 'repo__pkg-00010'])
    // 'a' and 'a' followed by U+0000 compare equal: each cell's tasks keep their own (stable) order.
    const tied = buildScorecard(
      [
        { id: 'x', trials: 1 },
        { id: 'y', trials: 1 },
      ],
      [
        obs('x', 'a\u0000', 0, 'resolved'),
        obs('x', 'a', 0, 'resolved'),
        obs('y', 'a', 0, 'resolved'),
        obs('y', 'a\u0000', 0, 'resolved'),
      ],
    )
    expect(Object.keys(tied[0]!.tasks)).toEqual(['a\u0000', 'a'])
    expect(Object.keys(tied[1]!.tasks)).toEqual(['a', 'a\u0000'])
  })
})

describe('scorecard by seeded simulation', () => {
  it('pass^k is unbiased for p^k and pass@1 for p', () => {
    const rng = createRng(20261201)
    const p = 0.7
    const trials: TrialObservation[] = []
    for (let i = 0; i < 3000; i++) {
      for (let t = 0; t < 4; t++)
        trials.push(obs('x', `i${i}`, t, rng.nextFloat() < p ? 'resolved' : 'unresolved'))
    }
    expect(passAt1(trials)).toBeCloseTo(p, 1)
    expect(Math.abs((passHatK(trials, 2).value ?? 0) - p ** 2)).toBeLessThan(0.02)
    expect(Math.abs((passHatK(trials, 4).value ?? 0) - p ** 4)).toBeLessThan(0.02)
  })
})

describe('scorecard diff and report', () => {
  it('lists per-task regressions and fixes', () => {
    const before = buildScorecard(
      [{ id: 'x', trials: 2 }],
      [
        obs('x', 'a', 0, 'resolved'),
        obs('x', 'a', 1, 'resolved'),
        obs('x', 'b', 0, 'unresolved'),
        obs('x', 'b', 1, 'unresolved'),
        obs('x', 'c', 0, 'resolved'),
      ],
    )
    const after = buildScorecard(
      [{ id: 'x', trials: 2 }],
      [
        obs('x', 'a', 0, 'resolved'),
        obs('x', 'a', 1, 'unresolved'),
        obs('x', 'b', 0, 'resolved'),
        obs('x', 'b', 1, 'unresolved'),
        obs('x', 'c', 0, 'infra_error'),
      ],
    )
    const d = diffScorecards(before, after)
    expect(d).toEqual([
      {
        cell: 'x',
        pass_at_1: { old: (1 + 0 + 1) / 3, new: (0.5 + 0.5) / 2 },
        tool_call_error_rate: { old: null, new: null },
        cost_per_solved_usd: { old: 2.5 / 3, new: 2.5 / 2 },
        regressions: ['a'],
        fixes: ['b'],
      },
    ])
  })
  it('escapes cell ids and exit classes from artifacts', () => {
    const card = buildScorecard(
      [{ id: 'x|<img src=x>', trials: 1 }],
      [obs('x|<img src=x>', 'a', 0, 'resolved', { exitClass: '**bold**|x' })],
    )
    const md = scorecardMarkdown(card, '#')
    // The id stays inert inside a code span with its pipe escaped (the table keeps 7 columns).
    expect(md).toContain('| `x\\|<img src=x>` |')
    expect(md).not.toContain('**bold**|x')
    const row = md.split('\n').find((l) => l.includes('img')) ?? ''
    expect(row.split(/(?<!\\)\|/).length - 2).toBe(7)
  })
})

describe('the simulated user’s spend in the scorecard', () => {
  it('is summed apart and never enters the cost per solved task; unknown spend stays unknown', () => {
    const trials = [
      obs('x', 'a', 0, 'resolved', { userSimulation: { dialogues: 1, requests: 3, spend_usd: 0.01 } }),
      obs('x', 'b', 0, 'unresolved', { userSimulation: { dialogues: 1, requests: 2, spend_usd: 0.02 } }),
      obs('y', 'a', 0, 'resolved', { userSimulation: { dialogues: 1, requests: 4, spend_usd: null } }),
      obs('z', 'a', 0, 'resolved'),
    ]
    const card = buildScorecard(
      [
        { id: 'x', trials: 1 },
        { id: 'y', trials: 1 },
        { id: 'z', trials: 1 },
      ],
      trials,
    )
    const [x, y, z] = card
    expect(x?.cost_per_solved_usd).toBe(1) // 2 × 0.5 harness spend over 1 solved; the user's 0.03 is not in it
    expect(x?.user_simulation?.dialogues).toBe(2)
    expect(x?.user_simulation?.requests).toBe(5)
    expect(x?.user_simulation?.spend_usd).toBeCloseTo(0.03, 12)
    expect(y?.user_simulation).toEqual({ dialogues: 1, requests: 4, spend_usd: null })
    expect(z?.user_simulation).toBeUndefined()
    const md = scorecardMarkdown(card, '#')
    expect(md).toContain(
      "Simulated user (not in the cell's cost) for `x`: 2 dialogue(s), 5 request(s), $0.0300.",
    )
    expect(md).toContain('for `y`: 1 dialogue(s), 4 request(s), spend unknown.')
    expect(md).not.toContain('for `z`')
  })
})
