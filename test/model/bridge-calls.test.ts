import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { WireApi } from '../../src/manifest/harness-names.js'
import { bridgeNames, findBridgeTool, parseReferenceCalls, unwrapToolResult } from '../../src/model/calls.js'
import { resolveSettings } from '../../src/model/config.js'
import { ScriptedEngine } from '../../src/model/engine.js'
import { loadTaskScript } from '../../src/model/tasks.js'
import type { TaskScript } from '../../src/model/types.js'

const schema = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }
const task: TaskScript = {
  id: 'orders',
  instruction: 'Look up order #W1 and cancel it, then tell me its status.',
  solve: null,
  testCommand: null,
  inspectFile: null,
  calls: [
    { tool: 'get_order', arguments: { order_id: '#W1' } },
    { tool: 'cancel_order', arguments: { order_id: '#W1', reason: 'no longer needed' } },
  ],
  answer: null,
}

function engine(successRate = 1, t: TaskScript = task): ScriptedEngine {
  return new ScriptedEngine(resolveSettings({ success_rate: successRate }), new Map([[t.id, t]]), () => 0)
}

/** A request body of `api` offering the two bridge tools under `names`, after `results` tool results. */
function body(api: WireApi, names: [string, string], results: string[] = []): Record<string, unknown> {
  const user = task.instruction
  if (api === 'chat') {
    const messages: unknown[] = [{ role: 'user', content: user }]
    results.forEach((r, i) => {
      messages.push({
        role: 'assistant',
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'x', arguments: '{}' } }],
      })
      messages.push({ role: 'tool', tool_call_id: `c${i}`, content: r })
    })
    return {
      model: 'm',
      messages,
      tools: names.map((n) => ({ type: 'function', function: { name: n, parameters: schema } })),
    }
  }
  if (api === 'anthropic') {
    const messages: unknown[] = [{ role: 'user', content: user }]
    results.forEach((r, i) => {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'x', input: {} }] })
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: r }] })
    })
    return { model: 'm', messages, tools: names.map((n) => ({ name: n, input_schema: schema })) }
  }
  if (api === 'gemini') {
    const contents: unknown[] = [{ role: 'user', parts: [{ text: user }] }]
    results.forEach((r) => {
      contents.push({ role: 'model', parts: [{ functionCall: { name: 'x', args: {} } }] })
      contents.push({ role: 'user', parts: [{ functionResponse: { name: 'x', response: { output: r } } }] })
    })
    return {
      contents,
      tools: [{ functionDeclarations: names.map((n) => ({ name: n, parametersJsonSchema: schema })) }],
    }
  }
  const input: unknown[] = [{ role: 'user', content: [{ type: 'input_text', text: user }] }]
  results.forEach((r, i) => {
    input.push({
      type: 'function_call',
      call_id: `c${i}`,
      namespace: 'mcp__bridge',
      name: 'x',
      arguments: '{}',
    })
    input.push({ type: 'function_call_output', call_id: `c${i}`, output: r })
  })
  return {
    model: 'm',
    input,
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
      },
      {
        type: 'namespace',
        name: 'mcp__bridge',
        tools: names.map((n) => ({ type: 'function', name: n, parameters: schema })),
      },
    ],
  }
}

function answer(e: ScriptedEngine, api: WireApi, b: Record<string, unknown>) {
  const o = e.generate(api, b, api === 'gemini' ? '/v1beta/models/m:generateContent' : '/v1/x', {}, false)
  if (o.kind !== 'answer' || o.rendered.kind !== 'json') throw new Error('expected a JSON answer')
  // A rendered wire body, read as the harness would: deep paths into provider JSON.
  // biome-ignore lint/suspicious/noExplicitAny: provider response JSON is walked by path in assertions
  return { record: o.record, body: o.rendered.body as any }
}

