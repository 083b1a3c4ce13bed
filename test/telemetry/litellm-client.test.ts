import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LiteLLMClient, SpendLogsPagingError } from '../../src/telemetry/litellm/client.js'
import { attemptWindow, formatLiteLLMDate, toIsoUtc } from '../../src/telemetry/litellm/dates.js'
import { waitForQuiescence } from '../../src/telemetry/litellm/quiesce.js'
import { LiteLLMError, withRetry } from '../../src/telemetry/litellm/retry.js'
import { sha256 } from '../../src/util/json.js'
import { FakeLiteLLM, hashKey, spendRow } from './support/fake-litellm.js'

const T0 = Date.UTC(2026, 6, 30, 23, 0, 0)
const WINDOW = { start: '2026-07-30 22:00:00', end: '2026-07-31 06:00:00' }

let fake: FakeLiteLLM
let client: LiteLLMClient

beforeEach(async () => {
  fake = await new FakeLiteLLM().start()
  client = new LiteLLMClient({
    baseUrl: fake.origin,
    masterKey: fake.masterKey,
    retry: { baseMs: 1, maxMs: 5 },
  })
})
afterEach(async () => {
  await fake.close()
})

const get = (path: string) =>
  fetch(`${fake.origin}${path}`, { headers: { authorization: `Bearer ${fake.masterKey}` } })

describe('dates', () => {
  it('formats explicit UTC bounds as YYYY-MM-DD HH:MM:SS, never ISO T', () => {
    expect(formatLiteLLMDate(new Date('2026-07-30T23:05:00.789Z'))).toBe('2026-07-30 23:05:00')
    expect(
      attemptWindow(new Date('2026-07-30T23:05:00.789Z'), new Date('2026-07-30T23:06:10.001Z'), 2),
    ).toEqual({
      start: '2026-07-30 23:04:58',
      end: '2026-07-30 23:06:13',
    })
  })
  it('reads LiteLLM timestamps as UTC', () => {
    expect(toIsoUtc('2026-10-06T01:16:11.458+00:00')).toBe('2026-10-06T01:16:11.458Z')
    expect(toIsoUtc('2026-10-06 01:16:11')).toBe('2026-10-06T01:16:11.000Z')
    expect(toIsoUtc('nope')).toBeNull()
  })
})

describe('the fake follows the /spend/logs/v2 contract', () => {
  it('400 without dates, 400 on ISO T dates, 422 above page_size 1000', async () => {
    const none = await get('/spend/logs/v2')
    expect(none.status).toBe(400)
    expect(((await none.json()) as { error: { message: string } }).error.message).toBe(
      'Start date and end date are required',
    )
    const isoT = await get('/spend/logs/v2?start_date=2026-07-30T23:05:00Z&end_date=2026-07-31%2000:00:00')
    expect(isoT.status).toBe(400)
    expect(((await isoT.json()) as { error: { message: string } }).error.message).toBe(
      "Invalid date format: 2026-07-30T23:05:00Z. Expected: 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'",
    )
    const big = await get('/spend/logs/v2?start_date=2026-07-30&end_date=2026-07-31&page_size=1001')
    expect(big.status).toBe(422)
    expect(await big.json()).toMatchObject({
      detail: [{ loc: ['query', 'page_size'], type: 'less_than_equal' }],
    })
  })

  it('lists newest first by default and never the heavy columns', async () => {
    fake.seedRows('h', 3, T0)
    const res = (await (await get(`/spend/logs/v2?start_date=2026-07-30&end_date=2026-08-01`)).json()) as {
      data: Record<string, unknown>[]
    }
    expect(res.data.map((r) => r.request_id)).toEqual(['seed-2', 'seed-1', 'seed-0'])
    expect(res.data[0]).not.toHaveProperty('messages')
    expect(res.data[0]).not.toHaveProperty('proxy_server_request')
  })
})

