import { createRequire } from 'node:module'
import { HwError } from '../errors.js'
import { writeInside } from './files.js'
import type { BridgeEndpoint } from './mcp.js'

/** Where the extension is written inside the attempt's home. */
export const PI_BRIDGE_EXTENSION = '.pi/hw-bridge/bridge-extension.mjs'

/**
 * Absolute paths of the MCP SDK client modules the extension loads (CommonJS builds, so the
 * extension can `require` them wherever Pi's loader puts it). Throws HwError `bridge_unavailable`
 * when the SDK cannot be found next to Harness Watch.
 */
export function sdkClientPaths(): { client: string; stdio: string; http: string } {
  const req = createRequire(import.meta.url)
  try {
    return {
      client: req.resolve('@modelcontextprotocol/sdk/client/index.js'),
      stdio: req.resolve('@modelcontextprotocol/sdk/client/stdio.js'),
      http: req.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    }
  } catch (e) {
    throw new HwError(
      'bridge_unavailable',
      `the MCP SDK is not installed beside Harness Watch: ${(e as Error).message}`,
      {
        help: 'run npm ci in the Harness Watch folder (@modelcontextprotocol/sdk is a dependency)',
      },
    )
  }
}

/**
 * The Pi extension's source (pure). It connects an MCP SDK client to the bridge (stdio child or
 * Streamable HTTP), lists every tool (following `nextCursor`), registers each as `bridge_<name>` with
 * the bridge's raw JSON Schema, forwards calls verbatim (a tool error is thrown, which Pi marks
 * `isError`), and closes the client on `session_shutdown` — without that the stdio child keeps
 * `pi -p` alive (rig.md §2.7). Values are embedded as JSON literals, never spliced as code.
 */
export function piBridgeSource(endpoint: BridgeEndpoint, sdk = sdkClientPaths()): string {
  const lit = (v: unknown) => JSON.stringify(v)
  return `// Harness Watch tool-bridge for Pi (Pi has no MCP client of its own). Generated per attempt.
import { createRequire } from 'node:module'
const require = createRequire(${lit(sdk.client)})
const { Client } = require(${lit(sdk.client)})
const ENDPOINT = ${lit(endpoint)}

export default async function (pi) {
  const client = new Client({ name: 'harness-watch-pi-bridge', version: '1.0.0' })
  let transport
  if (ENDPOINT.kind === 'stdio') {
    const { StdioClientTransport } = require(${lit(sdk.stdio)})
    transport = new StdioClientTransport({ command: ENDPOINT.command, args: ENDPOINT.args, stderr: 'inherit' })
  } else {
    const { StreamableHTTPClientTransport } = require(${lit(sdk.http)})
    transport = new StreamableHTTPClientTransport(new URL(ENDPOINT.url))
  }
  await client.connect(transport)
  pi.on('session_shutdown', async () => {
    await client.close().catch(() => {})
  })
  let cursor
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor })
    for (const tool of page.tools) {
      pi.registerTool({
        name: 'bridge_' + tool.name,
        label: tool.name,
        description: tool.description ?? '',
        parameters: tool.inputSchema,
        async execute(_id, params) {
          const r = await client.callTool({ name: tool.name, arguments: params ?? {} })
          const text = (r.content ?? [])
            .filter((c) => c.type === 'text')
            .map((c) => c.text)
            .join('\\n')
          if (r.isError) throw new Error(text || 'tool error')
          return { content: [{ type: 'text', text }], details: {} }
        },
      })
    }
    cursor = page.nextCursor
  } while (cursor)
}
`
}

/** Write the extension into the attempt's home; returns its absolute path (for `pi -e`). */
export async function writePiBridgeExtension(home: string, endpoint: BridgeEndpoint): Promise<string> {
  return writeInside(home, PI_BRIDGE_EXTENSION, piBridgeSource(endpoint))
}
