import { describe, expect, it } from 'vitest'
import { canonical, parseRequest, routeOf } from '../../src/model/parse.js'
import { findWorkdir } from '../../src/model/script.js'

const bash = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] }

describe('routeOf: path suffix, any prefix', () => {
  it.each([
    ['/v1/chat/completions', 'chat'],
    ['/chat/completions', 'chat'],
    ['/openai/v1/responses', 'responses'],
    ['/v1/messages', 'anthropic'],
    ['/v1/messages/count_tokens', 'anthropic-count'],
    ['/v1beta/models/gemini-2.5-pro:generateContent', 'gemini'],
    ['/models/x:streamGenerateContent', 'gemini'],
    ['/v1beta/models/x:countTokens', 'gemini-count'],
    ['/v1/embeddings', null],
  ])('%s → %s', (p, want) => {
    expect(routeOf(p)).toBe(want)
  })
})

describe('parseRequest', () => {
  it('chat: system apart, tool results counted, last error seen, json_schema asked', () => {
    const r = parseRequest('chat', {
      model: 'm',
      stream: true,
      messages: [
        { role: 'system', content: 'sys A' },
        { role: 'user', content: [{ type: 'text', text: 'do   the\nthing' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'Command exited with code 2' },
      ],
      tools: [{ type: 'function', function: { name: 'bash', description: 'run', parameters: bash } }],
      response_format: { type: 'json_schema', json_schema: { schema: { type: 'object' } } },
    })
    expect(r).toMatchObject({ api: 'chat', stream: true, model: 'm', toolResults: 1, lastToolError: true })
    expect(r.userText).toBe('do the thing')
    expect(r.tools.map((t) => t.name)).toEqual(['bash'])
    expect(r.jsonSchema).toEqual({ type: 'object' })
    // system, tools, then the three non-system messages
    expect(r.segments).toHaveLength(5)
    expect(JSON.parse(r.segments[0]!)).toBe('sys A')
  })

  it('responses: string input, instructions as system, *_output items, namespaces and local_shell', () => {
    const r = parseRequest('responses', {
      model: 'gpt',
      instructions: 'be brief',
      input: [
        { role: 'developer', content: [{ type: 'input_text', text: 'dev text <cwd>/w/abc</cwd>' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'Fix it' }] },
        { type: 'function_call', call_id: 'x', name: 'exec_command', arguments: '{}' },
        { type: 'function_call_output', call_id: 'x', output: 'ok' },
      ],
      tools: [
        {
          type: 'function',
          name: 'exec_command',
          parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
        },
        {
          type: 'namespace',
          name: 'multi_agent_v1',
          tools: [{ type: 'function', name: 'spawn_agent', parameters: {} }],
        },
        { type: 'local_shell' },
        { type: 'web_search' },
        { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } },
      ],
    })
    expect(r.toolResults).toBe(1)
    expect(r.userText).toBe('Fix it')
    expect(r.tools.map((t) => `${t.kind}:${t.name}`)).toEqual([
      'function:exec_command',
      'function:multi_agent_v1.spawn_agent',
      'local_shell:local_shell',
      'web_search:web_search',
      'custom:apply_patch',
    ])
    expect(findWorkdir(r.contextText)).toBe('/w/abc')
    expect(parseRequest('responses', { input: 'hello' }).userText).toBe('hello')
  })

  it('anthropic: system blocks, tool_result blocks (is_error), output_format', () => {
    const r = parseRequest('anthropic', {
      model: 'claude',
      system: [{ type: 'text', text: 'You are Claude Code.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'task text' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't', content: 'fine', is_error: true }],
        },
      ],
      tools: [
        { name: 'Bash', description: 'd', input_schema: bash },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      output_format: {
        type: 'json_schema',
        schema: { type: 'object', properties: { a: { type: 'string' } } },
      },
    })
    expect(r).toMatchObject({
      toolResults: 1,
      lastToolError: true,
      lastToolResult: 'fine',
      userText: 'task text',
    })
    expect(r.tools.map((t) => t.kind)).toEqual(['function', 'web_search_20250305'])
    expect(r.jsonSchema).toEqual({ type: 'object', properties: { a: { type: 'string' } } })
  })

  it('gemini: model and stream from the path, functionResponse parts, responseJsonSchema', () => {
    const r = parseRequest(
      'gemini',
      {
        systemInstruction: { parts: [{ text: 'sys' }] },
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: {} } }] },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'x' } } }],
          },
        ],
        tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: bash }] }],
        generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'object' } },
      },
      '/v1beta/models/gemini-2.5-pro:streamGenerateContent',
    )
    expect(r).toMatchObject({ model: 'gemini-2.5-pro', stream: true, toolResults: 1, userText: 'hi' })
    expect(r.jsonSchema).toEqual({ type: 'object' })
  })

  it('tolerates junk: missing fields, wrong types', () => {
    const r = parseRequest('chat', { messages: 'nope', tools: [null, 3] })
    expect(r.toolResults).toBe(0)
    expect(r.userText).toBe('')
  })
})

describe('findWorkdir: the cwd each harness announces', () => {
  it.each([
    ['Current working directory: /tmp/w/x', '/tmp/w/x'],
    ['  Working directory: /w/abc\n  Is directory a git repo: yes', '/w/abc'],
    ['Primary working directory: /srv/ws.', '/srv/ws'],
    ['<cwd>/w/q</cwd>', '/w/q'],
    ["I'm currently working in the directory: /home/u/p", '/home/u/p'],
    ['- **Workspace Directories:**\n  - /tmp/g/work\n- **Directory Structure:**', '/tmp/g/work'],
    ["The project's temporary directory is: /tmp/x", null],
    ['no directory here', null],
  ])('%s', (text, want) => {
    expect(findWorkdir(text)).toBe(want)
  })
})

describe('canonical: what a provider cache keys on', () => {
  it('drops cache_control and joins text-only content, so moving a breakpoint keeps the prefix', () => {
    const withBreakpoint = {
      role: 'user',
      content: [
        { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'b' },
      ],
    }
    expect(canonical(withBreakpoint)).toEqual({ role: 'user', content: 'a\nb' })
    expect(canonical({ role: 'system', content: 'a\nb' })).toEqual({ role: 'system', content: 'a\nb' })
    const mixed = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x' }], cache_control: {} },
      ],
    }
    expect(canonical(mixed)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }],
    })
    const turn1 = parseRequest('anthropic', { messages: [withBreakpoint] })
    const turn2 = parseRequest('anthropic', {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: 'ok' },
      ],
    })
    expect(turn2.segments[0]).toBe(turn1.segments[0])
  })
})
