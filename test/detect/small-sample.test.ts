import { describe, expect, it } from 'vitest'
import { selectConfirmation } from '../../src/detect/confirm-plan.js'
import { detect } from '../../src/detect/decide.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { smallSample } from '../../src/detect/signals.js'
import { decisionMarkdown } from '../../src/report/decision.js'
import { type CellSpec, makeComparison, policy, ref, rows } from './fixtures.js'

const r = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'r', ...extra })
const u = (extra: Partial<CellSpec> = {}): CellSpec => ({ o: 'u', ...extra })

// 8 blocks, b loses 3 the baseline resolves: −37.5 pp, far past the 10-point rule, on n = 8.
const eight = () =>
  makeComparison({
    cells: ['a', 'b'],
    rows: rows(8, (i) => (i < 3 ? { a: r(), b: u() } : i < 6 ? { a: r(), b: r() } : { a: u(), b: u() })),
  })

function decide(minBlocks?: number) {
  const thresholds =
    minBlocks === undefined ? policy.thresholds : { ...policy.thresholds, min_blocks: minBlocks }
  const d = detect({ current: ref(eight()), policy: { ...policy, thresholds }, quarantine: [] })
  DecisionSchema.parse(d)
  return d
}

describe('small samples: shown with a note, never a breach alone', () => {
  it('a 37.5-point deficit on 8 blocks (default min_blocks 10) is shown with its interval and is not a breach', () => {
    const d = decide()
    expect(d.status).toBe('ok')
    expect(d.signals).toHaveLength(1)
    const s = d.signals[0]!
    expect(s.state).toBe('small_sample')
    expect(s.effect.n).toBe(8)
    expect(s.effect.estimate).toBeCloseTo(-37.5, 10)
    expect(s.effect.ci).not.toBeNull()
    expect(s.effect.reason).toBe(
      'small sample: n = 8 < thresholds.min_blocks 10; the interval is shown, it cannot raise a breach alone',
    )
    expect(d.comparisons[0]!.reason).toMatch(/^threshold crossed only on a small sample \(resolved on n = 8/)
    expect(d.summary).toMatch(
      /^ok: no threshold crossed \(1 crossing\(s\) on a small sample, shown, not a breach alone: b vs a −37\.5 pp \[.*\] resolved \(n = 8\)\)$/,
    )
    // nothing is rerun for it
    expect(selectConfirmation(d, 50).instances).toEqual([])
    const md = decisionMarkdown({ decision: d })
    expect(md).toContain('**Decision: ok**')
    expect(md).toMatch(
      /\| −37\.5 pp \[[^\]]+\] \(n = 8; bootstrap BCa; small sample: n = 8 < thresholds\.min_blocks 10;/,
    )
    expect(md).toContain('| small sample | not rerun: small sample, not a breach alone |')
  })

  it('the same data is a breach when the manifest allows 8 blocks (min_blocks 8) — the boundary is inclusive', () => {
    const d = decide(8)
    expect(d.status).toBe('breach')
    expect(d.signals[0]!.state).toBe('unconfirmed')
    expect(d.signals[0]!.effect.reason).toBeNull()
    expect(decide(9).status).toBe('ok')
  })

  it('a small-sample signal rides along when a signal on enough blocks is live, and stays small alone', () => {
    const backed = decide(8).signals[0]!
    const small = {
      ...backed,
      id: 'x:spend_usd',
      metric: 'spend_usd' as const,
      effect: { ...backed.effect, n: 4 },
    }
    const both = smallSample([backed, small], 8)
    expect(both.map((s) => s.state)).toEqual(['unconfirmed', 'unconfirmed'])
    expect(both[1]!.effect.reason).toMatch(/^small sample: n = 4 < thresholds\.min_blocks 8;/)
    expect(smallSample([small], 8).map((s) => s.state)).toEqual(['small_sample'])
    // a quarantined-only signal is not live: it does not back a small one
    const flaky = { ...backed, state: 'not_confirmable' as const }
    expect(smallSample([flaky, small], 8).map((s) => s.state)).toEqual(['not_confirmable', 'small_sample'])
  })

  it('the manifest refuses a min_blocks that is not a positive integer', async () => {
    const { ThresholdsSchema } = await import('../../src/manifest/schema.js')
    expect(ThresholdsSchema.safeParse({ min_blocks: 0 }).success).toBe(false)
    expect(ThresholdsSchema.safeParse({ min_blocks: 2.5 }).success).toBe(false)
    expect(ThresholdsSchema.parse({ min_blocks: 12 }).min_blocks).toBe(12)
    expect(ThresholdsSchema.parse({}).min_blocks).toBeUndefined()
  })
})
