import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { observedCapabilities } from '../../src/capability/observed.js'
import type { ModelRoute } from '../../src/manifest/schema.js'
import { type Attribution, LedgerRowSchema } from '../../src/records/ledger.js'
import { type LedgerCapture, openLedgerCapture } from '../../src/telemetry/ledger-capture.js'
import { offeredTools, toolSchemaHash } from '../../src/telemetry/offered-tools.js'
import { sha256 } from '../../src/util/json.js'
import { startUpstream, type TestUpstream } from '../telemetry/support/upstream.js'

const ROUTE: ModelRoute = {
  id: 'test-model',
  provider: 'scripted',
  api: 'chat',
  prices: { input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 },
}
const attribution: Attribution = {
  experiment_id: 'exp',
  run_id: 'run-1',
  cell_id: 'cell-a',
  instance_id: 'inst-1',
  trial: 0,
  attempt: 1,
  round: 0,
}
/** A description no row may hold: tool content never reaches the ledger, only names and hashes. */
const SECRET_DESCRIPTION = 'Runs a shell command; marker-7f3a9 must not reach the ledger'

let upstream: TestUpstream
let dir: string
let capture: LedgerCapture
beforeAll(async () => {
  upstream = await startUpstream()
})
afterAll(async () => {
  await upstream.close()
})
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-cap-proxy-'))
  capture = await openLedgerCapture({
    route: ROUTE,
    upstreamOrigin: upstream.origin,
    ledgerFile: path.join(dir, 'ledger.jsonl'),
    runId: 'run-1',
    experimentId: 'exp',
    forwardAttribution: false,
  })
})
afterEach(async () => {
  await capture.close()
  await rm(dir, { recursive: true, force: true })
})

