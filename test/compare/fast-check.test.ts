import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { fastCheck, fastCheckSource } from '../../src/ingest/fast-check.js'
import { AttemptRecordSchema, LegRecordSchema } from '../../src/records/attempt.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { attempt, ids, ledgerFor, legRecord, makePlan } from './fixtures.js'

/** Deterministic pseudo-random choices. */
function rng(seed: number): () => number {
  let a = seed
  return () => {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0
    return a / 2 ** 32
  }
}

const REPLACEMENTS: unknown[] = [null, -1, 0.5, 3, 'x', '', true, [], ['a'], [1], {}, { a: 1 }, 2 ** 60]

/** A copy of `value` with one change somewhere in it: a key removed, added or given another value. */
function mutate(value: unknown, r: () => number): unknown {
  const copy = structuredClone(value) as Record<string, unknown>
  const objects: Array<Record<string, unknown>> = []
  const walk = (v: unknown) => {
    if (v && typeof v === 'object') {
      objects.push(v as Record<string, unknown>)
      for (const x of Object.values(v)) walk(x)
    }
  }
  walk(copy)
  const target = objects[Math.floor(r() * objects.length)]!
  const keys = Object.keys(target)
  const key = keys[Math.floor(r() * keys.length)]
  const what = r()
  if (key === undefined || what < 0.15) target[`extra_${Math.floor(r() * 3)}`] = 1
  else if (what < 0.3 && !Array.isArray(target)) delete target[key]
  else if (what < 0.35) Object.defineProperty(target, '__proto__', { value: {}, enumerable: true })
  else target[key] = REPLACEMENTS[Math.floor(r() * REPLACEMENTS.length)]
  return JSON.parse(JSON.stringify(copy))
}

async function samples() {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
  const a = attempt(plan, { cell: 'a', instance: 't-001' })
  const withOptional = attempt(plan, {
    cell: 'b',
    instance: 't-002',
    outcome: 'infra_error',
    over: { outcome_reason: 'budget_exceeded', self_report: null },
    telemetry: { unpriced_rows: 0, reconciliation: null, models_observed: ['m1', 'm2'] },
  })
  const row = ledgerFor(a)[0]!
  const failed = {
    ...row,
    status: 'failure' as const,
    error: { class: 'rate_limited', code: '429', message: null },
    attribution: null,
    usage_object: { prompt_tokens: 3 },
  }
  // Request roles and parts as the proxy writes them.
  const roled = {
    ...row,
    request_role: {
      role: 'retry',
      rule: 'retry.same_body_after_error',
      evidence: 'same body',
      also: ['primary.same_system'],
    },
    request_parts: {
      tool_schema_bytes: 6000,
      history_bytes: 120,
      latest_message_bytes: 40,
      cache_prefix_bytes: 5000,
      message_roles: { system: 1, user: 1, assistant: 1, tool: 1, other: 0 },
      system_sha256: '0123456789abcdef',
      tools_sha256: null,
      body_sha256: 'fedcba9876543210',
      params: { temperature: 0.2, stream: true, reasoning_effort: 'high' },
      params_rejected: ['top_p'],
      reason: null,
    },
  }
  const profiled = attempt(plan, {
    cell: 'a',
    instance: 't-002',
    telemetry: {
      request_roles: [{ role: 'primary', requests: 3, spend_usd: 0.01 }],
      request_parts: {
        requests: 3,
        bytes: 9000,
        tool_schema_bytes: 6000,
        system_bytes: 1000,
        history_bytes: 1500,
        latest_message_bytes: 200,
        cache_prefix_bytes: 4000,
        unread: 0,
        params: [{ name: 'stream', values: ['true'] }],
      },
    },
  })
  return [
    { schema: AttemptRecordSchema, values: [a, withOptional, profiled] },
    { schema: LedgerRowSchema, values: [row, failed, roled] },
    { schema: LegRecordSchema, values: [legRecord(plan, plan.legs[0]!.leg, 1)] },
  ] as const
}

