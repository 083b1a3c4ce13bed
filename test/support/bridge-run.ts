import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import type { AttemptContext, InstalledHarness, ParsedRun } from '../../src/harnesses/contract.js'
import { type BridgeTransport, wireBridge } from '../../src/harnesses/mcp.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import type { HarnessName, WireApi } from '../../src/manifest/harness-names.js'
import type { ModelRequestRecord } from '../../src/model/engine.js'
import { startScriptedModel } from '../../src/model/server.js'
import type { TaskScript } from '../../src/model/types.js'
import { bridgeStdioEndpoint } from '../../src/run/bridge.js'

/** The marker stored in the world: a get_order result that holds it reached the model. */
export const ORDER_MARKER = 'ORDER-W1234567-STATUS-shipped-7f3a'

/**
 * A bridge environment (environment/bridge.json format) with the schema features rig.md §1 exercised
 * (pattern, default, enum, minItems, a nested object with additionalProperties:false, integer bounds, a
 * nullable type array) on get_order, and a world-changing add_note.
 */
export const ORDER_ENV = {
  version: 1,
  world: { orders: { W1234567: { status: 'shipped', marker: ORDER_MARKER, notes: [] } } },
  tools: [
    {
      name: 'add_note',
      description: 'Add a delivery note to an order.',
      parameters: {
        type: 'object',
        properties: { order_id: { type: 'string' }, note: { type: 'string' } },
        required: ['order_id', 'note'],
        additionalProperties: false,
      },
      effect: { op: 'append', path: 'orders.{order_id}.notes', value: { text: '{note}' }, result: 'noted' },
    },
    {
      name: 'get_order',
      description: 'Look up an order by id, e.g. W1234567.',
      parameters: {
        type: 'object',
        properties: {
          order_id: { type: 'string', pattern: '^W[0-9]{7}$' },
          fields: { type: 'array', items: { type: 'string', enum: ['status', 'notes'] }, minItems: 1 },
          options: {
            type: 'object',
            properties: { limit: { type: 'integer', minimum: 1, maximum: 50, default: 5 } },
            required: ['limit'],
            additionalProperties: false,
          },
          note: { type: ['string', 'null'] },
        },
        required: ['order_id'],
      },
      effect: { op: 'return', path: 'orders.{order_id}' },
    },
  ],
}

/** The reference calls the scripted model follows: a write, then a read of what it wrote. */
export const ORDER_CALLS = [
  { tool: 'add_note', arguments: { order_id: 'W1234567', note: 'leave at the door' } },
  {
    tool: 'get_order',
    arguments: { order_id: 'W1234567', fields: ['status', 'notes'], options: { limit: 7 }, note: null },
  },
]

export const ORDER_INSTRUCTION =
  'Add the delivery note "leave at the door" to order W1234567, then look the order up and tell me its status.'

export const ORDER_TASK: TaskScript = {
  id: 'order-note',
  instruction: ORDER_INSTRUCTION,
  solve: null,
  testCommand: null,
  inspectFile: null,
  calls: ORDER_CALLS,
  answer: null,
}

export interface BridgeRunResult {
  exitCode: number | null
  timedOut: boolean
  stdout: string
  stderr: string
  parsed: ParsedRun
  records: ModelRequestRecord[]
  /** The bridge's calls.jsonl rows (tool, status, arguments hash…), in order. */
  calls: { tool: string; status: string }[]
  /** The world the bridge left (state/world.json). */
  world: Record<string, unknown> | null
  transport: BridgeTransport
  wallMs: number
}

/**
 * Prepare `harness` as the run stage does, wire the real tool-bridge (`harness-watch bridge serve` on
 * stdio, as the run stage starts it) with the harness's recipe, run
 * the real CLI (env: only the invocation's; stdin closed unless the adapter passes one) against the
 * scripted model on 127.0.0.1, and collect what the model saw and what the bridge received.
 */
export async function runWithBridge(opts: {
  harness: HarnessName
  installed: InstalledHarness
  api: WireApi
  model: string
  timeoutMs?: number
  /** Point the bridge at an environment file that does not exist (it cannot start). */
  brokenBridge?: boolean
}): Promise<BridgeRunResult> {
  const base = await mkdtemp(path.join(os.tmpdir(), `hw-bridge-${opts.harness}-`))
  const model = await startScriptedModel({ tasks: [ORDER_TASK], config: { success_rate: 1 } })
  try {
    const dirs = {
      workspace: path.join(base, 'work'),
      home: path.join(base, 'home'),
      tmp: path.join(base, 'tmp'),
    }
    for (const d of Object.values(dirs)) await mkdir(d, { recursive: true })
    await execa('git', ['init', '-q', '-b', 'main'], { cwd: dirs.workspace })
    const envFile = path.join(base, 'bridge.json')
    const stateDir = path.join(base, 'state')
    await writeFile(envFile, JSON.stringify(ORDER_ENV))
    const ctx: AttemptContext = {
      ...dirs,
      prompt: ORDER_INSTRUCTION,
      model: opts.model,
      api: opts.api,
      endpoint: { origin: model.origin, apiKey: 'sk-hw-bridge-test' },
      config: { args: [], env: {}, pass_env: [], files: {} },
      timeoutS: 120,
    }
    const adapter = adapterFor(opts.harness)
    const inv0 = await adapter.prepare(opts.installed, ctx)
    const endpoint = bridgeStdioEndpoint(
      { envFile: opts.brokenBridge ? path.join(base, 'missing.json') : envFile, stateDir },
      dirs.workspace,
    )
    const { invocation: inv, transport } = await wireBridge(opts.harness, inv0, ctx, endpoint)
    const t0 = performance.now()
    const run = await execa(inv.command, inv.args, {
      cwd: inv.cwd,
      env: inv.env,
      extendEnv: false,
      input: inv.stdin,
      stdin: inv.stdin === undefined ? 'ignore' : undefined,
      reject: false,
      timeout: opts.timeoutMs ?? 180_000,
      killSignal: 'SIGKILL',
    })
    const wallMs = performance.now() - t0
    const raw = {
      stdout: String(run.stdout ?? ''),
      stderr: String(run.stderr ?? ''),
      exitCode: run.exitCode ?? null,
      signal: run.signal ?? null,
      home: dirs.home,
    }
    const parsed = await adapter.parse(raw, ctx)
    const calls = ((await readFile(path.join(stateDir, 'calls.jsonl'), 'utf8').catch(() => '')) as string)
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as BridgeRunResult['calls'][number])
    const worldText = await readFile(path.join(stateDir, 'world.json'), 'utf8').catch(() => null)
    const world = worldText === null ? null : (JSON.parse(worldText) as Record<string, unknown>)
    return {
      exitCode: raw.exitCode,
      timedOut: run.timedOut === true,
      stdout: raw.stdout,
      stderr: raw.stderr,
      parsed,
      records: [...model.records()],
      calls,
      world,
      transport,
      wallMs,
    }
  } finally {
    await model.close()
    if (!process.env.HW_KEEP_BRIDGE_RUNS) await rm(base, { recursive: true, force: true })
  }
}
