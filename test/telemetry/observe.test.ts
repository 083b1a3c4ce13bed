import zlib from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { type ObservedApi, observeResponse, SSE_HOLD_BYTES } from '../../src/telemetry/observe.js'

async function observe(
  api: ObservedApi,
  text: string,
  opts: { type?: string; gzip?: boolean; cut?: number } = {},
) {
  const body = opts.gzip ? zlib.gzipSync(text) : Buffer.from(text)
  const o = observeResponse(api, opts.type ?? 'text/event-stream', opts.gzip ? 'gzip' : undefined)
  const step = opts.cut ?? 7
  for (let i = 0; i < body.length; i += step) o.write(body.subarray(i, i + step))
  return o.end()
}

const sse = (events: [string | null, unknown][]) =>
  events
    .map(([e, d]) => `${e ? `event: ${e}\n` : ''}data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`)
    .join('')

describe('observeResponse', () => {
  it('anthropic: merges message_start usage with the message_delta counts', async () => {
    const text = sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            model: 'claude-x',
            usage: { input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 1 },
          },
        },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', delta: { type: 'text_delta', text: 'a "message_delta" in text' } },
      ],
      ['message_delta', { type: 'message_delta', usage: { output_tokens: 42, input_tokens: null } }],
      ['message_stop', { type: 'message_stop' }],
    ])
    expect(await observe('anthropic', text)).toEqual({
      usage: { input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 42 },
      model: 'claude-x',
      error: null,
      unreadable: false,
    })
  })

  it('anthropic: an error event mid-stream is an error', async () => {
    const text = sse([
      [
        'message_start',
        { type: 'message_start', message: { model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } },
      ],
      ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    ])
    expect((await observe('anthropic', text)).error).toBe('overloaded_error')
  })

  it('chat: the last usage chunk wins; [DONE] is ignored; gzip is decoded', async () => {
    const text = sse([
      [null, { model: 'gpt-x', choices: [{ delta: { content: 'hi' } }], usage: null }],
      [null, { model: 'gpt-x', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }],
      [null, { model: 'gpt-x', choices: [], usage: { prompt_tokens: 10, completion_tokens: 3 } }],
      [null, '[DONE]'],
    ])
    for (const gzip of [false, true]) {
      const o = await observe('chat', text, { gzip })
      expect(o.usage).toEqual({ prompt_tokens: 10, completion_tokens: 3 })
      expect(o.model).toBe('gpt-x')
    }
  })

  it('responses: response.failed is an error with its code', async () => {
    const text = sse([
      ['response.created', { type: 'response.created', response: { model: 'gpt-r', usage: null } }],
      [
        'response.failed',
        {
          type: 'response.failed',
          response: {
            model: 'gpt-r',
            error: { code: 'server_error' },
            usage: { input_tokens: 3, output_tokens: 0 },
          },
        },
      ],
    ])
    expect(await observe('responses', text)).toMatchObject({
      model: 'gpt-r',
      error: 'server_error',
      usage: { input_tokens: 3 },
    })
  })

  it('gemini: takes the last usageMetadata of a JSON-array stream', async () => {
    const arr = JSON.stringify([
      { candidates: [], modelVersion: 'g-1', usageMetadata: { promptTokenCount: 4 } },
      {
        candidates: [],
        modelVersion: 'g-1',
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 9 },
      },
    ])
    expect(await observe('gemini', arr, { type: 'application/json' })).toMatchObject({
      model: 'g-1',
      usage: { promptTokenCount: 4, candidatesTokenCount: 9 },
    })
  })

  it('an encoding it cannot read makes the answer unreadable, not zero', async () => {
    const o = observeResponse('chat', 'application/json', 'zstd')
    o.write(Buffer.from([1, 2, 3]))
    expect(await o.end()).toMatchObject({ usage: null, unreadable: true })
  })

  it('a stream longer than it holds is read as it passes: the last usage still counts', async () => {
    const delta = { model: 'gpt-long', choices: [{ delta: { content: 'z'.repeat(1000) } }] }
    const events: [string | null, unknown][] = [[null, delta]]
    const n = Math.ceil((2 * SSE_HOLD_BYTES) / 1000)
    for (let i = 0; i < n; i++) events.push([null, delta])
    events.push([null, { model: 'gpt-long', choices: [], usage: { prompt_tokens: 7, completion_tokens: n } }])
    events.push([null, '[DONE]'])
    const text = sse(events).replaceAll('\n', '\r\n')
    expect(text.length).toBeGreaterThan(2 * SSE_HOLD_BYTES)
    expect(await observe('chat', text, { cut: 4096 })).toEqual({
      usage: { prompt_tokens: 7, completion_tokens: n },
      model: 'gpt-long',
      error: null,
      unreadable: false,
    })
  })

  it('a multi-byte character split across chunks is decoded whole', async () => {
    const text = sse([
      [null, { model: 'gpt-ü', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }],
    ])
    for (let cut = 1; cut < 12; cut++) expect((await observe('chat', text, { cut })).model).toBe('gpt-ü')
  })
})
