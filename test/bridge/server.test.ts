import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CallRowSchema } from '../../src/bridge/calls.js'
import { openEnvironment } from '../../src/bridge/open.js'
import { serveHttp } from '../../src/bridge/server.js'
import { main } from '../../src/cli/index.js'
import { rawRequest } from '../support/raw-http.js'

const root = path.resolve(import.meta.dirname, '../..')
const entry = path.join(root, 'src/cli/entry.ts')
const ENV = path.join(import.meta.dirname, 'fixtures/shop.json')
const SECRET = 'NOTE-BODY-7f3a9c'

let dir: string
let state: string
let sandbox: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hw-bridge-'))
  state = path.join(dir, 'state')
  sandbox = path.join(dir, 'sandbox')
  mkdirSync(sandbox, { recursive: true })
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function cliArgs(extra: string[] = []): string[] {
  return [
    '--import',
    'tsx',
    entry,
    'bridge',
    'serve',
    '--env',
    ENV,
    '--state',
    state,
    '--sandbox',
    sandbox,
    ...extra,
  ]
}

async function stdioClient(): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: cliArgs(), cwd: root, stderr: 'pipe' }),
  )
  return client
}

function text(r: unknown): string {
  const c = (r as CallToolResult).content[0]
  return c?.type === 'text' ? c.text : ''
}

interface ShopWorld {
  orders: Record<string, { status: string; notes: unknown[] }>
}
function world(): ShopWorld {
  return JSON.parse(readFileSync(path.join(state, 'world.json'), 'utf8'))
}

function rows() {
  return readFileSync(path.join(state, 'calls.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => CallRowSchema.parse(JSON.parse(l)))
}

/** The same conversation over either transport. */
async function conversation(client: Client): Promise<void> {
  const listed = await client.listTools()
  expect(listed.tools.map((t) => t.name)).toEqual([
    'get_order',
    'cancel_order',
    'add_note',
    'bash',
    'read_file',
    'write_file',
  ])
  // The schema goes out verbatim.
  expect(listed.tools[0]?.inputSchema).toMatchObject({ properties: { order_id: { pattern: '^W[0-9]+$' } } })

  const got = await client.callTool({ name: 'get_order', arguments: { order_id: 'W1' } })
  expect(got.isError).toBeFalsy()
  expect(JSON.parse(text(got))).toEqual({ status: 'pending', items: ['lamp'], notes: [] })

  const cancelled = await client.callTool({
    name: 'cancel_order',
    arguments: { order_id: 'W1', reason: 'no_longer_needed' },
  })
  expect(text(cancelled)).toBe('order W1 cancelled (no_longer_needed)')
  // The world is on disk after the call, before the next.
  expect(world().orders.W1?.status).toBe('cancelled')

  const noted = await client.callTool({
    name: 'add_note',
    arguments: { order_id: 'W2', note: SECRET, priority: 2, wait_for_previous: false },
  })
  expect(noted.isError).toBeFalsy()
  expect(world().orders.W2?.notes).toEqual([{ text: SECRET, priority: 2 }])

  const unknown = await client.callTool({ name: 'delete_everything', arguments: {} })
  expect(unknown.isError).toBe(true)
  expect(text(unknown)).toContain('unknown tool')

  const invalid = await client.callTool({
    name: 'add_note',
    arguments: { order_id: 'W2', note: 'x', priority: 9 },
  })
  expect(invalid.isError).toBe(true)
  expect(text(invalid)).toMatch(/invalid arguments/)

  const missing = await client.callTool({ name: 'get_order', arguments: { order_id: 'W9' } })
  expect(missing.isError).toBe(true)
  expect(text(missing)).toBe('not found: orders.W9')

  // Still serving after the bad calls.
  expect((await client.callTool({ name: 'get_order', arguments: { order_id: 'W2' } })).isError).toBeFalsy()

  const log = rows()
  expect(log.map((r) => [r.tool, r.status, r.code ?? null])).toEqual([
    ['get_order', 'ok', null],
    ['cancel_order', 'ok', null],
    ['add_note', 'ok', null],
    ['delete_everything', 'invalid_arguments', 'unknown_tool'],
    ['add_note', 'invalid_arguments', 'invalid_arguments'],
    ['get_order', 'error', 'missing_path'],
    ['get_order', 'ok', null],
  ])
  expect(log[0]?.args_sha256).toBe(log[0]?.args_sha256)
  expect(log[0]?.args_sha256).not.toBe(log[6]?.args_sha256)
  // Argument bodies never reach the log.
  expect(readFileSync(path.join(state, 'calls.jsonl'), 'utf8')).not.toContain(SECRET)
}

describe('bridge serve over stdio (the CLI as a child process)', () => {
  it('serves tools, changes the world, answers bad calls with tool errors and logs every call', async () => {
    const client = await stdioClient()
    try {
      await conversation(client)
    } finally {
      await client.close()
    }
  }, 30_000)
})

describe('bridge over Streamable HTTP', () => {
  it('serves the same conversation statelessly; GET, other hosts and bad bodies are refused', async () => {
    const { dispatcher } = await openEnvironment(ENV, state, sandbox)
    const served = await serveHttp(dispatcher, '127.0.0.1', 0)
    const client = new Client({ name: 'test', version: '1' })
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)))
      await conversation(client)
      // GET (an SSE stream) is refused: the server is stateless.
      expect((await fetch(served.url)).status).toBe(405)
      // Only the bound host is accepted (DNS rebinding).
      const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
      const forged = await rawRequest(
        served.url,
        `POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      )
      expect(forged).toBe('HTTP/1.1 403 Forbidden')
      // A malformed body is a JSON-RPC error, and the server keeps serving.
      const garbage = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: '{not json',
      })
      expect(garbage.status).toBe(400)
      expect(
        (await client.callTool({ name: 'get_order', arguments: { order_id: 'W1' } })).isError,
      ).toBeFalsy()
    } finally {
      await client.close()
      await served.close()
    }
  })

  it('a reopened environment (a resumed turn starts a new server) continues from the saved world', async () => {
    const first = await openEnvironment(ENV, state, sandbox)
    await first.dispatcher.call('cancel_order', { order_id: 'W1', reason: 'ordered_by_mistake' })
    const second = await openEnvironment(ENV, state, sandbox)
    const got = await second.dispatcher.call('get_order', { order_id: 'W1' })
    expect(JSON.parse(got.text).status).toBe('cancelled')
    expect(rows().map((r) => r.tool)).toEqual(['cancel_order', 'get_order'])
  })

  it('the CLI refuses a non-loopback address and a malformed --http', async () => {
    const errs: string[] = []
    const write = process.stderr.write
    process.stderr.write = ((s: string) => {
      errs.push(String(s))
      return true
    }) as never
    try {
      expect(await main(['bridge', 'serve', '--env', ENV, '--state', state, '--http', '0.0.0.0:0'])).toBe(2)
      expect(await main(['bridge', 'serve', '--env', ENV, '--state', state, '--http', 'localhost'])).toBe(2)
    } finally {
      process.stderr.write = write
    }
    expect(errs.join('')).toContain('loopback addresses only')
    expect(errs.join('')).toContain('--http must be <host>:<port>')
  })
})
