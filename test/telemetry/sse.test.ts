import { describe, expect, it } from 'vitest'
import { type SseEvent, SseParser } from '../../src/telemetry/sse.js'

function parse(chunks: string[]): SseEvent[] {
  const out: SseEvent[] = []
  const p = new SseParser((e) => out.push(e))
  for (const c of chunks) p.feed(c)
  p.end()
  return out
}

describe('SseParser', () => {
  it('assembles events split anywhere across chunks, LF or CRLF', () => {
    const text =
      'event: message_start\r\ndata: {"a":1}\r\n\r\n: comment\n\ndata: {"b":\ndata: 2}\n\ndata: [DONE]\n\n'
    const whole = parse([text])
    expect(whole).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { event: '', data: '{"b":\n2}' },
      { event: '', data: '[DONE]' },
    ])
    for (let cut = 1; cut < text.length; cut++) {
      expect(parse([text.slice(0, cut), text.slice(cut)])).toEqual(whole)
    }
  })

  it('delivers a last event that lacks its blank line', () => {
    expect(parse(['data: {"x":1}'])).toEqual([{ event: '', data: '{"x":1}' }])
  })
})
