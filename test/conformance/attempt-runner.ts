/**
 * One conformance attempt in its own process (inside a loopback-only network namespace when the suite
 * can make one): start the scripted model on the agreed port (and a DNS sink when asked), run the
 * harness's invocation with only its own environment and its stdin (the prompt, for harnesses that take
 * it there; else closed), and write what happened to the
 * result file. Usage: node --import tsx attempt-runner.ts <spec.json>
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { execa } from 'execa'
import { startScriptedModel } from '../../src/model/server.js'
import { startDnsSink } from './dns-sink.js'

export interface RunnerSpec {
  invocation: { command: string; args: string[]; env: Record<string, string>; cwd: string; stdin?: string }
  port: number
  panelDir: string
  timeoutMs: number
  dns: boolean
  resultFile: string
}

export interface RunnerResult {
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  wallMs: number
  /** From launch to the first model request, ms (null when none came). */
  startupMs: number | null
  /** When each model request arrived, ms after launch. */
  requestAtMs: number[]
  stdout: string
  stderr: string
  records: unknown[]
  dnsNames: string[] | null
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as RunnerSpec
  const dns = spec.dns ? await startDnsSink() : null
  const arrivals: number[] = []
  const model = await startScriptedModel({
    port: spec.port,
    panelDirs: [spec.panelDir],
    config: { success_rate: 1, caching: true },
    log: () => {
      arrivals.push(Date.now())
    },
  })
  const t0 = Date.now()
  const r = await execa(spec.invocation.command, spec.invocation.args, {
    env: spec.invocation.env,
    extendEnv: false,
    cwd: spec.invocation.cwd,
    ...(spec.invocation.stdin === undefined
      ? { stdin: 'ignore' as const }
      : { input: spec.invocation.stdin }),
    reject: false,
    timeout: spec.timeoutMs,
    forceKillAfterDelay: 5000,
    maxBuffer: 64 * 1024 * 1024,
  })
  const wallMs = Date.now() - t0
  const result: RunnerResult = {
    exitCode: r.exitCode ?? null,
    signal: r.signal ?? null,
    timedOut: r.timedOut,
    wallMs,
    startupMs: arrivals[0] === undefined ? null : arrivals[0] - t0,
    requestAtMs: arrivals.map((t) => t - t0),
    stdout: r.stdout,
    stderr: r.stderr,
    records: [...model.records()],
    dnsNames: dns ? [...dns.names] : null,
  }
  await model.close()
  await dns?.close()
  writeFileSync(spec.resultFile, JSON.stringify(result))
}

main().catch((e) => {
  process.stderr.write(`attempt runner failed: ${(e as Error).stack ?? e}\n`)
  process.exit(70)
})
