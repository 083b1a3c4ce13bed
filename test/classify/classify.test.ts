// The classifier on its own: forged and borderline rows, order independence, the ledger check.
import { describe, expect, it } from 'vitest'
import type { AttemptInput } from '../../src/classify/classes.js'
import { classifyAttempts, retryExitClass } from '../../src/classify/classify.js'
import { DEFAULT_CLASSIFY } from '../../src/classify/options.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { checkLedger } from '../../src/records/ledger-check.js'
import { attempt, ids, ledgerFor, makePlan } from '../compare/fixtures.js'

const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
const input = (record: AttemptRecord, line = 1): AttemptInput => ({
  record,
  file: 'x/attempts.jsonl',
  line,
  ledgerRows: null,
})
const only = (records: AttemptRecord[], opts = DEFAULT_CLASSIFY) => [
  ...classifyAttempts(
    records.map((r, i) => input(r, i + 1)),
    opts,
  ).byKey.values(),
]

/** A failure with no model request and nothing delivered, after `seconds`, with `reason`. */
function silent(instance: string, seconds: number, reason: string, cell = 'b'): AttemptRecord {
  const a = attempt(plan, { cell, instance, outcome: 'unresolved', wallMs: seconds * 1000 })
  a.verifier = { ...a.verifier, status: 'fail' }
  a.exit = { class: 'error', code: 1, signal: null, reason }
  a.deliverable = { bytes: 0, sha256: null, files_changed: 0 }
  a.telemetry = { ...a.telemetry, rows: 0, proxy_requests: 0, coverage: 'missing', spend_usd: null }
  return a
}

describe('classifier: borderline and forged rows', () => {
  it('a forged "resolved" with a failing verifier is contradictory, an input error at its line', () => {
    const a = attempt(plan, { cell: 'a', instance: 't-001' })
    a.verifier = { ...a.verifier, status: 'fail', reward: 0 }
    const k = classifyAttempts([input(a, 7)])
    expect([...k.byKey.values()][0]!.outcome_class).toBe('contradictory')
    expect(k.inputErrors).toEqual([
      {
        file: 'x/attempts.jsonl',
        line: 7,
        message: 'contradictory row: verifier fail (reward 0) but outcome resolved',
      },
    ])
  })

  it('a long, lone silent failure stays the agent’s; two sharing a signature (numbers aside) are startup failures', () => {
    const lone = only([silent('t-001', 300, 'exit code 1 after 300 s')])[0]!
    expect(lone.outcome_class).toBe('unresolved')
    const shared = only([
      silent('t-001', 300, 'exit code 1 after 300 s'),
      silent('t-002', 290, 'exit code 1 after 290 s'),
    ])
    expect(shared.map((x) => x.outcome_class)).toEqual(['harness_startup', 'harness_startup'])
    expect(shared[0]!.reason).toMatch(/signature shared by 2 attempts/)
  })

  it('the signature names the class: auth, quota, unknown model', () => {
    const got = only([
      silent('t-001', 2, 'startup: 401 Unauthorized'),
      silent('t-002', 2, 'startup: insufficient_quota'),
      silent('t-003', 2, 'startup: unknown model gpt-9'),
      silent('t-004', 2, 'startup: cannot parse config.toml'),
    ]).map((x) => x.outcome_class)
    expect(got).toEqual(['auth', 'quota', 'route', 'harness_startup'])
  })

  it('work delivered with no model request is a bypass, the outcome kept (F14)', () => {
    const a = attempt(plan, { cell: 'a', instance: 't-001' })
    a.telemetry = { ...a.telemetry, rows: 0, proxy_requests: null, coverage: 'missing', spend_usd: null }
    const x = only([a])[0]!
    expect(x).toMatchObject({
      outcome_class: 'resolved',
      telemetry_class: 'telemetry_anomaly',
      anomaly: 'bypass',
    })
  })

  it('a declared per-attempt limit makes a budget stop the agent’s own (F06 boundary)', () => {
    const a = attempt(plan, { cell: 'a', instance: 't-001', outcome: 'unresolved' })
    a.verifier = { ...a.verifier, status: 'fail' }
    a.exit = { class: 'budget', code: null, signal: null, reason: 'max_spend_usd reached' }
    a.telemetry = { ...a.telemetry, budget_exceeded: true }
    expect(only([a])[0]!.outcome_class).toBe('quota')
    expect(only([a], { ...DEFAULT_CLASSIFY, declaredLimits: true })[0]!.outcome_class).toBe('unresolved')
  })

  it('the result does not depend on the order of the rows', () => {
    const rows = [
      silent('t-001', 2, 'startup: boom'),
      silent('t-002', 2, 'startup: boom'),
      attempt(plan, { cell: 'a', instance: 't-001', requests: 10 }),
      attempt(plan, { cell: 'b', instance: 't-003', requests: 1 }),
      attempt(plan, { cell: 'a', instance: 't-003', requests: 12 }),
    ]
    const forward = classifyAttempts(rows.map((r) => input(r)))
    const backward = classifyAttempts([...rows].reverse().map((r) => input(r)))
    expect(new Map([...backward.byKey].sort())).toEqual(new Map([...forward.byKey].sort()))
    expect(backward.findings).toEqual(forward.findings)
  })

  it('the retry policy sees a startup failure as infra, an ordinary failure as its exit class', () => {
    expect(retryExitClass(silent('t-001', 2, 'startup: boom'))).toBe('infra')
    const plain = attempt(plan, {
      cell: 'a',
      instance: 't-001',
      outcome: 'unresolved',
      exit: { class: 'error', code: 1 },
    })
    plain.verifier = { ...plain.verifier, status: 'fail' }
    expect(retryExitClass(plain)).toBe('error')
  })
})

