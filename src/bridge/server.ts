import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { ArgumentsTap, callArgumentTexts, idKey } from './args-text.js'
import type { Dispatcher } from './dispatch.js'

/** Name and version the bridge gives in the MCP handshake. */
export const SERVER_INFO = { name: 'harness-watch-bridge', version: '1' }

/**
 * An MCP server (low-level SDK `Server`) answering tools/list and tools/call from a dispatcher.
 * `argumentsTexts` holds, by request id, the arguments as the JSON text received (see args-text.ts);
 * a call found there reaches the dispatcher with its text, which is then forgotten.
 */
export function mcpServer(dispatcher: Dispatcher, argumentsTexts?: Map<string, string>): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: dispatcher
      .list()
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as never })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const key = idKey(extra.requestId)
    const text = key === null ? undefined : argumentsTexts?.get(key)
    if (key !== null) argumentsTexts?.delete(key)
    const outcome = await dispatcher.call(req.params.name, req.params.arguments ?? {}, text)
    return {
      content: [{ type: 'text', text: outcome.text }],
      ...(outcome.status === 'ok' ? {} : { isError: true }),
    }
  })
  return server
}

/**
 * Serve over stdin/stdout (or the streams given) until the client closes its input. Nothing else may
 * write to the output.
 */
export async function serveStdio(
  dispatcher: Dispatcher,
  input: Readable = process.stdin,
  output: Writable = process.stdout,
): Promise<void> {
  const texts = new Map<string, string>()
  const server = mcpServer(dispatcher, texts)
  const transport = new StdioServerTransport(input.pipe(new ArgumentsTap(texts)), output)
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve()
    input.on('end', () => resolve())
  })
  await server.connect(transport)
  await closed
  await server.close()
}

export interface HttpBridge {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string
  close(): Promise<void>
}

/**
 * Serve Streamable HTTP on a loopback address, stateless (rig.md §1): a fresh MCP server per POST to
 * `/mcp`, JSON responses, no session id; GET and DELETE are 405. A request whose Host header is not
 * the bound address is refused (403), so a web page cannot reach the bridge by DNS rebinding.
 */
export async function serveHttp(dispatcher: Dispatcher, host: string, port: number): Promise<HttpBridge> {
  let allowed = new Set<string>()
  const http: HttpServer = createServer((req, res) => {
    handle(dispatcher, allowed, req, res).catch((e: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 500, -32603, `internal error: ${(e as Error).message}`)
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, () => resolve())
  })
  const bound = (http.address() as AddressInfo).port
  const shown = host.includes(':') ? `[${host}]` : host
  allowed = new Set([`${shown}:${bound}`, `localhost:${bound}`])
  return {
    url: `http://${shown}:${bound}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        http.close(() => resolve())
      }),
  }
}

async function handle(
  dispatcher: Dispatcher,
  allowed: Set<string>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x')
  if (!allowed.has(req.headers.host ?? '')) return jsonRpcError(res, 403, -32000, 'forbidden host')
  if (url.pathname !== '/mcp') return jsonRpcError(res, 404, -32000, 'not found: the endpoint is /mcp')
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST')
    return jsonRpcError(res, 405, -32000, 'method not allowed: this server is stateless, POST only')
  }
  // The body is read here so that each call's arguments keep their JSON text (number literals).
  const body = await readBody(req, MAX_BODY)
  if (body === null) return jsonRpcError(res, 413, -32000, `request body larger than ${MAX_BODY} bytes`)
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return jsonRpcError(res, 400, -32700, 'parse error: the body is not JSON')
  }
  const server = mcpServer(dispatcher, callArgumentTexts(body))
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  })
  res.on('close', () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, parsed)
}

/** The SDK's own limit on one message. */
const MAX_BODY = 4 * 1024 * 1024

/** The request body as UTF-8 text, or null past `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) return null
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}
