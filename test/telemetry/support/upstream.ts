import http from 'node:http'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'

/**
 * A small model server for proxy tests speaking the four wire APIs (OpenAI Chat Completions, OpenAI
 * Responses, Anthropic Messages, Gemini), stream and not, with fixed usage numbers:
 * - chat / responses: input 100 (40 cached), output 20 (5 reasoning);
 * - anthropic: input_tokens 60 + cache_read 30 + cache_creation 10, output 20;
 * - gemini: prompt 100 (40 cached), candidates 15 + thoughts 5.
 * Behaviour per request through the `x-test-mode` header: `error500`, `error429`, `abort-mid`
 * (destroys the socket after the first chunk), `hang` (never answers), `gzip`, `no-usage`,
 * `headers-first` (a stream's headers, then the `x-test-gap-ms` pause before its first event);
 * `x-test-gap-ms` sets the pause after the first streamed chunk; `x-test-model` overrides the model
 * named in the answer.
 */
export interface UpstreamCall {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  bodyBytes: number
}

export interface TestUpstream {
  origin: string
  calls: UpstreamCall[]
  close(): Promise<void>
}

const CHAT_USAGE = {
  prompt_tokens: 100,
  completion_tokens: 20,
  total_tokens: 120,
  prompt_tokens_details: { cached_tokens: 40 },
  completion_tokens_details: { reasoning_tokens: 5 },
}
const RESPONSES_USAGE = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 40 },
  output_tokens: 20,
  output_tokens_details: { reasoning_tokens: 5 },
  total_tokens: 120,
}
const ANTHROPIC_USAGE = {
  input_tokens: 60,
  cache_read_input_tokens: 30,
  cache_creation_input_tokens: 10,
  output_tokens: 20,
}
const GEMINI_USAGE = {
  promptTokenCount: 100,
  cachedContentTokenCount: 40,
  candidatesTokenCount: 15,
  thoughtsTokenCount: 5,
  totalTokenCount: 120,
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A scripted provider on `host` (127.0.0.1, or this machine's own interface address standing in for a remote one). */
export async function startUpstream(host = '127.0.0.1'): Promise<TestUpstream> {
  const calls: UpstreamCall[] = []
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks)
    calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, bodyBytes: raw.length })
    const mode = String(req.headers['x-test-mode'] ?? '')
    const gap = Number(req.headers['x-test-gap-ms'] ?? 0)
    let body: Record<string, unknown> = {}
    try {
      body = raw.length ? JSON.parse(raw.toString('utf8')) : {}
    } catch {}
    const url = new URL(req.url ?? '/', 'http://x')
    const gem = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname)
    const requested = gem ? (gem[1] as string) : String(body.model ?? 'unknown')
    const model = String(req.headers['x-test-model'] ?? `${requested}-2025-01-01`)
    const noUsage = mode === 'no-usage'

    if (mode === 'hang') return
    if (mode === 'error500' || mode === 'error429') {
      const status = mode === 'error500' ? 500 : 429
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({ error: { message: 'upstream says no', type: 'server_error', code: `e${status}` } }),
      )
      return
    }

    const json = (o: unknown): void => {
      const text = Buffer.from(JSON.stringify(o))
      if (mode === 'gzip') {
        const z = zlib.gzipSync(text)
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': z.length,
        })
        res.end(z)
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': text.length })
        res.end(text)
      }
    }
    const stream = async (events: { event?: string; data: unknown }[]): Promise<void> => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      if (mode === 'headers-first') {
        res.flushHeaders()
        await sleep(gap)
      }
      let i = 0
      for (const ev of events) {
        const data = typeof ev.data === 'string' ? ev.data : JSON.stringify(ev.data)
        res.write(`${ev.event ? `event: ${ev.event}\n` : ''}data: ${data}\n\n`)
        if (i === 0) {
          if (mode === 'abort-mid') {
            await sleep(20)
            res.socket?.destroy()
            return
          }
          if (gap > 0 && mode !== 'headers-first') await sleep(gap)
        }
        i++
      }
      res.end()
    }

    if (url.pathname.endsWith('/chat/completions')) {
      const id = 'chatcmpl-test'
      if (body.stream !== true) {
        return json({
          id,
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
          ...(noUsage ? {} : { usage: CHAT_USAGE }),
        })
      }
      const chunk = (delta: object, finish: string | null) => ({
        id,
        object: 'chat.completion.chunk',
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      })
      return stream([
        { data: chunk({ role: 'assistant', content: 'do' }, null) },
        { data: chunk({ content: 'ne' }, null) },
        { data: chunk({}, 'stop') },
        ...(noUsage
          ? []
          : [{ data: { id, object: 'chat.completion.chunk', model, choices: [], usage: CHAT_USAGE } }]),
        { data: '[DONE]' },
      ])
    }
    if (url.pathname.endsWith('/responses')) {
      const response = (status: string, usage: unknown) => ({
        id: 'resp_test',
        object: 'response',
        created_at: 1,
        status,
        model,
        output:
          status === 'completed'
            ? [
                {
                  type: 'message',
                  id: 'msg_1',
                  status: 'completed',
                  role: 'assistant',
                  content: [{ type: 'output_text', text: 'done', annotations: [] }],
                },
              ]
            : [],
        usage,
      })
      if (body.stream !== true) return json(response('completed', noUsage ? null : RESPONSES_USAGE))
      return stream([
        {
          event: 'response.created',
          data: { type: 'response.created', sequence_number: 0, response: response('in_progress', null) },
        },
        {
          event: 'response.output_text.delta',
          data: {
            type: 'response.output_text.delta',
            sequence_number: 1,
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'done',
          },
        },
        {
          event: 'response.completed',
          data: {
            type: 'response.completed',
            sequence_number: 2,
            response: response('completed', noUsage ? null : RESPONSES_USAGE),
          },
        },
      ])
    }
    if (url.pathname.endsWith('/messages')) {
      const message = {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: 'done' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: ANTHROPIC_USAGE,
      }
      if (body.stream !== true) return json(message)
      return stream([
        {
          event: 'message_start',
          data: {
            type: 'message_start',
            message: {
              ...message,
              content: [],
              stop_reason: null,
              usage: { ...ANTHROPIC_USAGE, output_tokens: 1 },
            },
          },
        },
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'done' } },
        },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: 20 },
          },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ])
    }
    if (gem) {
      const part = (text: string, usage: unknown) => ({
        candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
        ...(usage ? { usageMetadata: usage } : {}),
        modelVersion: model,
        responseId: 'gem_test',
      })
      if (gem[2] === 'generateContent') return json(part('done', noUsage ? null : GEMINI_USAGE))
      if (url.searchParams.get('alt') === 'sse') {
        return stream([
          {
            data: part(
              'do',
              noUsage ? null : { promptTokenCount: 100, cachedContentTokenCount: 40, totalTokenCount: 100 },
            ),
          },
          { data: part('ne', noUsage ? null : GEMINI_USAGE) },
        ])
      }
      return json([part('do', null), part('ne', noUsage ? null : GEMINI_USAGE)])
    }
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ error: { message: 'not found' } }))
  })
  await new Promise<void>((r) => server.listen(0, host, () => r()))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://${host}:${port}`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
