/** One server-sent event: its `event:` name ('' when absent) and its joined `data:` lines. */
export interface SseEvent {
  event: string
  data: string
}

/**
 * Incremental parser of a `text/event-stream` (WHATWG SSE framing): feed decoded text as it arrives,
 * get each event when its blank line is seen. Lines end in LF or CRLF; comments (`:`) and `id:`/`retry:`
 * fields are ignored. Holds at most one partial event.
 */
export class SseParser {
  private buf = ''
  private data: string[] = []
  private event = ''

  constructor(private readonly onEvent: (ev: SseEvent) => void) {}

  feed(text: string): void {
    this.buf += text
    let start = 0
    for (;;) {
      const nl = this.buf.indexOf('\n', start)
      if (nl < 0) break
      let end = nl
      if (end > start && this.buf.charCodeAt(end - 1) === 13) end--
      this.line(this.buf.slice(start, end))
      start = nl + 1
    }
    this.buf = start === 0 ? this.buf : this.buf.slice(start)
  }

  /** End of stream: a final event without its blank line is still delivered. */
  end(): void {
    if (this.buf.length > 0) this.line(this.buf.endsWith('\r') ? this.buf.slice(0, -1) : this.buf)
    this.buf = ''
    this.dispatch()
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch()
      return
    }
    if (line.charCodeAt(0) === 58) return // ':' comment
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === 'data') this.data.push(value)
    else if (field === 'event') this.event = value
  }

  private dispatch(): void {
    if (this.data.length > 0) this.onEvent({ event: this.event, data: this.data.join('\n') })
    this.data = []
    this.event = ''
  }
}