describe('fastCheck: a compiled yes/no version of a zod schema', () => {
  it('accepts valid artifact rows, exactly as zod returns them', async () => {
    for (const { schema, values } of await samples()) {
      const check = fastCheck(schema)!
      expect(check).not.toBeNull()
      for (const v of values) {
        const json = JSON.parse(JSON.stringify(v))
        expect(check(json)).toBe(true)
        expect(schema.parse(json)).toEqual(json)
      }
    }
  })

  it('agrees with zod on 6,000 mutated rows, never accepting what zod rejects or changes', async () => {
    const r = rng(5)
    let rejected = 0
    for (const { schema, values } of await samples()) {
      const check = fastCheck(schema)!
      for (let i = 0; i < 2000; i++) {
        const v = mutate(values[i % values.length], r)
        const zod = schema.safeParse(v)
        if (check(v)) {
          expect(zod.success).toBe(true)
          expect(zod.data).toEqual(v)
        } else if (zod.success) {
          // The one documented difference: zod accepts a record with a `__proto__` key but drops it.
          expect(JSON.stringify(v)).toContain('"__proto__"')
        } else rejected++
      }
    }
    expect(rejected).toBeGreaterThan(3000)
  })

  it('the same check runs from its source (for the worker thread)', async () => {
    const [{ values }] = await samples()
    const source = fastCheckSource(AttemptRecordSchema)!
    const check = new Function('c', source)([]) as (v: unknown) => boolean
    expect(check(JSON.parse(JSON.stringify(values[0])))).toBe(true)
    expect(check({ ...values[0], trial: -1 })).toBe(false)
  })

  it('length limits and regular expressions decide as zod does, on this thread and from the source', () => {
    const schema = z.strictObject({
      name: z.string().min(1).max(5),
      hash: z
        .string()
        .regex(/^[0-9a-f]{4}$/)
        .nullable(),
      tags: z.array(z.string().max(2)).max(2),
    })
    const check = fastCheck(schema)!
    const source = fastCheckSource(schema)!
    const fromSource = new Function('c', source)([]) as (v: unknown) => boolean
    const values = [
      { name: 'bash', hash: '0a1f', tags: ['ab'] },
      { name: 'bash', hash: null, tags: [] },
      { name: '', hash: null, tags: [] },
      { name: 'abcdef', hash: null, tags: [] },
      { name: 'a', hash: '0A1F', tags: [] },
      { name: 'a', hash: '0a1f0', tags: [] },
      { name: 'a', hash: null, tags: ['a', 'b', 'c'] },
      { name: 'a', hash: null, tags: ['abc'] },
    ]
    const verdicts = values.map((v) => schema.safeParse(v).success)
    expect(verdicts).toEqual([true, true, false, false, false, false, false, false])
    expect(values.map(check)).toEqual(verdicts)
    expect(values.map(fromSource)).toEqual(verdicts)
    // zod counts code points where UTF-16 units leave it in doubt: the check never accepts what zod
    // rejects, and leaves the doubtful strings to zod.
    const counted = z.strictObject({ a: z.string().min(2).max(3) })
    const strings = ['😀😀😀', '😀', '😀a', 'ab', 'abcd', '\uD800']
    expect(strings.map((a) => counted.safeParse({ a }).success)).toEqual([
      true,
      false,
      true,
      true,
      false,
      false,
    ])
    expect(strings.map((a) => fastCheck(counted)!({ a }))).toEqual([false, false, false, true, false, false])
  })

  it('no fast path for schemas it does not fully understand (zod then decides alone)', () => {
    const unsupported: z.ZodType[] = [
      z.object({ a: z.string() }), // strips unknown keys: the value would change
      z.looseObject({ a: z.string() }),
      z.strictObject({ a: z.string().email() }),
      z.strictObject({ a: z.string().regex(/a/g) }), // a global regex keeps state between tests
      z.strictObject({ a: z.string().default('x') }),
      z.strictObject({ a: z.string().transform((s) => s.length) }),
      z.strictObject({ a: z.number().refine((x) => x > 1) }),
      z.strictObject({ toString: z.string() }),
      z.union([z.string(), z.number()]),
      z.array(z.string()).refine((a) => a.length > 0),
    ]
    for (const s of unsupported) expect(fastCheck(s)).toBeNull()
    const ok = z.strictObject({ n: z.number().int().positive(), e: z.enum(['x', 'y']), l: z.literal(2) })
    const check = fastCheck(ok)!
    expect([
      check({ n: 1, e: 'x', l: 2 }),
      check({ n: 0, e: 'x', l: 2 }),
      check({ n: 1.5, e: 'x', l: 2 }),
    ]).toEqual([true, false, false])
    expect(check({ n: 1, e: 'z', l: 2 })).toBe(false)
    expect(check({ n: 1, e: 'x', l: 2, m: 0 })).toBe(false)
    // Upper bounds, inclusive and exclusive, as zod decides them.
    const bounded = fastCheck(z.strictObject({ a: z.number().max(3), b: z.number().lt(3) }))!
    const cases = [
      { a: 3, b: 2.5 },
      { a: 3.01, b: 2 },
      { a: 1, b: 3 },
    ]
    expect(cases.map((v) => bounded(v))).toEqual([true, false, false])
    expect(
      cases.map((v) => z.strictObject({ a: z.number().max(3), b: z.number().lt(3) }).safeParse(v).success),
    ).toEqual([true, false, false])
  })
})