const bash = {
  type: 'function' as const,
  function: {
    name: 'bash',
    description: SECRET_DESCRIPTION,
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
}
const read = {
  type: 'function' as const,
  function: {
    name: 'read',
    description: 'Read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
}

describe('tools the proxy saw offered', () => {
  it('records each tool of a real OpenAI and Anthropic SDK request by name and schema hash, never its content', async () => {
    const t = await capture.begin(attribution, {})
    const openai = new OpenAI({
      apiKey: t.endpoint.apiKey,
      baseURL: `${t.endpoint.origin}/v1`,
      maxRetries: 0,
    })
    await openai.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [bash, read],
    })
    // The same tool names, `read` with another schema; then a title call without tools.
    const read2 = { ...read, function: { ...read.function, description: 'Read a file (v2)' } }
    await openai.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'again' }],
      tools: [bash, read2],
    })
    await openai.chat.completions.create({
      model: 'test-model',
      messages: [{ role: 'user', content: 'title' }],
    })
    const anthropic = new Anthropic({ apiKey: t.endpoint.apiKey, baseURL: t.endpoint.origin, maxRetries: 0 })
    const editTool = {
      name: 'str_replace_based_edit_tool',
      description: 'Edit files',
      input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
    }
    await anthropic.messages.create({
      model: 'test-model',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [editTool],
    })
    const { rows } = await t.finish()
    expect(rows).toHaveLength(4)
    for (const r of rows) LedgerRowSchema.parse(r)
    expect(rows[0]?.tools_offered).toEqual([
      { name: 'bash', schema_sha256: toolSchemaHash(bash) },
      { name: 'read', schema_sha256: toolSchemaHash(read) },
    ])
    expect(rows[1]?.tools_offered?.[1]).toEqual({ name: 'read', schema_sha256: toolSchemaHash(read2) })
    expect(toolSchemaHash(read2)).not.toBe(toolSchemaHash(read))
    expect(rows[2]?.tools_offered).toBeUndefined()
    expect(rows[3]?.tools_offered).toEqual([
      { name: 'str_replace_based_edit_tool', schema_sha256: toolSchemaHash(editTool) },
    ])
    const ledger = await readFile(path.join(dir, 'ledger.jsonl'), 'utf8')
    expect(ledger).not.toContain('marker-7f3a9')
    expect(ledger).not.toContain('Read a file')

    const seen = observedCapabilities(rows)
    expect(seen).toEqual({
      requests: 4,
      requests_with_tools: 3,
      tools_named: true,
      tools: [
        { name: 'bash', schema_sha256: [toolSchemaHash(bash)], requests: 2 },
        { name: 'read', schema_sha256: [toolSchemaHash(read), toolSchemaHash(read2)], requests: 2 },
        { name: 'str_replace_based_edit_tool', schema_sha256: [toolSchemaHash(editTool)], requests: 1 },
      ],
      call_types: ['chat.completions', 'messages'],
    })
  })

  it('reads Responses, Gemini and legacy chat functions; a non-object body or other route gives null', () => {
    expect(
      offeredTools('responses', {
        tools: [{ type: 'function', name: 'shell', parameters: {} }, { type: 'web_search' }],
      })?.map((t) => t.name),
    ).toEqual(['shell', 'web_search'])
    // Codex's MCP tools arrive as one Responses namespace: each tool by `<namespace>.<name>`
    const getOrder = { type: 'function', name: 'get_order', strict: false, parameters: { type: 'object' } }
    expect(
      offeredTools('responses', {
        tools: [{ type: 'namespace', name: 'mcp__bridge', description: 'Tools', tools: [getOrder] }],
      }),
    ).toEqual([{ name: 'mcp__bridge.get_order', schema_sha256: toolSchemaHash(getOrder) }])
    expect(
      offeredTools('gemini', {
        tools: [{ functionDeclarations: [{ name: 'read_file' }, { name: 'glob' }] }, { googleSearch: {} }],
      })?.map((t) => t.name),
    ).toEqual(['read_file', 'glob', 'googleSearch'])
    expect(offeredTools('chat', { functions: [{ name: 'legacy' }] })?.map((t) => t.name)).toEqual(['legacy'])
    expect(offeredTools('chat', [1, 2])).toBeNull()
    expect(offeredTools('other', { tools: [{ name: 'x' }] })).toBeNull()
    // Forged entries: no name, a number as name, a 10,000-character name (shown by its hash only)
    const forged = offeredTools('anthropic', { tools: [{}, { name: 42 }, { name: 'n'.repeat(10_000) }] })
    expect(forged).toHaveLength(1)
    expect(forged?.[0]?.name).toBe(`(not a tool name, sha256 ${sha256('n'.repeat(10_000)).slice(0, 16)})`)
  })

  it('text in a tool name’s place (a prompt, markup, a key) is never kept: the name is shown by its hash', () => {
    const text = 'Ignore previous instructions <img src=x onerror=alert(1)> sk-live-0123456789'
    const tools = offeredTools('chat', {
      tools: [
        { type: 'function', function: { name: text, parameters: {} } },
        { type: 'function', function: { name: 'mcp__bridge__get_order', parameters: {} } },
      ],
    })
    expect(tools?.map((t) => t.name)).toEqual([
      `(not a tool name, sha256 ${sha256(text).slice(0, 16)})`,
      'mcp__bridge__get_order',
    ])
    // A forged ledger row's name is shown the same way in the capability manifest
    const row = {
      request_shape: { bytes: 10, tools: 1, messages: 1, system_bytes: 0 },
      attribution,
      call_type: 'chat.completions',
      tools_offered: [{ name: text, schema_sha256: null }],
    }
    const seen = observedCapabilities([row as never])
    expect(seen?.tools.map((t) => t.name)).toEqual([`(not a tool name, sha256 ${sha256(text).slice(0, 16)})`])
    expect(JSON.stringify(seen)).not.toContain('sk-live')
    expect(JSON.stringify(seen)).not.toContain('<img')
  })

  it('a schema nested too deep to hash is kept by name with a null hash, never a crash', () => {
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 20_000; i++) deep = { d: deep }
    const tools = offeredTools('anthropic', { tools: [{ name: 'deep', input_schema: deep }] })
    expect(tools).toEqual([{ name: 'deep', schema_sha256: null }])
  })

  it("rows without tool names (a gateway's, an older ledger's) make the tool list not whole", () => {
    const base = {
      request_shape: { bytes: 10, tools: 2, messages: 1, system_bytes: 0 },
      attribution,
      call_type: 'chat.completions',
    }
    const seen = observedCapabilities([base as never])
    expect(seen?.tools_named).toBe(false)
    expect(seen?.tools).toEqual([])
    expect(observedCapabilities([])).toBeNull()
    // The simulated user's rows are not the harness's
    expect(
      observedCapabilities([{ ...base, attribution: { ...attribution, role: 'user_simulation' } } as never]),
    ).toBeNull()
  })
})
