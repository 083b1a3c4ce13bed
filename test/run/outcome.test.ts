import { describe, expect, it } from 'vitest'
import type { LedgerRow } from '../../src/records/ledger.js'
import {
  backoffSeconds,
  classifyExit,
  decideOutcome,
  type ExitFacts,
  shouldRetry,
} from '../../src/run/outcome.js'

function row(over: Partial<LedgerRow> = {}): LedgerRow {
  return {
    schema_version: 1,
    request_id: 'r1',
    source: 'proxy',
    call_type: 'chat.completions',
    api: 'chat',
    stream: true,
    model: 'm',
    model_observed: 'm',
    model_group: null,
    provider: 'openai',
    status: 'success',
    http_status: 200,
    error: null,
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:00:01.000Z',
    first_token_at: null,
    duration_ms: 1000,
    ttft_ms: null,
    request_shape: null,
    tokens: { input_total: 10, input_fresh: 10, cache_read: 0, cache_write: 0, output: 5, reasoning: null },
    cache_semantics: 'inclusive',
    spend_usd: 0.001,
    spend_source: 'proxy',
    spend_logged_usd: null,
    spend_recomputed_usd: null,
    flags: [],
    attribution: null,
    usage_object: null,
    additional_usage_values: null,
    ...over,
  }
}

const failed = (cls: string, http: number): LedgerRow =>
  row({
    status: 'failure',
    http_status: http,
    error: { class: cls, code: null, message: null },
    spend_usd: 0,
  })

const facts = (over: Partial<ExitFacts> = {}): ExitFacts => ({
  infraError: null,
  exitCode: 0,
  signal: null,
  timedOut: false,
  startupError: null,
  budgetExceeded: false,
  rows: [],
  deliverableBytes: 0,
  ...over,
})

describe('classifyExit', () => {
  it('gives clean, timeout, error and infra for the plain cases', () => {
    expect(classifyExit(facts())).toEqual({ class: 'clean', reason: null })
    expect(classifyExit(facts({ timedOut: true, exitCode: null, signal: 'SIGTERM' })).class).toBe('timeout')
    expect(classifyExit(facts({ exitCode: 2 }))).toEqual({ class: 'error', reason: 'exit code 2' })
    expect(classifyExit(facts({ exitCode: null, signal: 'SIGSEGV' }))).toEqual({
      class: 'error',
      reason: 'ended by SIGSEGV',
    })
    expect(classifyExit(facts({ startupError: 'bad flag' }))).toEqual({
      class: 'error',
      reason: 'startup: bad flag',
    })
    expect(classifyExit(facts({ infraError: 'workspace setup failed: ENOSPC' }))).toEqual({
      class: 'infra',
      reason: 'workspace setup failed: ENOSPC',
    })
  })

  it('is budget whenever the proxy refused for budget, even when the harness exited 0 (F06)', () => {
    expect(classifyExit(facts({ budgetExceeded: true, rows: [failed('budget_exceeded', 400)] }))).toEqual({
      class: 'budget',
      reason: 'budget_exceeded',
    })
    expect(classifyExit(facts({ budgetExceeded: true, timedOut: true, exitCode: null })).class).toBe('budget')
  })

  it('is infra when a non-clean run with an empty deliverable ended on a route failure', () => {
    expect(classifyExit(facts({ exitCode: 1, rows: [row(), failed('auth_failed', 401)] }))).toEqual({
      class: 'infra',
      reason: 'auth_failed',
    })
    expect(classifyExit(facts({ exitCode: 1, rows: [row(), failed('upstream_5xx', 502)] }))).toEqual({
      class: 'infra',
      reason: 'upstream_5xx',
    })
    // A failure the harness recovered from is not the cause.
    expect(classifyExit(facts({ exitCode: 1, rows: [failed('upstream_5xx', 502), row()] })).class).toBe(
      'error',
    )
    // Work was delivered: the harness's own failure.
    expect(
      classifyExit(facts({ exitCode: 1, deliverableBytes: 10, rows: [failed('upstream_5xx', 502)] })).class,
    ).toBe('error')
    // A clean exit is never re-classed by its rows.
    expect(classifyExit(facts({ rows: [failed('upstream_5xx', 502)] })).class).toBe('clean')
  })
})

describe('decideOutcome', () => {
  it('F06: the field case (empty patch, exit error, budget_exceeded rows) is infra_error, not unresolved', () => {
    const exit = classifyExit(
      facts({
        exitCode: 1,
        budgetExceeded: true,
        rows: [failed('budget_exceeded', 400)],
        deliverableBytes: 0,
      }),
    )
    expect(decideOutcome({ exit, verifier: 'fail', deliverableBytes: 0 })).toEqual({
      outcome: 'infra_error',
      reason: 'budget_exceeded',
    })
  })

  it('keeps the verdict when work was delivered, even after a timeout or a budget stop', () => {
    const budget = { class: 'budget' as const, reason: 'budget_exceeded' }
    expect(decideOutcome({ exit: budget, verifier: 'pass', deliverableBytes: 40 }).outcome).toBe('resolved')
    const timeout = { class: 'timeout' as const, reason: 'wall-clock limit reached' }
    expect(decideOutcome({ exit: timeout, verifier: 'pass', deliverableBytes: 40 }).outcome).toBe('resolved')
    expect(decideOutcome({ exit: timeout, verifier: 'fail', deliverableBytes: 0 }).outcome).toBe('unresolved')
  })

  it('is ungraded when the verifier errs or times out, infra_error when our side failed', () => {
    const clean = { class: 'clean' as const, reason: null }
    expect(decideOutcome({ exit: clean, verifier: 'timeout', deliverableBytes: 1 })).toEqual({
      outcome: 'ungraded',
      reason: 'verifier timeout',
    })
    const crashed = { class: 'infra' as const, reason: 'verifier crashed: exit 127' }
    expect(decideOutcome({ exit: crashed, verifier: 'error', deliverableBytes: 1 }).outcome).toBe('ungraded')
    const setup = { class: 'infra' as const, reason: 'workspace setup failed: x' }
    expect(decideOutcome({ exit: setup, verifier: 'skipped', deliverableBytes: 0 })).toEqual({
      outcome: 'infra_error',
      reason: 'workspace setup failed: x',
    })
    expect(decideOutcome({ exit: clean, verifier: 'fail', deliverableBytes: 0 })).toEqual({
      outcome: 'unresolved',
      reason: null,
    })
  })
})

describe('retries', () => {
  it('retries only the declared classes, up to max', () => {
    const r = { max: 2, on: ['infra', 'timeout'] as const }
    expect(shouldRetry('infra', 0, { ...r, on: [...r.on] })).toBe(true)
    expect(shouldRetry('timeout', 1, { ...r, on: [...r.on] })).toBe(true)
    expect(shouldRetry('timeout', 2, { ...r, on: [...r.on] })).toBe(false)
    expect(shouldRetry('error', 0, { ...r, on: [...r.on] })).toBe(false)
    expect(shouldRetry('clean', 0, { max: 5, on: ['infra'] })).toBe(false)
  })

  it('backs off exponentially: backoff_s × 2^(n−1)', () => {
    expect([1, 2, 3, 4].map((n) => backoffSeconds(n, 5))).toEqual([5, 10, 20, 40])
    expect(backoffSeconds(3, 0)).toBe(0)
  })
})