describe('clustered timeouts', () => {
  const timedOut = (seconds: number[]) =>
    seconds.map((s, i) => {
      const a = attempt(plan, { cell: 'a', instance: `t-00${i + 1}`, wallMs: s * 1000 })
      a.timed_out = true
      return input(a, i + 1)
    })

  it('spread-out timeouts are agent behaviour: no finding', () => {
    expect(classifyAttempts(timedOut([120, 300, 480, 610, 900])).findings).toEqual([])
  })

  it('three of five at one value (within 2%) are a cap; two of five are not', () => {
    const three = classifyAttempts(timedOut([120, 598, 600, 606, 900])).findings
    expect(three.map((f) => f.message)).toEqual([
      '3 of 5 timeouts ended at ~598 s; a configuration cap, not agent behaviour',
    ])
    expect(classifyAttempts(timedOut([120, 300, 600, 606, 900])).findings).toEqual([])
  })
})

describe('checkLedger', () => {
  const a = attempt(plan, { cell: 'a', instance: 't-001', requests: 3, spend: 0.3 })
  const rows = ledgerFor(a).map((r, i) => ({
    ...r,
    started_at: `2026-11-01T10:00:0${i * 3}.000Z`,
  }))

  it('identical requests more than 2 s apart are not duplicates; an unpriced row makes spend unknown', () => {
    expect(checkLedger(rows, null)).toMatchObject({ rows: 3, suspected_duplicates: 0, raw_spend_usd: 0.3 })
    const unpriced = rows.map((r, i) => (i === 1 ? { ...r, spend_usd: null } : r))
    expect(checkLedger(unpriced, 3)).toMatchObject({ raw_spend_usd: null, dedup_spend_usd: null })
  })

  it('keeps the last three rows’ status, oldest first; non-inference rows are not counted', () => {
    const failed = [
      ...rows,
      {
        ...rows[0]!,
        request_id: 'f',
        started_at: '2026-11-01T10:00:20.000Z',
        status: 'failure' as const,
        http_status: 429,
        error: { class: 'rate_limited', code: null, message: null },
      },
      { ...rows[0]!, request_id: 'o', api: 'other' as const, started_at: '2026-11-01T10:00:30.000Z' },
    ]
    const c = checkLedger(failed, 4)
    expect(c.rows).toBe(4)
    expect(c.last.map((x) => x.status)).toEqual(['success', 'success', 'failure'])
    expect(c.last[2]).toEqual({ status: 'failure', error_class: 'rate_limited', http_status: 429 })
  })
})

describe('classifier: a self-report above the proxy with the network open (issue 27 point 3)', () => {
  /** One request through the proxy (the record's telemetry), six by the harness's own count. */
  const aroundProxy = (network: 'host' | 'proxy-only' | undefined): AttemptRecord => {
    const a = attempt(plan, { cell: 'a', instance: 't-001', requests: 1 })
    a.self_report = {
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 6,
      turns: null,
    }
    if (network) a.network = network
    return a
  }

  it('host network: telemetry_suspect (partial bypass), kept out of every resource figure', () => {
    const [c] = only([aroundProxy('host')])
    expect(c).toMatchObject({ telemetry_class: 'telemetry_suspect', anomaly: 'self_report_above_proxy' })
    expect(c!.telemetry_reason).toMatch(
      /reported 6 requests, the proxy saw 1, and its network was not closed/,
    )
  })

  it('host network: more tokens than the proxy saw (beyond 10%) is suspect too; within 10% is not', () => {
    const a = attempt(plan, { cell: 'a', instance: 't-001', requests: 1 })
    a.network = 'host'
    const seen = (a.telemetry.input_tokens ?? 0) + (a.telemetry.output_tokens ?? 0)
    const report = (total: number) => ({
      input_tokens: total - 10,
      output_tokens: 10,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: null,
      requests: a.telemetry.rows,
      turns: null,
    })
    a.self_report = report(Math.ceil(seen * 1.2))
    expect(only([a])[0]!.anomaly).toBe('self_report_above_proxy')
    a.self_report = report(Math.floor(seen * 1.05))
    expect(only([a])[0]!.telemetry_class).toBe('ok')
  })

  it('a proxy-only network (and a record from before the field) keeps the earlier rule', () => {
    for (const n of ['proxy-only', undefined] as const)
      expect(only([aroundProxy(n)])[0]!.anomaly).not.toBe('self_report_above_proxy')
  })
})