describe('LiteLLMClient', () => {
  it('reports a 4xx contract error without retrying', async () => {
    const err = await client
      .spendLogsPage({ start: '2026-07-30T23:05:00Z', end: WINDOW.end, pageSize: 10 }, 1)
      .catch((e) => e)
    expect(err).toBeInstanceOf(LiteLLMError)
    expect((err as LiteLLMError).status).toBe(400)
    expect((err as Error).message).toContain('Invalid date format')
    expect(fake.requests.filter((r) => r.path === '/spend/logs/v2')).toHaveLength(1)
  })

  it('retries 5xx and 429 with backoff, then succeeds', async () => {
    fake.seedRows('h', 2, T0)
    fake.failNext = 2
    const page = await client.spendLogsPage({ ...WINDOW, pageSize: 10 }, 1)
    expect(page.data).toHaveLength(2)
    fake.failNext = 1
    fake.failStatus = 429
    expect((await client.spendLogsPage({ ...WINDOW, pageSize: 10 }, 1)).data).toHaveLength(2)
    expect(fake.requests.filter((r) => r.path === '/spend/logs/v2')).toHaveLength(5)
  })

  it('sends bounds as YYYY-MM-DD HH:MM:SS and page_size ≤ 1000', async () => {
    await client.fetchSpendLogs({ ...WINDOW, pageSize: 1000 })
    const q = fake.requests.at(-1)?.query ?? {}
    expect(q.start_date).toBe('2026-07-30 22:00:00')
    expect(q.end_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    expect(q.page_size).toBe('1000')
    await expect(client.spendLogsPage({ ...WINDOW, pageSize: 1001 }, 1)).rejects.toThrow(/page_size/)
  })

  it('generates, reads and deletes a virtual key; rows survive deletion', async () => {
    const k = await client.generateKey({
      key_alias: 'hw-a',
      duration: '1h',
      max_budget: 2,
      metadata: { cell: 'c' },
    })
    expect(k.key).toMatch(/^sk-/)
    const info = await client.keyInfo(k.key)
    expect(info.spend).toBe(0)
    expect(info.info.max_budget).toBe(2)
    fake.seedRows(hashKey(k.key), 2, T0)
    expect(await client.deleteKeys([k.key])).toEqual([k.key])
    await expect(client.keyInfo(k.key)).rejects.toMatchObject({ status: 404 })
    expect(
      (await client.fetchSpendLogs({ ...WINDOW, apiKeyHash: sha256(k.key), pageSize: 10 })).rows,
    ).toHaveLength(2)
  })
})

describe('F04: /spend/logs/v2 count capped at 10,000', () => {
  it('pages past total_pages until an empty page (page 102): 10,037 rows fetched', async () => {
    const h = sha256('sk-PLACEHOLDER-F04')
    fake.seedRows(h, 10_037, T0)
    const first = await client.spendLogsPage({ ...WINDOW, apiKeyHash: h, pageSize: 100 }, 1)
    expect(first).toMatchObject({ total: 10_000, total_pages: 100, total_is_capped: true })
    const got = await client.fetchSpendLogs({ ...WINDOW, apiKeyHash: h, pageSize: 100 })
    expect(got.rows).toHaveLength(10_037)
    expect(new Set(got.rows.map((r) => r.request_id)).size).toBe(10_037)
    expect(got.pages).toBe(102)
    expect(got).toMatchObject({ totalReported: 10_000, capped: true, duplicatesDropped: 0 })
  })

  it('counts exactly: the capped total is replaced by a full paged, de-duplicated count', async () => {
    const h = sha256('sk-PLACEHOLDER-count')
    const q = { ...WINDOW, apiKeyHash: h, pageSize: 1000 }
    fake.seedRows(h, 9_999, T0)
    // Under the cap the one-row count is exact and no page of rows is fetched.
    expect(await client.countSpendLogsExact(q)).toEqual({ total: 9_999, capped: false, paged: null })
    fake.seedRows(h, 38, T0 + 20_000_000, 1000, 'more')
    expect(await client.countSpendLogs(q)).toEqual({ total: 10_000, capped: true })
    const exact = await client.countSpendLogsExact(q)
    expect(exact.total).toBe(10_037)
    expect(exact.capped).toBe(true)
    expect(exact.paged?.rows).toHaveLength(10_037)
    // A pass that fails part-way counts what it got: a lower bound, never the capped 10 000.
    fake.onSpendLogsPage = (page) => {
      if (page === 2) fake.failNext = 99 // pages 1–2 served, page 3 fails
    }
    const retryless = new LiteLLMClient({
      baseUrl: fake.origin,
      masterKey: fake.masterKey,
      retry: { retries: 0 },
    })
    expect((await retryless.countSpendLogsExact(q)).total).toBe(2_000)
  })

  it('de-duplicates by request_id when a late row shifts the pages', async () => {
    const h = sha256('sk-PLACEHOLDER-dup')
    fake.seedRows(h, 250, T0)
    fake.onSpendLogsPage = (page) => {
      if (page === 2 && !fake.rows.some((r) => r.row.request_id === 'late')) {
        // A batch write lands mid-paging with an early startTime: everything after it moves down one.
        fake.addRows([
          { ...fake.rows[0]?.row, request_id: 'late', startTime: new Date(T0 - 500).toISOString() },
        ])
      }
    }
    const got = await client.fetchSpendLogs({ ...WINDOW, apiKeyHash: h, pageSize: 100 })
    expect(got.received).toBe(251)
    expect(got.duplicatesDropped).toBe(1)
    expect(got.rows).toHaveLength(250)
    expect(new Set(got.rows.map((r) => r.request_id)).size).toBe(250)
  })
})

describe('paging that fails part-way', () => {
  it('throws with the rows fetched so far instead of truncating silently', async () => {
    const h = sha256('sk-abort')
    fake.seedRows(h, 250, T0)
    fake.onSpendLogsPage = (page) => {
      if (page === 2) fake.failNext = 99
    }
    const err = await client
      .fetchSpendLogs({ ...WINDOW, apiKeyHash: h, pageSize: 100 })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SpendLogsPagingError)
    const partial = (err as SpendLogsPagingError).partial
    expect(partial.rows).toHaveLength(200)
    expect(partial.pages).toBe(2)
    expect((err as Error).message).toContain('aborted on page 3 after 200 rows')
  })
})