describe('the scripted model calls bridge tools under each harness naming', () => {
  it('Claude Code / Qwen Code: mcp__bridge__<tool> as a tool_use with the reference arguments', () => {
    const { body: b, record } = answer(
      engine(),
      'anthropic',
      body('anthropic', ['mcp__bridge__get_order', 'mcp__bridge__cancel_order']),
    )
    expect(b.content).toEqual([
      {
        type: 'tool_use',
        id: expect.any(String),
        name: 'mcp__bridge__get_order',
        input: { order_id: '#W1' },
      },
    ])
    expect(record.action).toMatchObject({ kind: 'tool', step: 'bridge', tool: 'mcp__bridge__get_order' })
  })

  it('Codex: the function call names namespace mcp__bridge and the bare function, never the flattened name', () => {
    const { body: b } = answer(
      engine(),
      'responses',
      body('responses', ['get_order', 'cancel_order'], ['order #W1: open']),
    )
    expect(b.output[0]).toMatchObject({
      type: 'function_call',
      namespace: 'mcp__bridge',
      name: 'cancel_order',
      arguments: JSON.stringify({ order_id: '#W1', reason: 'no longer needed' }),
    })
  })

  it('Gemini CLI: mcp_bridge_<tool> as a functionCall (second call after one result)', () => {
    const { body: b } = answer(
      engine(),
      'gemini',
      body('gemini', ['mcp_bridge_get_order', 'mcp_bridge_cancel_order'], ['open']),
    )
    expect(b.candidates[0].content.parts).toEqual([
      {
        functionCall: {
          name: 'mcp_bridge_cancel_order',
          args: { order_id: '#W1', reason: 'no longer needed' },
        },
      },
    ])
  })

  it('OpenCode / Pi extension (bridge_<tool>) and Copilot (bridge-<tool>) over Chat Completions', () => {
    for (const names of [
      ['bridge_get_order', 'bridge_cancel_order'],
      ['bridge-get_order', 'bridge-cancel_order'],
    ] as [string, string][]) {
      const { body: b } = answer(engine(), 'chat', body('chat', names))
      expect(b.choices[0].message.tool_calls[0].function).toEqual({
        name: names[0],
        arguments: JSON.stringify({ order_id: '#W1' }),
      })
    }
  })

  it('after the last reference call it answers with the last result, harness wrapping removed', () => {
    const wrapped = '<untrusted_context>\nStatus: cancelled\n</untrusted_context>'
    const { body: b, record } = answer(
      engine(),
      'gemini',
      body('gemini', ['mcp_bridge_get_order', 'mcp_bridge_cancel_order'], ['open', wrapped]),
    )
    expect(b.candidates[0].content.parts).toEqual([{ text: 'Done. Status: cancelled' }])
    expect(record.action).toMatchObject({ kind: 'text', step: 'final' })
    // a reference answer, when the task has one, is said instead
    const withAnswer = engine(1, { ...task, answer: 'The order is cancelled.\n' })
    const r = answer(
      withAnswer,
      'chat',
      body('chat', ['bridge_get_order', 'bridge_cancel_order'], ['a', 'b']),
    )
    expect(r.body.choices[0].message.content).toBe('The order is cancelled.')
  })

  it('a failure draw stops one call short and says it did not finish', () => {
    const e = engine(0)
    const first = answer(e, 'chat', body('chat', ['bridge_get_order', 'bridge_cancel_order']))
    expect(first.body.choices[0].message.tool_calls[0].function.name).toBe('bridge_get_order')
    const second = answer(e, 'chat', body('chat', ['bridge_get_order', 'bridge_cancel_order'], ['open']))
    expect(second.body.choices[0].message.content).toBe('I could not complete the request.')
    expect(second.record.success).toBe(false)
  })

  it('a harness that did not load the bridge: no call is invented, the answer names the missing tool', () => {
    const { body: b } = answer(engine(), 'chat', body('chat', ['bash', 'read']))
    expect(b.choices[0].message.tool_calls).toBeUndefined()
    expect(b.choices[0].message.content).toContain('get_order is not among the tools')
    // the bridge's own name wins over a harness tool of the bare name; another server's is never taken
    const t = (name: string) => ({ name, description: '', schema: {}, kind: 'function' })
    expect(findBridgeTool([t('get_order'), t('bridge_get_order')], 'get_order')?.name).toBe(
      'bridge_get_order',
    )
    expect(findBridgeTool([t('mcp__other.get_order')], 'get_order')).toBeNull()
    // an unrelated server's tool of the same function name is not the bridge's
    expect(
      findBridgeTool(
        [{ name: 'mcp__other__get_order', description: '', schema: {}, kind: 'function' }],
        'get_order',
      ),
    ).toBeNull()
  })
})

describe('reference calls and tool results', () => {
  it('reads the accepted calls.json shapes and refuses anything else (null, never a throw)', () => {
    const want = [{ tool: 'a', arguments: { x: 1 } }]
    expect(parseReferenceCalls('[{"tool":"a","arguments":{"x":1}}]')).toEqual(want)
    expect(parseReferenceCalls('{"calls":[{"name":"a","args":{"x":1}}]}')).toEqual(want)
    expect(parseReferenceCalls('[{"a":{"x":1}}]')).toEqual(want)
    expect(parseReferenceCalls('[{"tool":"a"}]')).toEqual([{ tool: 'a', arguments: {} }])
    for (const bad of [
      'not json',
      '{}',
      '[1]',
      '[{"tool":"a","arguments":[1]}]',
      '[{"a":1,"b":2}]',
      '[{"a":"x"}]',
    ]) {
      expect(parseReferenceCalls(bad), bad).toBeNull()
    }
  })

  it('names a bridge tool takes, most specific first', () => {
    expect(bridgeNames('get_order')).toEqual([
      'mcp__bridge__get_order',
      'mcp_bridge_get_order',
      'bridge_get_order',
      'bridge-get_order',
      'mcp__bridge.get_order',
      'get_order',
    ])
  })

  it('undoes Claude reminders, Gemini wrapping (also as a response object) and the Codex preamble', () => {
    expect(
      unwrapToolResult('R1\n\n<system-reminder>\n<total_tokens>9 left</total_tokens>\n</system-reminder>'),
    ).toBe('R1')
    expect(unwrapToolResult('{"output":"<untrusted_context>\\nR2\\n</untrusted_context>"}')).toBe('R2')
    expect(unwrapToolResult('Wall time: 0.0041 seconds\nOutput:\nR3')).toBe('R3')
    expect(unwrapToolResult('{"other":1}')).toBe('{"other":1}')
  })

  it('a task folder with solution/calls.json and answer.md loads them into the script', async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'hw-bridge-task-')), 'orders')
    mkdirSync(path.join(dir, 'solution'), { recursive: true })
    writeFileSync(path.join(dir, 'instruction.md'), 'Cancel order #W1.')
    writeFileSync(path.join(dir, 'solution', 'calls.json'), JSON.stringify(task.calls))
    writeFileSync(path.join(dir, 'solution', 'answer.md'), 'Cancelled.')
    const s = await loadTaskScript(dir)
    expect(s.calls).toEqual(task.calls)
    expect(s.answer).toBe('Cancelled.')
    writeFileSync(path.join(dir, 'solution', 'calls.json'), '{broken')
    expect((await loadTaskScript(dir)).calls).toBeNull()
  })
})
