import { describe, expect, it } from 'vitest'
import { freshInputNotComparable } from '../../src/detect/comparable.js'
import { detect } from '../../src/detect/decide.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import type { Comparison } from '../../src/records/comparison.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { makeComparison, policy, ref, rows } from './fixtures.js'

// 30 blocks, both cells resolve the same 20; a reports 20 fresh input tokens per block, b 1,000:
// a 50× fresh-input ratio when a's API books fresh input as cache writes.
function comparison(apiA: string | null, apiB: string | null): Comparison {
  const c = makeComparison({
    cells: ['a', 'b'],
    rows: rows(30, (i) => ({
      a: { o: i < 20 ? 'r' : 'u', fresh: 20 },
      b: { o: i < 20 ? 'r' : 'u', fresh: 1000 },
    })),
  })
  c.cells.find((x) => x.id === 'a')!.api = apiA
  c.cells.find((x) => x.id === 'b')!.api = apiB
  return c
}

function decide(c: Comparison) {
  const d = detect({ current: ref(c), policy, quarantine: [] })
  DecisionSchema.parse(d)
  return d
}

const fresh = (md: string) => md.split('\n').find((l) => l.startsWith('| Fresh input tokens |'))!

describe('fresh input across wire APIs with different input accounting', () => {
  it('same API: the 50× ratio is a real figure and raises a breach', () => {
    const c = comparison('chat', 'chat')
    expect(c.comparisons[0]!.metrics.input_fresh_tokens.ratio_of_means.estimate).toBeCloseTo(50, 10)
    const d = decide(c)
    expect(d.status).toBe('breach')
    const s = d.signals.find((x) => x.metric === 'input_fresh_tokens')!
    expect(s.effect.estimate).toBeCloseTo(50, 10)
    expect(fresh(renderMarkdownReport(c))).toContain('| 50× [50, 50] bca |')
  })

  it('anthropic vs chat: fresh input is null with a reason, no breach, and the reports show no ratio', () => {
    const c = comparison('anthropic', 'chat')
    const why = freshInputNotComparable(c, 'a', 'b')
    expect(why).toBe(
      'not comparable: input-token accounting differs (a uses the anthropic API (input accounting exclusive), b uses the chat API (input accounting inclusive); fresh input can be reported as cache writes)',
    )
    const d = decide(c)
    expect(d.status).toBe('ok')
    expect(d.signals).toEqual([])
    expect(d.improvements).toEqual([])
    const md = renderMarkdownReport(c)
    const row = fresh(md)
    expect(row).toContain('— (not comparable: input-token accounting differs')
    expect(row).not.toMatch(/\d×/)
    expect(row).toContain('20 (as reported)')
    const html = renderHtmlReport(c)
    expect(html).toContain('— (not comparable: input-token accounting differs')
    // the forest plot carries no fresh-input row
    const data = JSON.parse(/<script type="application\/json" id="hw-data">(.*?)<\/script>/s.exec(html)![1]!)
    expect(data.forest.map((r: { label: string }) => r.label)).not.toContain('b vs a: Fresh input tokens')
    // the other metrics keep their ratios
    expect(md.split('\n').find((l) => l.startsWith('| Spend (USD) |'))).toMatch(/\d×/)
  })

  it('two APIs with the same known accounting are comparable; an unknown API is not', () => {
    expect(freshInputNotComparable(comparison('chat', 'responses'), 'a', 'b')).toBeNull()
    expect(freshInputNotComparable(comparison('anthropic', 'anthropic'), 'a', 'b')).toBeNull()
    const c = comparison(null, 'chat')
    c.stamp.model.api = null
    expect(freshInputNotComparable(c, 'a', 'b')).toMatch(
      /a uses the unknown API \(input accounting unknown\)/,
    )
    // a cell without its own API falls back to the route's
    const route = comparison(null, 'chat')
    expect(route.stamp.model.api).toBe('chat')
    expect(freshInputNotComparable(route, 'a', 'b')).toBeNull()
  })
})