describe('F05: key filter returns nothing when the key is not hashed', () => {
  it('a raw key matches nothing; hashing locally finds the rows', async () => {
    const raw = 'sk-PLACEHOLDER'
    fake.seedRows(hashKey(raw), 4, T0)
    expect((await client.fetchSpendLogs({ ...WINDOW, apiKeyHash: raw, pageSize: 50 })).rows).toHaveLength(0)
    expect(
      (await client.fetchSpendLogs({ ...WINDOW, apiKeyHash: sha256(raw), pageSize: 50 })).rows,
    ).toHaveLength(4)
  })

  it('bounds are inclusive on startTime: a request starting inside and ending outside is kept', async () => {
    const h = sha256('sk-edge')
    const end = Date.UTC(2026, 6, 31, 0, 0, 0)
    fake.addRows([
      spendRow({
        request_id: 'at-end',
        api_key: h,
        spend: 0.01,
        prompt_tokens: 1,
        completion_tokens: 1,
        start: end,
        end: end + 60_000,
        model: 'm',
        metadata: {},
        sessionId: 's',
      }),
      spendRow({
        request_id: 'after',
        api_key: h,
        spend: 0.01,
        prompt_tokens: 1,
        completion_tokens: 1,
        start: end + 1000,
        end: end + 2000,
        model: 'm',
        metadata: {},
        sessionId: 's',
      }),
      spendRow({
        request_id: 'at-start',
        api_key: h,
        spend: 0.01,
        prompt_tokens: 1,
        completion_tokens: 1,
        start: end - 3_600_000,
        end: end,
        model: 'm',
        metadata: {},
        sessionId: 's',
      }),
    ])
    const got = await client.fetchSpendLogs({
      start: '2026-07-30 23:00:00',
      end: '2026-07-31 00:00:00',
      apiKeyHash: h,
      pageSize: 10,
    })
    expect(got.rows.map((r) => r.request_id).sort()).toEqual(['at-end', 'at-start'])
  })

  it('sha256 matches the documented example', () => {
    expect(sha256('sk-harnesswatch-test-0001')).toBe(
      '5bec7e6ff4c444c925bbf130ff8fbb3154721213fcf8065ffceb7c3b7861b400',
    )
  })
})

describe('withRetry', () => {
  it('uses exponential backoff with jitter and stops on a contract error', async () => {
    const delays: number[] = []
    let n = 0
    const out = await withRetry(
      async () => {
        n++
        if (n < 4) throw new LiteLLMError(503, '/x', 'busy')
        return 'ok'
      },
      { baseMs: 100, maxMs: 1000, random: () => 1, sleep: async (ms) => void delays.push(ms) },
    )
    expect(out).toBe('ok')
    expect(delays).toEqual([100, 200, 400])
    n = 0
    await expect(
      withRetry(
        async () => {
          n++
          throw new LiteLLMError(404, '/x', 'gone')
        },
        { sleep: async () => {} },
      ),
    ).rejects.toThrow(/404/)
    expect(n).toBe(1)
  })
})

describe('waitForQuiescence', () => {
  /** A clock that moves only when slept on (ms). */
  const manualClock = () => {
    let t = 0
    return {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms
      },
    }
  }

  it('waits for the expected rows, then for the settle window', async () => {
    const seen = [0, 1, 3, 3, 3, 3, 3]
    let i = 0
    const r = await waitForQuiescence(
      async () => ({ rows: seen[Math.min(i++, seen.length - 1)] ?? 0, spendUsd: null }),
      { settleMs: 200, maxWaitMs: 10_000, pollMs: 100, expectedRows: 3, ...manualClock() },
    )
    expect(r.settled).toBe(true)
    expect(r.last.rows).toBe(3)
    expect(r.waitedMs).toBe(400)
  })

  it('gives up after max_wait with a reason', async () => {
    const r = await waitForQuiescence(async () => ({ rows: 1, spendUsd: null }), {
      settleMs: 100,
      maxWaitMs: 1000,
      pollMs: 100,
      expectedRows: 2,
      ...manualClock(),
    })
    expect(r.settled).toBe(false)
    expect(r.reason).toBe('only 1 of 2 rows visible after 1 s')
  })
})
