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

  it('skips leading blank lines and comment-only events', () => {
    expect(parse(['\n\r\n: ping\n\n\ndata: x\r\n\r\n'])).toEqual([{ event: '', data: 'x' }])
  })

  it('drops an event its filter declines without delivering it, at any chunk boundary', () => {
    const text = 'data: keep 1\n\ndata: skip\n\nevent: e\ndata: keep 2\r\n\r\ndata: skip too\n\n'
    const seen: string[] = []
    const run = (chunks: string[]): SseEvent[] => {
      const out: SseEvent[] = []
      seen.length = 0
      const p = new SseParser(
        (e) => out.push(e),
        (raw) => {
          seen.push(raw)
          return raw.includes('keep')
        },
      )
      for (const c of chunks) p.feed(c)
      p.end()
      return out
    }
    const want = [
      { event: '', data: 'keep 1' },
      { event: 'e', data: 'keep 2' },
    ]
    for (let cut = 0; cut <= text.length; cut++) {
      expect(run([text.slice(0, cut), text.slice(cut)])).toEqual(want)
      // The filter saw each event once, whole.
      expect(seen).toEqual(['data: keep 1', 'data: skip', 'event: e\ndata: keep 2\r', 'data: skip too'])
    }
  })

  it('finds an event boundary split across many small chunks', () => {
    const text = `data: ${'x'.repeat(5000)}\n\ndata: y\n\n`
    const chunks: string[] = []
    for (let i = 0; i < text.length; i += 3) chunks.push(text.slice(i, i + 3))
    expect(parse(chunks)).toEqual([
      { event: '', data: 'x'.repeat(5000) },
      { event: '', data: 'y' },
    ])
  })
})
