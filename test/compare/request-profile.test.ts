import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import type { TelemetrySummary } from '../../src/records/ledger.js'
import { policy, ref } from '../detect/fixtures.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from './fixtures.js'

const N = 20

/** Requests of one attempt by role, and their spend at $0.001 a request. */
function roles(counts: Record<string, number>): NonNullable<TelemetrySummary['request_roles']> {
  return Object.entries(counts).map(([role, requests]) => ({
    role: role as NonNullable<TelemetrySummary['request_roles']>[number]['role'],
    requests,
    spend_usd: requests / 1000,
  }))
}

/** Token counts both cells share: only the requests differ between them. */
const TOKENS = {
  input_tokens: 10_000,
  input_fresh_tokens: 2_000,
  cache_read_tokens: 8_000,
  output_tokens: 500,
}

/** Parts of `n` requests: each of `bytes` bytes, `history` of them history. */
function parts(n: number, history: number, prefix: number): NonNullable<TelemetrySummary['request_parts']> {
  return {
    requests: n,
    bytes: n * 20_000,
    tool_schema_bytes: n * 6_000,
    system_bytes: n * 3_000,
    history_bytes: n * history,
    latest_message_bytes: n * 400,
    cache_prefix_bytes: n * prefix,
    unread: 0,
    params: [
      { name: 'stream', values: ['true'] },
      { name: 'temperature', values: ['0'] },
    ],
  }
}

// Cell a: 10 + i primary requests and a title call. Cell b: the same primary requests, a title
// call, one retry per primary request and 4 compaction calls: about 2.3× the requests, the same
// primary work. b also carries 1.5× a's history bytes per request and caches less of its prefix.
const primaryOf = (i: number) => 10 + i
function specs(plan: Awaited<ReturnType<typeof makePlan>>, forged = false) {
  return plan.panel.instances.flatMap((instance, i) => {
    const p = primaryOf(i)
    const aN = p + 1
    const bN = p + 1 + p + 4
    return [
      attempt(plan, {
        cell: 'a',
        instance,
        requests: aN,
        spend: aN / 1000,
        telemetry: {
          request_roles: roles({ primary: p, title: 1 }),
          request_parts: parts(aN, 8_000, 15_000),
        },
      }),
      attempt(plan, {
        cell: 'b',
        instance,
        requests: bN,
        spend: aN / 1000,
        telemetry: {
          ...TOKENS,
          request_roles: roles({ primary: p, title: 1, compaction: 4, retry: p }),
          request_parts: forged
            ? {
                ...parts(bN, 12_000, 10_000),
                params: [
                  { name: 'temperature', values: ['0', '<img src=x onerror=alert(1)>', 'x'.repeat(5000)] },
                  { name: 'evil name<b>', values: ['1'] },
                ],
              }
            : parts(bN, 12_000, 10_000),
        },
      }),
    ]
  })
}

async function run(over: Record<string, unknown>, forged = false) {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(N) }, ...over })
  const out = mkdtempSync(path.join(tmpdir(), 'hw-reqprof-'))
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, specs(plan, forged)),
    out,
    resamples: 2000,
  })
  const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
  return { c, markdown: r.markdown, html: readFileSync(path.join(out, 'report.html'), 'utf8') }
}

const sumP = Array.from({ length: N }, (_, i) => primaryOf(i)).reduce((s, v) => s + v, 0) // 390

