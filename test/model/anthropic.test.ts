import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { GREETING_INSTRUCTION, writePanel } from './fixtures.js'

const SYSTEM = `You are Claude Code. ${'Prefer small, reviewed changes. '.repeat(220)}`
const bashTool: Anthropic.Tool = {
  name: 'Bash',
  description: 'Executes a bash command',
  input_schema: {
    type: 'object',
    properties: { command: { type: 'string' }, timeout: { type: 'number' } },
    required: ['command'],
  },
}

let model: ScriptedModel
let client: Anthropic

beforeAll(async () => {
  model = await startScriptedModel({ panelDirs: [writePanel()], config: { success_rate: 1 } })
  client = new Anthropic({ baseURL: model.origin, apiKey: 'sk-ant-test', maxRetries: 0 })
})
afterAll(() => model.close())

describe('Anthropic Messages with the official client', () => {
  it('non-stream: tool_use, round trip, input_tokens EXCLUDE cache reads and writes', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: GREETING_INSTRUCTION }]
    const r1 = await client.messages.create({
      model: 'claude-scripted',
      max_tokens: 1024,
      system: SYSTEM,
      messages,
      tools: [bashTool],
    })
    expect(r1.stop_reason).toBe('tool_use')
    const use = r1.content[0]
    if (use?.type !== 'tool_use') throw new Error('expected tool_use')
    expect(use.input).toEqual({ command: "ls -la && cat -- 'greet.sh'" })
    const count = await client.messages.countTokens({
      model: 'claude-scripted',
      system: SYSTEM,
      messages,
      tools: [bashTool],
    })
    // first time: the whole ≥1024-token prompt is written to the cache
    expect(r1.usage.cache_read_input_tokens).toBe(0)
    expect(r1.usage.cache_creation_input_tokens).toBe(count.input_tokens)
    expect(r1.usage.input_tokens).toBe(0)

    messages.push(
      { role: 'assistant', content: r1.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'greet.sh check.sh' }] },
    )
    const r2 = await client.messages.create({
      model: 'claude-scripted',
      max_tokens: 1024,
      system: SYSTEM,
      messages,
      tools: [bashTool],
    })
    const u = r2.usage
    const total2 = (
      await client.messages.countTokens({
        model: 'claude-scripted',
        system: SYSTEM,
        messages,
        tools: [bashTool],
      })
    ).input_tokens
    expect(u.cache_read_input_tokens).toBe(count.input_tokens)
    expect(u.input_tokens + u.cache_read_input_tokens! + u.cache_creation_input_tokens!).toBe(total2)
    expect(u.cache_creation_input_tokens).toBe(total2 - count.input_tokens)
    const use2 = r2.content[0]
    expect(use2?.type === 'tool_use' && (use2.input as { command: string }).command).toContain('HW_SOLVE')
  })

  it('stream: events assemble into the same message; usage arrives in message_delta', async () => {
    const stream = client.messages.stream({
      model: 'claude-scripted',
      max_tokens: 1024,
      messages: [{ role: 'user', content: GREETING_INSTRUCTION }],
      tools: [bashTool],
    })
    const types: string[] = []
    stream.on('streamEvent', (e) => types.push(e.type))
    const final = await stream.finalMessage()
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const use = final.content[0]
    expect(use?.type === 'tool_use' && use.input).toEqual({ command: "ls -la && cat -- 'greet.sh'" })
    expect(final.usage.output_tokens).toBeGreaterThan(5)
  })

  it('stream text: the final answer, stop_reason end_turn', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: GREETING_INSTRUCTION }]
    for (let i = 0; i < 3; i++) {
      messages.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${i}`, name: 'Bash', input: {} }],
      })
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'ok' }] })
    }
    const final = await client.messages
      .stream({ model: 'claude-scripted', max_tokens: 100, messages, tools: [bashTool] })
      .finalMessage()
    expect(final.stop_reason).toBe('end_turn')
    expect(final.content).toEqual([{ type: 'text', text: 'Done: I applied the fix and ran `sh check.sh`.' }])
  })

  it('same conversation text: Anthropic input + cache_read + cache_write = OpenAI prompt_tokens', async () => {
    const fresh = await startScriptedModel({ panelDirs: [writePanel()], config: { success_rate: 1 } })
    try {
      const anthropic = new Anthropic({ baseURL: fresh.origin, apiKey: 'k', maxRetries: 0 })
      const openai = new OpenAI({ baseURL: `${fresh.origin}/v1`, apiKey: 'k', maxRetries: 0 })
      const turns = [
        [{ role: 'user' as const, content: GREETING_INSTRUCTION }],
        [
          { role: 'user' as const, content: GREETING_INSTRUCTION },
          { role: 'assistant' as const, content: 'Looking.' },
          { role: 'user' as const, content: 'Go on.' },
        ],
      ]
      const pairs: { a: Anthropic.Usage; o: OpenAI.CompletionUsage }[] = []
      for (const messages of turns) {
        const a = await anthropic.messages.create({ model: 'm', max_tokens: 10, system: SYSTEM, messages })
        const o = await openai.chat.completions.create({
          model: 'm',
          messages: [{ role: 'system', content: SYSTEM }, ...messages],
        })
        pairs.push({ a: a.usage, o: o.usage! })
      }
      for (const { a, o } of pairs) {
        expect(a.input_tokens + a.cache_read_input_tokens! + a.cache_creation_input_tokens!).toBe(
          o.prompt_tokens,
        )
        expect(a.cache_read_input_tokens).toBe(o.prompt_tokens_details!.cached_tokens)
      }
      expect(pairs[1]!.o.prompt_tokens_details!.cached_tokens).toBe(pairs[0]!.o.prompt_tokens)
      expect(pairs[1]!.a.cache_read_input_tokens).toBeGreaterThan(1024)
    } finally {
      await fresh.close()
    }
  })

  it('caching off: no reads, no writes, input_tokens is the whole prompt', async () => {
    const off = await startScriptedModel({ config: { caching: false } })
    try {
      const c = new Anthropic({ baseURL: off.origin, apiKey: 'k', maxRetries: 0 })
      const req = {
        model: 'm',
        max_tokens: 10,
        system: SYSTEM,
        messages: [{ role: 'user' as const, content: 'hi' }],
      }
      await c.messages.create(req)
      const r = await c.messages.create(req)
      const count = await c.messages.countTokens({ model: 'm', system: SYSTEM, messages: req.messages })
      expect(r.usage).toMatchObject({
        input_tokens: count.input_tokens,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      })
    } finally {
      await off.close()
    }
  })
})
