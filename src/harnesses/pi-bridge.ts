import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { HwError } from '../util/errors.js'
import type { BridgeEndpoint } from './bridge-endpoint.js'
import { writeInside } from './files.js'

/** Where the extension is written inside the attempt's home. */
export const PI_BRIDGE_EXTENSION = '.pi/hw-bridge/bridge-extension.mjs'

/** The bundled MCP SDK client (built from pi-bridge-sdk.ts), relative to the dist folder. */
const SDK_BUNDLE = path.join('pi-bridge-sdk', 'index.js')

/**
 * Where the extension loads the MCP SDK client from:
 * - `bundle`: dist/pi-bridge-sdk/index.js, one self-contained ES module the build makes, so the
 *   extension works wherever Harness Watch runs, the GitHub Action's bundle included (no node_modules);
 * - `node_modules`: the SDK's CommonJS client modules beside Harness Watch, when no bundle is found.
 */
export type SdkModules =
  | { kind: 'bundle'; file: string }
  | { kind: 'node_modules'; client: string; stdio: string; http: string }

/**
 * The bundled SDK client nearest this module: `<dir>/pi-bridge-sdk/index.js` or
 * `<dir>/dist/pi-bridge-sdk/index.js` for this module's folder and up to three above it. Null when absent.
 */
export function bundledSdk(moduleFile = fileURLToPath(import.meta.url)): string | null {
  let dir = path.dirname(moduleFile)
  for (let up = 0; up <= 3; up++) {
    for (const f of [path.join(dir, SDK_BUNDLE), path.join(dir, 'dist', SDK_BUNDLE)])
      if (existsSync(f)) return f
    dir = path.dirname(dir)
  }
  return null
}

/**
 * The SDK modules the extension loads: the bundle when present, else the SDK beside Harness Watch.
 * Throws HwError `bridge_unavailable` when neither is found.
 */
export function sdkModules(moduleFile = fileURLToPath(import.meta.url)): SdkModules {
  const bundle = bundledSdk(moduleFile)
  if (bundle) return { kind: 'bundle', file: bundle }
  const req = createRequire(moduleFile)
  try {
    return {
      kind: 'node_modules',
      client: req.resolve('@modelcontextprotocol/sdk/client/index.js'),
      stdio: req.resolve('@modelcontextprotocol/sdk/client/stdio.js'),
      http: req.resolve('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    }
  } catch (e) {
    throw new HwError(
      'bridge_unavailable',
      `neither the bundled MCP SDK client (dist/${SDK_BUNDLE}) nor the MCP SDK beside Harness Watch was found: ${(e as Error).message}`,
      {
        help: 'run npm run build, or npm ci, in the Harness Watch folder (@modelcontextprotocol/sdk is a dependency)',
      },
    )
  }
}

/** The generated extension's SDK loader: an async function returning the three client classes. */
function sdkLoader(sdk: SdkModules): string {
  const lit = (v: unknown) => JSON.stringify(v)
  if (sdk.kind === 'bundle') {
    return `const SDK = ${lit(pathToFileURL(sdk.file).href)}
async function loadSdk() {
  return import(SDK)
}`
  }
  return `import { createRequire } from 'node:module'
async function loadSdk() {
  const require = createRequire(${lit(sdk.client)})
  return {
    Client: require(${lit(sdk.client)}).Client,
    StdioClientTransport: require(${lit(sdk.stdio)}).StdioClientTransport,
    StreamableHTTPClientTransport: require(${lit(sdk.http)}).StreamableHTTPClientTransport,
  }
}`
}

/**
 * The Pi extension's source (pure). It connects an MCP SDK client to the bridge (stdio child or
 * Streamable HTTP), lists every tool (following `nextCursor`), registers each as `bridge_<name>` with
 * the bridge's raw JSON Schema, forwards calls verbatim (a tool error is thrown, which Pi marks
 * `isError`), and closes the client on `session_shutdown` — without that the stdio child keeps
 * `pi -p` alive (rig.md §2.7). Values are embedded as JSON literals, never spliced as code.
 */
export function piBridgeSource(endpoint: BridgeEndpoint, sdk: SdkModules = sdkModules()): string {
  const lit = (v: unknown) => JSON.stringify(v)
  return `// Harness Watch tool-bridge for Pi (Pi has no MCP client of its own). Generated per attempt.
${sdkLoader(sdk)}
const ENDPOINT = ${lit(endpoint)}

export default async function (pi) {
  const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await loadSdk()
  const client = new Client({ name: 'harness-watch-pi-bridge', version: '1.0.0' })
  let transport
  if (ENDPOINT.kind === 'stdio') {
    transport = new StdioClientTransport({ command: ENDPOINT.command, args: ENDPOINT.args, stderr: 'inherit' })
  } else {
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
