import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { rawRequest } from '../support/raw-http.js'
import { GREETING_INSTRUCTION, writePanel } from './fixtures.js'

const SYSTEM = `You are a careful coding agent. ${'Follow the repository conventions. '.repeat(220)}`
const bashTool = {
  type: 'function' as const,
  function: {
    name: 'bash',
    description: 'Run a shell command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
}

let model: ScriptedModel
let client: OpenAI

beforeAll(async () => {
  model = await startScriptedModel({ panelDirs: [writePanel()], config: { success_rate: 1 } })
  client = new OpenAI({ baseURL: `${model.origin}/v1`, apiKey: 'sk-test', maxRetries: 0 })
})
afterAll(() => model.close())

describe('OpenAI Chat Completions with the official client', () => {
  it('non-stream: a tool call, then the round trip continues with a tool result', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: GREETING_INSTRUCTION },
    ]
    const r1 = await client.chat.completions.create({ model: 'gpt-5-mini', messages, tools: [bashTool] })
    const call = r1.choices[0]!.message.tool_calls?.[0]
    expect(r1.choices[0]!.finish_reason).toBe('tool_calls')
    expect(call?.type === 'function' && call.function.name).toBe('bash')
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({
      command: "ls -la && cat -- 'greet.sh'",
    })
    expect(r1.model).toBe('gpt-5-mini')
    expect(r1.usage!.prompt_tokens).toBeGreaterThan(1024)
    expect(r1.usage!.prompt_tokens_details!.cached_tokens).toBe(0)
    expect(r1.usage!.total_tokens).toBe(r1.usage!.prompt_tokens + r1.usage!.completion_tokens)

    messages.push(r1.choices[0]!.message, {
      role: 'tool',
      tool_call_id: call!.id,
      content: 'greet.sh check.sh',
    })
    const r2 = await client.chat.completions.create({ model: 'gpt-5-mini', messages, tools: [bashTool] })
    const call2 = r2.choices[0]!.message.tool_calls?.[0]
    expect(call2?.type === 'function' && call2.function.arguments).toContain("bash <<'HW_SOLVE'")
    // prompt_tokens INCLUDES cached_tokens; the whole first prompt is the cached prefix of the second
    expect(r2.usage!.prompt_tokens_details!.cached_tokens).toBe(r1.usage!.prompt_tokens)
    expect(r2.usage!.prompt_tokens).toBeGreaterThan(r1.usage!.prompt_tokens)
    expect(call2!.id).not.toBe(call!.id)
  })

  it('stream: deltas assemble into the same tool call; include_usage adds a usage chunk', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-5-mini',
      messages: [{ role: 'user', content: GREETING_INSTRUCTION }],
      tools: [bashTool],
      stream_options: { include_usage: true },
    })
    let chunks = 0
    for await (const _ of stream) chunks++
    const done = await stream.finalChatCompletion()
    expect(chunks).toBeGreaterThanOrEqual(4)
    const call = done.choices[0]!.message.tool_calls?.[0]
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({
      command: "ls -la && cat -- 'greet.sh'",
    })
    expect(done.usage?.completion_tokens).toBeGreaterThan(5)
  })

  it('stream text: the final answer after three tool results', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: GREETING_INSTRUCTION }]
    for (let i = 0; i < 3; i++) {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
      })
      messages.push({ role: 'tool', tool_call_id: `c${i}`, content: 'ok' })
    }
    const stream = await client.chat.completions.create({
      model: 'm',
      messages,
      tools: [bashTool],
      stream: true,
    })
    let text = ''
    let finish: string | null = null
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? ''
      finish = c.choices[0]?.finish_reason ?? finish
    }
    expect(text).toBe('Done: I applied the fix and ran `sh check.sh`.')
    expect(finish).toBe('stop')
  })

  it('response_format json_schema: an object matching the schema', async () => {
    const r = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: `Generate a title for: ${GREETING_INSTRUCTION}` }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 't', schema: { type: 'object', properties: { title: { type: 'string' } } } },
      },
    })
    expect(JSON.parse(r.choices[0]!.message.content!)).toEqual({ title: 'Fix the greeting' })
  })

  it('GET /v1/models lists models in the OpenAI shape', async () => {
    const page = await client.models.list()
    expect(page.data.map((m) => m.id)).toContain('scripted')
  })

  it('answers a request target that is not a URL with 400', async () => {
    expect(await rawRequest(model.origin, 'GET http://[bad/x HTTP/1.1\r\nHost: x\r\n\r\n')).toBe(
      'HTTP/1.1 400 Bad Request',
    )
  })

  it('GET /v1/models/<id> answers one model, and 400 for malformed percent-encoding', async () => {
    expect((await client.models.retrieve('gpt x')).id).toBe('gpt x')
    const bad = await fetch(`${model.origin}/v1/models/%E0%A4`)
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
      'malformed percent-encoding in GET /v1/models/%E0%A4',
    )
  })
})

describe('OpenAI Responses with the official client', () => {
  const fnTool = {
    type: 'function' as const,
    name: 'exec_command',
    description: 'Runs a command in a PTY',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  }

  it('non-stream: function_call, round trip, input_tokens include cached_tokens', async () => {
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'developer', content: SYSTEM },
      { role: 'user', content: GREETING_INSTRUCTION },
    ]
    const r1 = await client.responses.create({ model: 'gpt-5-codex', input, tools: [fnTool] })
    const call = r1.output[0]
    expect(call?.type).toBe('function_call')
    if (call?.type !== 'function_call') throw new Error('expected a function call')
    expect(JSON.parse(call.arguments)).toEqual({ cmd: "ls -la && cat -- 'greet.sh'" })
    expect(r1.usage!.input_tokens_details.cached_tokens).toBe(0)
    input.push(call, { type: 'function_call_output', call_id: call.call_id, output: 'greet.sh' })
    const r2 = await client.responses.create({ model: 'gpt-5-codex', input, tools: [fnTool] })
    const call2 = r2.output[0]
    expect(call2?.type === 'function_call' && call2.arguments).toContain('HW_SOLVE')
    expect(r2.usage!.input_tokens_details.cached_tokens).toBe(r1.usage!.input_tokens)
    expect(r2.usage!.total_tokens).toBe(r2.usage!.input_tokens + r2.usage!.output_tokens)
  })

  it('stream: full event sequence, final response carries usage and the text', async () => {
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: GREETING_INSTRUCTION }]
    for (let i = 0; i < 3; i++) {
      input.push({ type: 'function_call', call_id: `c${i}`, name: 'exec_command', arguments: '{}' })
      input.push({ type: 'function_call_output', call_id: `c${i}`, output: 'ok' })
    }
    const stream = client.responses.stream({ model: 'gpt-5-codex', input, tools: [fnTool] })
    const types: string[] = []
    for await (const ev of stream) types.push(ev.type)
    const final = await stream.finalResponse()
    expect(types[0]).toBe('response.created')
    expect(types).toContain('response.output_text.delta')
    expect(types.at(-1)).toBe('response.completed')
    expect(final.output_text).toBe('Done: I applied the fix and ran `sh check.sh`.')
    expect(final.usage!.output_tokens).toBeGreaterThan(5)
  })

  it('stream: a function call streams its arguments', async () => {
    const stream = client.responses.stream({
      model: 'gpt-5-codex',
      input: GREETING_INSTRUCTION,
      tools: [fnTool],
    })
    const final = await stream.finalResponse()
    const item = final.output[0]
    expect(item?.type === 'function_call' && JSON.parse(item.arguments)).toEqual({
      cmd: "ls -la && cat -- 'greet.sh'",
    })
  })
})
