import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AGENTD_BUDGET_EXIT,
  agentdAdapter,
  agentdBinary,
  parseAgentdRun,
} from '../../src/harnesses/agentd.js'
import type { AttemptContext } from '../../src/harnesses/contract.js'
import { wireBridge } from '../../src/harnesses/mcp.js'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { runHarnessProcess } from '../../src/process/exec.js'
import { classifyExit, decideOutcome } from '../../src/run/outcome.js'
import { HwError } from '../../src/util/errors.js'
import { isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

const STANDIN = path.join(import.meta.dirname, 'fixtures', 'agentd', 'agentd-standin.mjs')
const VERSION = '0.9.0'
let cache: string
let model: ScriptedModel

beforeAll(async () => {
  cache = mkdtempSync(path.join(os.tmpdir(), 'hw-agentd-cache-'))
  const bin = agentdBinary(cache, VERSION)
  mkdirSync(path.dirname(bin), { recursive: true })
  copyFileSync(STANDIN, bin)
  chmodSync(bin, 0o755)
  model = await startScriptedModel({ config: { success_rate: 1 } })
})
afterAll(async () => {
  await model.close()
  rmSync(cache, { recursive: true, force: true })
})

/** Prepare and run the stand-in to the process boundary (the run stage's own process runner). */
async function run(ctx: AttemptContext, bridge = false) {
  const installed = await agentdAdapter.install(VERSION, { cacheDir: cache, log: () => {} })
  let inv = await agentdAdapter.prepare(installed, ctx)
  if (bridge) {
    inv = (await wireBridge('agentd', inv, ctx, { kind: 'stdio', command: '/usr/bin/node', args: ['b.js'] }))
      .invocation
  }
  const stdoutFile = path.join(ctx.tmp, 'out.txt')
  const stderrFile = path.join(ctx.tmp, 'err.txt')
  const r = await runHarnessProcess(
    { command: inv.command, args: inv.args, cwd: inv.cwd, env: inv.env },
    { timeoutMs: 30_000, graceMs: 1000, stdoutFile, stderrFile, sweepHome: ctx.home },
  )
  const raw = {
    stdout: readFileSync(stdoutFile, 'utf8'),
    stderr: readFileSync(stderrFile, 'utf8'),
    exitCode: r.exitCode,
    signal: r.signal,
    home: ctx.home,
  }
  const argv = JSON.parse(await readFile(path.join(ctx.home, '.agentd', 'argv.json'), 'utf8')) as string[]
  return { inv, raw, parsed: await agentdAdapter.parse(raw, ctx), argv }
}

describe('agentd adapter (stand-in program at the process boundary)', () => {
  const dirs = useAttemptDirs()

  it('runs `once --instruction --intelligence` against the route and reads loop.final usage', async () => {
    const ctx = makeCtx(dirs, {
      endpoint: { origin: model.origin, apiKey: 'sk-hw-attempt-1' },
      model: 'gpt-5-mini',
    })
    const { inv, raw, parsed, argv } = await run(ctx)
    expect(argv).toEqual(['once', '--instruction', ctx.prompt, '--intelligence', 'gpt-5-mini'])
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys('OPENAI_BASE_URL', 'OPENAI_API_KEY', 'AGENTD_HOME'),
    )
    expect(inv.env.OPENAI_BASE_URL).toBe(`${model.origin}/v1`)
    expect(leaks(inv.env)).toEqual([])
    expect(raw.exitCode).toBe(0)
    const seen = model.records().at(-1)
    expect(seen?.model).toBe('gpt-5-mini')
    expect(parsed.selfReport).toEqual({
      input_tokens: seen?.usage?.inputTotal,
      output_tokens: seen?.usage?.output,
      cache_read_tokens: seen?.usage?.cacheRead,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 1,
      turns: 1,
    })
    expect(parsed.finalMessage).toBe(seen?.action?.kind === 'text' ? seen.action.text : '?')
    expect(parsed.startupError).toBeNull()
    expect(parsed.budgetStop).toBeNull()
    // the non-JSON stderr line is not an event
    expect(parsed.trajectory.map((e) => (e as { event: string }).event)).toEqual(['loop.start', 'loop.final'])
  })

  it('exit 7 is a budget stop: exit class budget, graded on what it left (not infra)', async () => {
    const ctx = makeCtx(dirs, {
      endpoint: { origin: model.origin, apiKey: 'sk-hw-attempt-1' },
      config: { args: [], env: { AGENTD_STANDIN_EXIT: String(AGENTD_BUDGET_EXIT) }, pass_env: [], files: {} },
    })
    const { raw, parsed } = await run(ctx)
    expect(raw.exitCode).toBe(7)
    expect(parsed.budgetStop).toBe('agentd budget stop (exit 7)')
    expect(parsed.startupError).toBeNull()
    const exit = classifyExit({
      infraError: null,
      exitCode: 7,
      signal: null,
      timedOut: false,
      startupError: parsed.startupError,
      budgetExceeded: false,
      harnessBudgetStop: parsed.budgetStop,
      rows: [],
      deliverableBytes: 0,
    })
    expect(exit).toEqual({ class: 'budget', reason: 'agentd budget stop (exit 7)' })
    expect(decideOutcome({ exit, verifier: 'fail', deliverableBytes: 0 })).toEqual({
      outcome: 'unresolved',
      reason: null,
    })
  })

  it('the bridge recipe adds --mcp <file> holding the bridge server', async () => {
    const ctx = makeCtx(dirs, { endpoint: { origin: model.origin, apiKey: 'sk-hw-attempt-1' } })
    const { argv } = await run(ctx, true)
    const file = path.join(dirs.home, '.agentd', 'hw-mcp.json')
    expect(argv.slice(-2)).toEqual(['--mcp', file])
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      mcpServers: { bridge: { command: '/usr/bin/node', args: ['b.js'] } },
    })
  })

  it('a usage error before any request is a startup failure with agentd’s own message', async () => {
    const parsed = parseAgentdRun(
      rawRun('', { exitCode: 2, stderr: 'error: usage: agentd once --instruction <text>\n' }),
    )
    expect(parsed.startupError).toBe('exit 2: error: usage: agentd once --instruction <text>')
    expect(parsed.finalMessage).toBeNull()
    expect(parsed.selfReport).toBeNull()
  })

  it('forged telemetry: non-numeric usage is null, never NaN; the last loop.final wins', () => {
    const stderr = [
      '{"event":"loop.final","usage":{"prompt_tokens":5}}',
      '{"event":"loop.final","usage":{"prompt_tokens":"many","completion_tokens":-1,"requests":2},"answer":"ok"}',
      '{not json',
    ].join('\n')
    const parsed = parseAgentdRun(rawRun('stdout answer', { stderr }))
    expect(parsed.finalMessage).toBe('ok')
    expect(parsed.selfReport?.input_tokens).toBeNull()
    expect(parsed.selfReport?.requests).toBe(2)
    expect(JSON.stringify(parsed.selfReport)).not.toMatch(/NaN|Infinity/)
  })

  it('install names where the pinned binary goes when it is missing', async () => {
    const err = await agentdAdapter.install('9.9.9', { cacheDir: cache, log: () => {} }).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toBe('agentd 9.9.9 is not in the harness cache')
    expect((err as HwError).where).toBe(agentdBinary(cache, '9.9.9'))
  })

  it('probes the version the binary reports', async () => {
    const installed = await agentdAdapter.install(VERSION, { cacheDir: cache, log: () => {} })
    expect(await agentdAdapter.probeVersion(installed)).toBe('0.9.0')
  })
})