describe('request profile per cell, with paired ratios', () => {
  it('counts requests and spend by role per cell, sizes per request, and the parameters sent', async () => {
    const { c } = await run({})
    const p = c.request_profile!
    const a = p.cells.find((x) => x.id === 'a')!
    const b = p.cells.find((x) => x.id === 'b')!
    expect(a.trials).toBe(N)
    expect(a.roles).toEqual([
      {
        role: 'primary',
        requests: sumP,
        share: expect.closeTo(sumP / (sumP + N), 9),
        spend_usd: sumP / 1000,
      },
      { role: 'title', requests: N, share: expect.closeTo(N / (sumP + N), 9), spend_usd: N / 1000 },
    ])
    const bTotal = 2 * sumP + 5 * N
    expect(b.roles.map((r) => [r.role, r.requests])).toEqual([
      ['primary', sumP],
      ['title', N],
      ['compaction', 4 * N],
      ['retry', sumP],
    ])
    expect(b.roles.find((r) => r.role === 'retry')!.share).toBeCloseTo(sumP / bTotal, 10)
    expect(a.parts).toEqual({
      requests: sumP + N,
      unread: 0,
      per_request: {
        request_bytes: 20_000,
        tool_schema_bytes: 6_000,
        system_bytes: 3_000,
        history_bytes: 8_000,
        latest_message_bytes: 400,
        cache_prefix_bytes: 15_000,
      },
      cache_prefix_share: 0.75,
    })
    expect(b.parts?.cache_prefix_share).toBe(0.5)
    expect(a.params).toEqual({ stream: ['true'], temperature: ['0'] })
  })

  it('pairs the ratios over blocks: equal primary requests, 24.5× the others, the history ratio with its interval', async () => {
    const { c } = await run({})
    const ratios = c.request_profile!.comparisons[0]!.ratios
    const by = (m: string) => ratios.find((r) => r.metric === m)!
    expect(by('primary_requests')).toMatchObject({
      n: N,
      baseline_total: sumP,
      treatment_total: sumP,
      estimate: 1,
    })
    // Σb others / Σa others = (390 + 100) / 20
    expect(by('other_requests').estimate).toBeCloseTo((sumP + 5 * N) / N, 10)
    const history = by('history_bytes')
    const aHist = (sumP + N) * 8_000
    const bHist = (2 * sumP + 5 * N) * 12_000
    expect(history.baseline_total).toBe(aHist)
    expect(history.treatment_total).toBe(bHist)
    expect(history.estimate).toBeCloseTo(bHist / aHist, 10)
    expect(history.ci).not.toBeNull()
    expect(history.ci![0]).toBeLessThanOrEqual(history.estimate!)
    expect(history.ci![1]).toBeGreaterThanOrEqual(history.estimate!)
    expect(history.method).toMatch(/^paired block bootstrap of the ratio of means, \w+ \(B = 2000\)$/)
  })

  it('the request rule counts all requests by default and raises a breach; primary-only it does not', async () => {
    const all = (await run({})).c
    const allRatio = all.comparisons[0]!.metrics.proxy_requests.ratio_of_means.estimate!
    expect(allRatio).toBeCloseTo((2 * sumP + 5 * N) / (sumP + N), 10)
    const dAll = detect({ current: ref(all), policy, quarantine: [] })
    DecisionSchema.parse(dAll)
    expect(dAll.signals.map((s) => s.metric)).toEqual(['proxy_requests'])

    const primary = (await run({ request_count: 'primary' })).c
    expect(primary.comparisons[0]!.metrics.proxy_requests.ratio_of_means.estimate).toBe(1)
    expect(primary.notes.some((n) => n.startsWith('proxy requests count primary requests only'))).toBe(true)
    const dPrimary = detect({ current: ref(primary), policy, quarantine: [] })
    expect(dPrimary.signals).toEqual([])
    expect(dPrimary.status).toBe('ok')
  })

  it('keeps from an artifact only parameter names and values the proxy could have written', async () => {
    const { c, markdown, html } = await run({}, true)
    expect(c.request_profile!.cells.find((x) => x.id === 'b')!.params).toEqual({ temperature: ['0'] })
    for (const text of [markdown, html, JSON.stringify(c)]) {
      expect(text).not.toContain('<img')
      expect(text).not.toContain('evil name')
      expect(text).not.toContain('x'.repeat(100))
    }
  })

  it('shows the roles, spend and ratios in both reports', async () => {
    const { markdown, html } = await run({})
    expect(markdown).toContain('### Request roles')
    expect(markdown).toContain(`| \`b\` | ${sumP} | ${N} | 0 | ${4 * N} | 0 | ${sumP} | 0 | 0 |`)
    expect(markdown).toMatch(/\| History bytes \| 8,000 \| 12,000 \| 20 \| 3\.22× \[3\.\d+, 3\.\d+\] \|/)
    expect(html).toContain('<h3>Request roles')
    expect(html).toContain('History bytes')
  })
})
