// The tool-bridge's cost per call. Run: npx tsx bench/bridge.ts [calls]
// Over stdio, with the SDK's own client, sequential calls against two servers in their own processes:
//   - bare: a minimal low-level SDK Server answering every tools/call with a constant (the floor the
//     transport and JSON-RPC cost);
//   - bridge: `harness-watch bridge serve` on a shop environment, alternating a read (get_order) and a
//     write (add_note: validation, effect, world rewrite, calls.jsonl and trace appends).
// Target: the bridge adds ≤ 2 ms at p50 over the bare server.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const N = Number(process.argv[2] ?? 400)
const root = path.resolve(import.meta.dirname, '..')
const dir = mkdtempSync(path.join(tmpdir(), 'hw-bench-bridge-'))

const bare = path.join(dir, 'bare.mjs')
writeFileSync(
  bare,
  `import { Server } from '${root}/node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.js'
import { StdioServerTransport } from '${root}/node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '${root}/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js'
const s = new Server({ name: 'bare', version: '1' }, { capabilities: { tools: {} } })
s.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }))
s.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: '{"status":"pending"}' }] }))
await s.connect(new StdioServerTransport())
`,
)

async function measure(
  command: string,
  args: string[],
  calls: (i: number) => { name: string; arguments: Record<string, unknown> },
): Promise<number[]> {
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StdioClientTransport({ command, args, cwd: root, stderr: 'ignore' }))
  for (let i = 0; i < 30; i++) await client.callTool(calls(i)) // warm-up
  const ms: number[] = []
  for (let i = 0; i < N; i++) {
    const t0 = performance.now()
    await client.callTool(calls(i))
    ms.push(performance.now() - t0)
  }
  await client.close()
  return ms.sort((a, b) => a - b)
}

const q = (xs: number[], p: number): number =>
  xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN

try {
  const sandbox = path.join(dir, 'sandbox')
  mkdirSync(sandbox)
  const env = path.join(root, 'test/bridge/fixtures/shop.json')
  const bridgeCalls = (i: number) =>
    i % 2 === 0
      ? { name: 'get_order', arguments: { order_id: 'W1' } }
      : { name: 'add_note', arguments: { order_id: 'W2', note: `note ${i}`, priority: 1 } }
  const b = await measure(process.execPath, [bare], () => ({ name: 'x', arguments: {} }))
  const s = await measure(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'src/cli/entry.ts'),
      'bridge',
      'serve',
      '--env',
      env,
      '--state',
      path.join(dir, 'state'),
      '--sandbox',
      sandbox,
    ],
    bridgeCalls,
  )
  const added = q(s, 0.5) - q(b, 0.5)
  console.log(`calls: ${N} per server, sequential, stdio`)
  console.log(`bare SDK server: p50 ${q(b, 0.5).toFixed(3)} ms, p99 ${q(b, 0.99).toFixed(3)} ms`)
  console.log(`bridge:          p50 ${q(s, 0.5).toFixed(3)} ms, p99 ${q(s, 0.99).toFixed(3)} ms`)
  console.log(`bridge adds ${added.toFixed(3)} ms at p50 (target ≤ 2 ms)`)
  const ok = added <= 2
  console.log(ok ? 'bridge targets: met' : 'bridge targets: NOT met')
  process.exitCode = ok ? 0 : 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
