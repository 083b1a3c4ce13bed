import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { openLedgerCapture } from '../../src/telemetry/ledger-capture.js'
import { claudePrimary, claudeSubagent, claudeTitle, codexPrimary } from './support/harness-requests.js'
import { startUpstream, type TestUpstream } from './support/upstream.js'

const ROUTE: ModelRoute = {
  id: 'claude-sonnet-4-5',
  provider: 'scripted',
  api: 'anthropic',
  prices: { input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 },
}
const UPSTREAM_KEY = 'sk-real-upstream-key-roles-0123456789'

let upstream: TestUpstream
let dir: string
beforeAll(async () => {
  upstream = await startUpstream()
  dir = await mkdtemp(path.join(tmpdir(), 'hw-roles-'))
})
afterAll(async () => {
  await upstream.close()
  await rm(dir, { recursive: true, force: true })
})

describe('the recording proxy records each request’s role, rule and parts', () => {
  it('on a Claude Code session through 127.0.0.1: title, primary, a retry after a 500, a subagent, a broken body', async () => {
    const ledgerFile = path.join(dir, 'ledger.jsonl')
    const capture = await openLedgerCapture({
      route: ROUTE,
      upstreamOrigin: upstream.origin,
      upstreamKey: UPSTREAM_KEY,
      ledgerFile,
      runId: 'run-1',
      experimentId: 'exp',
      forwardAttribution: false,
    })
    try {
      const t = await capture.begin(
        { experiment_id: 'exp', run_id: 'run-1', cell_id: 'cc', instance_id: 'i1', trial: 0, attempt: 1 },
        {},
      )
      const send = async (body: unknown, mode?: string, api = '/v1/messages'): Promise<number> => {
        const res = await fetch(`${t.endpoint.origin}${api}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': t.endpoint.apiKey,
            'anthropic-version': '2023-06-01',
            ...(mode ? { 'x-test-mode': mode } : {}),
          },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        })
        await res.text()
        return res.status
      }
      expect(await send(claudeTitle())).toBe(200)
      expect(await send(claudePrimary(0))).toBe(200)
      expect(await send(claudePrimary(1), 'error500')).toBe(500)
      expect(await send(claudePrimary(1))).toBe(200)
      expect(await send(claudeSubagent())).toBe(200)
      expect(await send('{"model": "claude-sonnet-4-5", "messages": [')).toBe(200)
      expect(await send(codexPrimary(0), undefined, '/v1/responses')).toBe(200)
      const { rows, summary } = await t.finish()

      expect(rows.map((r) => [r.request_role?.role, r.request_role?.rule])).toEqual([
        ['title', 'title.asks_for_title'],
        ['primary', 'primary.first_with_tools'],
        ['primary', 'primary.same_system'],
        ['retry', 'retry.same_body_after_error'],
        ['subagent', 'subagent.other_system_fewer_tools'],
        ['unclassified', 'unclassified.unread'],
        ['fallback', 'fallback.model_differs'],
      ])
      expect(rows[0]?.request_role?.also).toEqual(['fallback.model_differs'])
      expect(rows[3]?.request_role?.evidence).toMatch(
        /^same body hash as request 3, sent \d+\.\d s after it failed$/,
      )
      expect(rows[5]?.request_role?.evidence).toBe('the body is not a JSON object')
      expect(rows[5]?.request_parts).toMatchObject({
        tool_schema_bytes: null,
        reason: 'the body is not a JSON object',
      })

      // The parts of the second turn: its prefix is the whole first turn, byte for byte.
      const p0 = claudePrimary(0)
      const prefix0 =
        Buffer.byteLength(JSON.stringify(p0.tools)) +
        Buffer.byteLength(JSON.stringify(p0.system)) +
        Buffer.byteLength(JSON.stringify((p0.messages as unknown[])[0]))
      expect(rows[1]?.request_parts?.cache_prefix_bytes).toBe(0)
      expect(rows[2]?.request_parts?.cache_prefix_bytes).toBe(prefix0)
      expect(rows[2]?.request_parts).toMatchObject({
        tool_schema_bytes: Buffer.byteLength(JSON.stringify(p0.tools)),
        message_roles: { system: 1, user: 1, assistant: 1, tool: 1, other: 0 },
        params: { temperature: 1, max_output_tokens: 32000, stream: true },
      })
      // The retry is the same body as the failed request: all of it is an identical prefix.
      const msgs1 = claudePrimary(1).messages as unknown[]
      expect(rows[3]?.request_parts?.cache_prefix_bytes).toBe(
        prefix0 -
          Buffer.byteLength(JSON.stringify((p0.messages as unknown[])[0])) +
          msgs1.reduce((n: number, m) => n + Buffer.byteLength(JSON.stringify(m)), 0),
      )
      expect(rows[2]?.request_parts?.body_sha256).toBe(rows[3]?.request_parts?.body_sha256)
      expect(rows[6]?.request_parts?.params).toMatchObject({
        reasoning_effort: 'medium',
        tool_choice: 'auto',
      })

      // Per-role counts and spend of the attempt: each answered request costs 60·1 + 30·0.1 + 10·1.25 + 20·10 per Mtok
      // (Anthropic usage) or 60·1 + 40·0.1 + 20·10 (Responses); the 500 cost nothing.
      expect(summary.request_roles).toEqual([
        { role: 'primary', requests: 2, spend_usd: 0.0002755 },
        { role: 'title', requests: 1, spend_usd: 0.0002755 },
        { role: 'subagent', requests: 1, spend_usd: 0.0002755 },
        { role: 'retry', requests: 1, spend_usd: 0.0002755 },
        { role: 'fallback', requests: 1, spend_usd: 0.000264 },
        { role: 'unclassified', requests: 1, spend_usd: 0.0002755 },
      ])
      expect(summary.request_parts?.requests).toBe(6)
      expect(summary.request_parts?.unread).toBe(1)
      expect(summary.request_parts?.params.find((x) => x.name === 'stream')?.values).toEqual(['true'])

      // The ledger on disk: valid rows, no body, no key, no prompt text, no tool description (tool
      // names are kept, with their schema hashes, for the capability manifest).
      const text = await readFile(ledgerFile, 'utf8')
      const lines = text.trim().split('\n')
      expect(lines).toHaveLength(7)
      for (const l of lines) LedgerRowSchema.parse(JSON.parse(l))
      for (const secret of [
        UPSTREAM_KEY,
        t.endpoint.apiKey,
        'user_0123',
        'test_nested_quotes',
        'Claude Code',
        'Executes a given bash command',
      ]) {
        expect(text).not.toContain(secret)
      }
    } finally {
      await capture.close()
    }
  })
})
