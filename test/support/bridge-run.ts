import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import type { AttemptContext, InstalledHarness, ParsedRun } from '../../src/harnesses/contract.js'
import { type BridgeEndpoint, type BridgeTransport, wireBridge } from '../../src/harnesses/mcp.js'
import type { HarnessName, WireApi } from '../../src/harnesses/names.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import type { ModelRequestRecord } from '../../src/model/engine.js'
import { startScriptedModel } from '../../src/model/server.js'
import type { TaskScript } from '../../src/model/types.js'

const STUB = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mcp-stub-server.mjs')

/** The marker the stub bridge answers get_order with: proof the result reached the model. */
export const ORDER_MARKER = 'ORDER-W1234567-STATUS-shipped-7f3a'

/**
 * One bridge tool with the schema features rig.md §1 exercised (pattern, default, enum, minItems, a
 * nested object with additionalProperties:false, integer bounds, a nullable type array).
 */
export const GET_ORDER_TOOL = {
  name: 'get_order',
  description: 'Look up an order by id',
  inputSchema: {
    type: 'object',
    properties: {
      order_id: { type: 'string', description: 'Order id, e.g. #W1234567', pattern: '^#W[0-9]{7}$' },
      fields: { type: 'array', items: { type: 'string', enum: ['status', 'items'] }, minItems: 1 },
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
  result: ORDER_MARKER,
}

/** The reference call the scripted model follows. */
export const ORDER_CALL = {
  tool: 'get_order',
  arguments: { order_id: '#W1234567', fields: ['status'], options: { limit: 7 }, note: null },
}

export const ORDER_INSTRUCTION =
  'Look up order #W1234567 with the get_order tool and tell me its status. Answer in one line.'

export const ORDER_TASK: TaskScript = {
  id: 'order-status',
  instruction: ORDER_INSTRUCTION,
  solve: null,
  testCommand: null,
  inspectFile: null,
  calls: [ORDER_CALL],
  answer: null,
}

export interface BridgeRunResult {
  exitCode: number | null
  timedOut: boolean
  stdout: string
  stderr: string
  parsed: ParsedRun
  records: ModelRequestRecord[]
  /** The calls the stub bridge received, in order. */
  calls: { tool: string; arguments: Record<string, unknown> }[]
  transport: BridgeTransport
  wallMs: number
}

/**
 * Prepare `harness` as the run stage does, wire the stub bridge (stdio) with the harness's recipe, run
 * the real CLI (env: only the invocation's; stdin closed unless the adapter passes one) against the
 * scripted model on 127.0.0.1, and collect what the model saw and what the bridge received.
 */
export async function runWithBridge(opts: {
  harness: HarnessName
  installed: InstalledHarness
  api: WireApi
  model: string
  timeoutMs?: number
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
    const toolsFile = path.join(base, 'tools.json')
    const callsFile = path.join(base, 'calls.jsonl')
    await writeFile(toolsFile, JSON.stringify([GET_ORDER_TOOL]))
    await writeFile(callsFile, '')
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
    const endpoint: BridgeEndpoint = {
      kind: 'stdio',
      command: process.execPath,
      args: [STUB, toolsFile, callsFile],
    }
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
    const calls = (await readFile(callsFile, 'utf8'))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as BridgeRunResult['calls'][number])
    return {
      exitCode: raw.exitCode,
      timedOut: run.timedOut === true,
      stdout: raw.stdout,
      stderr: raw.stderr,
      parsed,
      records: [...model.records()],
      calls,
      transport,
      wallMs,
    }
  } finally {
    await model.close()
    if (!process.env.HW_KEEP_BRIDGE_RUNS) await rm(base, { recursive: true, force: true })
  }
}
