import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CallLog, summarizeCalls } from '../../src/bridge/calls.js'
import { Dispatcher } from '../../src/bridge/dispatch.js'
import { openEnvironment } from '../../src/bridge/open.js'
import type { ToolProvider } from '../../src/bridge/provider.js'
import { serveHttp } from '../../src/bridge/server.js'

const ENV = path.join(import.meta.dirname, 'fixtures/shop.json')
let dir: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hw-dispatch-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('dispatcher', () => {
  it('serves any provider; a provider that throws gives a counted tool error, never a crash', async () => {
    const provider: ToolProvider = {
      tools: () => [{ name: 'boom', description: 'throws', inputSchema: { type: 'object', properties: {} } }],
      call: async () => {
        throw new Error('kaput')
      },
    }
    const log = path.join(dir, 'calls.jsonl')
    const d = new Dispatcher(provider, new CallLog(log))
    expect(await d.call('boom', {})).toEqual({
      status: 'error',
      code: 'internal',
      text: 'the tool failed: kaput',
    })
    expect(await d.call('boom', 'not an object')).toMatchObject({ status: 'invalid_arguments' })
    expect(summarizeCalls(log)).toEqual({ calls: 2, ok: 0, error: 1, invalid_arguments: 1, unreadable: 0 })
  })

  it('summarizeCalls counts a corrupt line instead of dropping it', () => {
    const log = path.join(dir, 'calls.jsonl')
    const d = new CallLog(log)
    d.append({ at: 'x', tool: 't', args_sha256: 'a'.repeat(64), status: 'ok', duration_ms: 1 })
    appendFileSync(log, '{"tool": 3}\nnot json\n')
    expect(summarizeCalls(log)).toEqual({ calls: 1, ok: 1, error: 0, invalid_arguments: 0, unreadable: 2 })
  })

  it('parallel HTTP calls are applied one at a time: no write is lost', async () => {
    const state = path.join(dir, 'state')
    const { dispatcher } = await openEnvironment(ENV, state, dir)
    const served = await serveHttp(dispatcher, '127.0.0.1', 0)
    const clients = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const c = new Client({ name: 't', version: '1' })
        await c.connect(new StreamableHTTPClientTransport(new URL(served.url)))
        return c
      }),
    )
    try {
      await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (clients[i % 4] as Client).callTool({
            name: 'add_note',
            arguments: { order_id: 'W1', note: `n${i}` },
          }),
        ),
      )
      const world = JSON.parse(readFileSync(path.join(state, 'world.json'), 'utf8'))
      expect(world.orders.W1.notes).toHaveLength(24)
      expect(new Set(world.orders.W1.notes.map((n: { text: string }) => n.text)).size).toBe(24)
      expect(summarizeCalls(path.join(state, 'calls.jsonl')).ok).toBe(24)
    } finally {
      await Promise.all(clients.map((c) => c.close()))
      await served.close()
    }
  })
})
