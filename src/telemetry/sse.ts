/** One server-sent event: its `event:` name ('' when absent) and its joined `data:` lines. */
export interface SseEvent {
  event: string
  data: string
}

/**
 * Incremental parser of a `text/event-stream` (WHATWG SSE framing): feed decoded text as it arrives,
 * get each event when its blank line is seen. Lines end in LF or CRLF; comments (`:`) and `id:`/`retry:`
 * fields are ignored. Holds at most one partial event.
 *
 * `wants`, when given, sees each complete event's raw text (its lines, without the blank line) first;
 * an event it declines is dropped without being split into fields — the cheap way past content deltas.
 */
export class SseParser {
  private buf = ''

  constructor(
    private readonly onEvent: (ev: SseEvent) => void,
    private readonly wants?: (raw: string) => boolean,
  ) {}

  feed(text: string): void {
    const buf = this.buf + text
    let start = 0
    // The held partial event was searched already, up to its last two characters.
    let from = Math.max(0, this.buf.length - 2)
    for (;;) {
      start = skipBlankLines(buf, start)
      const end = eventEnd(buf, Math.max(start, from))
      if (end < 0) break
      const raw = buf.slice(start, end)
      start = end + (buf.charCodeAt(end + 1) === 10 ? 2 : 3)
      from = 0
      if (!this.wants || this.wants(raw)) this.event(raw)
    }
    this.buf = start === 0 ? buf : buf.slice(start)
  }

  /** End of stream: a final event without its blank line is still delivered. */
  end(): void {
    const raw = this.buf
    this.buf = ''
    if (raw.length > 0 && (!this.wants || this.wants(raw))) this.event(raw)
  }

  private event(raw: string): void {
    const data: string[] = []
    let event = ''
    for (const l of raw.split('\n')) {
      const line = l.charCodeAt(l.length - 1) === 13 ? l.slice(0, -1) : l
      if (line === '' || line.charCodeAt(0) === 58) continue // ':' comment
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value.charCodeAt(0) === 32) value = value.slice(1)
      if (field === 'data') data.push(value)
      else if (field === 'event') event = value
    }
    if (data.length > 0) this.onEvent({ event, data: data.join('\n') })
  }
}

/** Index past any blank lines (LF or CRLF) at `start`. */
function skipBlankLines(buf: string, start: number): number {
  let i = start
  for (;;) {
    const c = buf.charCodeAt(i)
    if (c === 10) i += 1
    else if (c === 13 && buf.charCodeAt(i + 1) === 10) i += 2
    else return i
  }
}

/**
 * Index of the first line break at or after `from` that is followed by a blank line (LF or CRLF) —
 * the end of the event in progress — or -1 when no blank line has arrived yet.
 */
function eventEnd(buf: string, from: number): number {
  let i = from
  for (;;) {
    const nl = buf.indexOf('\n', i)
    if (nl < 0) return -1
    const next = buf.charCodeAt(nl + 1)
    if (next === 10 || (next === 13 && buf.charCodeAt(nl + 2) === 10)) return nl
    i = nl + 1
  }
}
