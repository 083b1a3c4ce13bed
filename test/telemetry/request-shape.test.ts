import { describe, expect, it } from 'vitest'
import { classifyPath, decodeSafe, inspectRequest } from '../../src/telemetry/request-shape.js'

const chat = classifyPath('POST', '/v1/chat/completions')
const anthropic = classifyPath('POST', '/v1/messages')

describe('inspectRequest', () => {
  it('counts system bytes as the UTF-8 bytes of the system messages as JSON writes them', () => {
    // Long strings take the verbatim path; ones with quotes, backslashes, controls, non-ASCII and a
    // lone surrogate take JSON.stringify's own escaping. Both must agree with JSON.stringify exactly.
    const contents = [
      'plain '.repeat(100),
      `quoted "x" and back\\slash ${'y'.repeat(300)}`,
      `tab\tnewline\n ${'z'.repeat(300)}`,
      `naïve café — ünïcödé ${'é'.repeat(300)}`,
      `emoji 🧪 ${'🧪'.repeat(200)}`,
      `lone \ud800 surrogate ${'w'.repeat(300)}`,
      'short',
    ]
    for (const content of contents) {
      const messages = [
        { role: 'system', content },
        { role: 'developer', content: [{ type: 'text', text: content }] },
        { role: 'user', content: 'not counted' },
      ]
      const body = Buffer.from(JSON.stringify({ model: 'm', messages, tools: [{}, {}] }))
      const want =
        Buffer.byteLength(JSON.stringify(messages[0])) + Buffer.byteLength(JSON.stringify(messages[1]))
      expect(inspectRequest(chat, body, undefined)).toEqual({
        model: 'm',
        stream: false,
        shape: { bytes: body.length, tools: 2, messages: 3, system_bytes: want },
        maxOutputTokens: null,
        unsummarized: false,
      })
    }
  })

  it('measures an Anthropic system prompt given as a long string', () => {
    const system = `You are Claude Code. ${'Rules: "be brief". '.repeat(40)}`
    const body = Buffer.from(
      JSON.stringify({ model: 'c', system, messages: [{ role: 'user', content: 'hi' }] }),
    )
    expect(inspectRequest(anthropic, body, undefined).shape.system_bytes).toBe(
      Buffer.byteLength(JSON.stringify(system)),
    )
  })

  it('keeps the byte count and nothing else of a body that is not JSON', () => {
    expect(inspectRequest(chat, Buffer.from('not json'), undefined)).toEqual({
      model: null,
      stream: null,
      shape: { bytes: 8, tools: null, messages: null, system_bytes: null },
      maxOutputTokens: null,
      unsummarized: false,
    })
  })

  it('does not recurse into a 20,000-level nested system message: its size is null and flagged', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
    const body = Buffer.from(`{"model":"m","max_tokens":64,"messages":[{"role":"system","content":${deep}}]}`)
    expect(inspectRequest(chat, body, undefined)).toEqual({
      model: 'm',
      stream: false,
      shape: { bytes: body.length, tools: 0, messages: 1, system_bytes: null },
      maxOutputTokens: 64,
      unsummarized: true,
    })
  })

  it('measures nesting up to the bound exactly', () => {
    const content = JSON.parse(`${'['.repeat(60)}"x"${']'.repeat(60)}`) as unknown
    const system = { role: 'system', content }
    const body = Buffer.from(JSON.stringify({ model: 'm', messages: [system] }))
    const info = inspectRequest(chat, body, undefined)
    expect(info.shape.system_bytes).toBe(Buffer.byteLength(JSON.stringify(system)))
    expect(info.unsummarized).toBe(false)
  })

  it('reads the declared output ceiling of each API', () => {
    const at = (p: string, b: object) =>
      inspectRequest(classifyPath('POST', p), Buffer.from(JSON.stringify(b)), undefined).maxOutputTokens
    expect(at('/v1/chat/completions', { max_completion_tokens: 100, max_tokens: 5 })).toBe(100)
    expect(at('/v1/messages', { max_tokens: 4096 })).toBe(4096)
    expect(at('/v1/responses', { max_output_tokens: 300 })).toBe(300)
    expect(at('/v1beta/models/g:generateContent', { generationConfig: { maxOutputTokens: 77 } })).toBe(77)
    expect(at('/v1/chat/completions', { max_tokens: -1 })).toBeNull()
  })
})

describe('decodeSafe', () => {
  it('decodes percent-encoding and leaves malformed text as it is', () => {
    expect(decodeSafe('cell%3Ax')).toBe('cell:x')
    expect(decodeSafe('%E0%A4%A')).toBe('%E0%A4%A')
  })
})
