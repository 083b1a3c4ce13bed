import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { AttemptContext, HarnessAdapter, InstalledHarness, ParsedRun } from '../harnesses/contract.js'
import { type BridgeTransport, wireBridge } from '../harnesses/mcp.js'
import type { WireApi } from '../manifest/harness-names.js'
import type { Cell } from '../manifest/schema.js'
import type { HarnessRunResult } from '../process/exec.js'
import type { AttemptEnvironment, AttemptRecord } from '../records/attempt.js'
import type { ConfiguredCapabilities } from '../records/capabilities.js'
import type { Isolation } from '../records/isolation.js'
import type { Attribution, LedgerRow } from '../records/ledger.js'
import { checkLedger } from '../records/ledger-check.js'
import { ContainerFault } from '../sandbox/container/backend.js'
import { type ExecResult, isUnisolated, type SandboxProvenance } from '../sandbox/contract.js'
import type { SandboxChoice } from '../sandbox/select.js'
import type {
  AttemptBudget,
  AttemptTelemetry,
  CapturedTelemetry,
  TelemetryCapture,
} from '../telemetry/capture.js'
import { selfReportDivergence } from '../telemetry/summary.js'
import { HwError, messageOf } from '../util/errors.js'
import { writeAttemptAtif } from './atif-export.js'
import { bridgeSandboxPaths, bridgeStdioEndpoint } from './bridge.js'
import { ANSWER_FILE, type BridgeAttempt } from './bridge-source.js'
import { readAttemptCapabilities, writeAttemptCapabilities } from './capabilities.js'
import { type DialogueSummary, type HarnessOnce, runDialogueAttempt } from './dialogue.js'
import {
  beginUserSimulation,
  dialogueRecord,
  dialogueSpec,
  finishUserSimulation,
} from './dialogue-attempt.js'
import { harnessEnv } from './env.js'
import type { InstanceSource } from './instances.js'
import { classifyExit, decideOutcome, type ExitDecision } from './outcome.js'
import { emptyTelemetry } from './telemetry.js'
import type { AgentContainer, Verdict } from './verdict.js'
import {
  type AttemptDirs,
  collectDeliverable,
  type Deliverable,
  makeAttemptDirs,
  removeAttemptDirs,
} from './workspace.js'

/** What stays the same for every attempt of a leg. */
export interface LegContext {
  experimentId: string
  runId: string
  /** Run identity stamped on every record (see run/leg.ts planIdentity, runAttempt). */
  planSha256?: string
  legAttempt?: number
  round: number
  leg: string
  cell: Cell
  configHash: string
  /** Model id declared in the manifest route. */
  model: string
  api: WireApi
  /** The route's prices (USD per million tokens), when declared; passed to adapters for self-reports. */
  prices?: AttemptContext['prices']
  adapter: HarnessAdapter
  installed: InstalledHarness
  /** Version the installed CLI reported (probeVersion), or null. */
  harnessVersion: string | null
  source: InstanceSource
  capture: TelemetryCapture | null
  telemetrySource: 'ledger' | 'litellm'
  budget: AttemptBudget
  timeoutS: number
  killGraceMs: number
  /** Root of the attempt folders (`<root>/w/<id>` workspaces, `<root>/h/<id>` homes). */
  workRoot: string
  /** Self-report divergence ratio (manifest telemetry.self_report_divergence). */
  divergence: number
  /** Runner environment: PATH and the cell's pass_env names are read from it. */
  runnerEnv: NodeJS.ProcessEnv
  keepWorkspaces: boolean
  /** The sandbox every attempt of the run executes in (chosen once, canary-checked). */
  sandbox: SandboxChoice
  /** Folders the harness may read besides its install (manifest sandbox.read_only, absolute). */
  readOnly: string[]
  /** The manifest's user_model (multi-turn bridge tasks); null when none is declared. */
  userModel: { id: string; maxTurns: number } | null
}

export interface AttemptSpec {
  instance: string
  trial: number
  attempt: number
  quarantined: boolean
  /** The attempt's logs folder in the artifact (relative to the leg folder, and absolute). */
  logs: { rel: string; abs: string }
}

export interface AttemptResult {
  /** The record, with `final` still to be set by the leg (it depends on the retry decision). */
  record: AttemptRecord
  telemetry: CapturedTelemetry
  /** The run was aborted (signal): the leg records it as a stopped attempt, never final. */
  aborted: boolean
  /** pass_env names missing from the runner environment. */
  missingPassEnv: string[]
  /** The simulated user's ledger rows (role user_simulation; multi-turn tasks), never in `telemetry`. */
  userRows: LedgerRow[]
}

const FINAL_MESSAGE_MAX = 2000

/**
 * Run one attempt end to end and describe it: fresh workspace (copied + baseline commit) and home,
 * telemetry begin, adapter prepare, the harness under its timeout in its own process group, telemetry
 * finish (in parallel with deliverable + verifier), exit class and outcome. Writes stdout.txt,
 * stderr.txt, patch.diff, verifier.log and trajectory.jsonl into `spec.logs.abs`. Failures on our side
 * become exit class `infra`; the function throws only for defects. Workspace and home are removed
 * afterwards unless `keepWorkspaces`.
 */
export async function runAttempt(
  leg: LegContext,
  spec: AttemptSpec,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const startedAt = new Date()
  const t0 = performance.now()
  const logs = spec.logs.abs
  const attribution: Attribution = {
    experiment_id: leg.experimentId,
    run_id: leg.runId,
    cell_id: leg.cell.id,
    instance_id: spec.instance,
    trial: spec.trial,
    attempt: spec.attempt,
    round: leg.round,
    // Run identity on every ledger row, so that a leg artifact mixing runs is found at its line.
    ...(leg.planSha256 ? { plan_sha256: leg.planSha256 } : {}),
    ...(leg.legAttempt ? { leg_attempt: leg.legAttempt } : {}),
  }
  let dirs: AttemptDirs | null = null
  let tel: AttemptTelemetry | null = null
  let infraError: string | null = null
  let ctx: AttemptContext | null = null
  let baseCommit = ''
  let missingPassEnv: string[] = []
  let run: ExecResult | null = null
  let setupMs = 0
  let transport: BridgeTransport | undefined
  let dialogue: DialogueSummary | null = null
  let userTel: AttemptTelemetry | null = null
  let agentBox: SandboxProvenance | null = null
  /** The harness's capabilities as its configuration states them (read once, before the first run). */
  let configured: ConfiguredCapabilities | null = null
  /** The agent's container, kept after the harness exited until the verifier ran in it (Harbor's rule). */
  const keep: { agent: AgentContainer | null } = { agent: null }
  const stdoutFile = path.join(logs, 'stdout.txt')
  const stderrFile = path.join(logs, 'stderr.txt')
  try {
    // --- setup: workspace, home, telemetry key, adapter config ---
    let prompt = ''
    let bridge: BridgeAttempt | undefined
    /** The harness's network, as its sandbox reported it (unset when the harness never ran). */
    let network: 'proxy-only' | 'host' | undefined
    try {
      dirs = await makeAttemptDirs(leg.workRoot)
      ;({ prompt, baseCommit, bridge } = await leg.source.prepare(
        spec.instance,
        {
          workspace: dirs.workspace,
          scratch: dirs.scratch,
          logsDir: logs,
        },
        signal,
      ))
    } catch (e) {
      infraError = `workspace setup failed: ${firstLine(messageOf(e))}`
    }
    if (!infraError && leg.capture) {
      try {
        tel = await leg.capture.begin(attribution, leg.budget)
      } catch (e) {
        infraError = `telemetry capture failed to start: ${firstLine(messageOf(e))}`
      }
    }
    if (!infraError && dirs) {
      ctx = {
        workspace: dirs.workspace,
        home: dirs.home,
        tmp: dirs.tmp,
        prompt,
        model: leg.model,
        api: leg.api,
        // Without a capture there is nowhere to send requests: a closed port makes that visible.
        endpoint: tel?.endpoint ?? { origin: 'http://127.0.0.1:9', apiKey: 'hw-no-telemetry' },
        config: leg.cell.config,
        timeoutS: leg.timeoutS,
        prices: leg.prices,
      }
      const c = ctx
      const d = dirs
      // One harness process: prepared for `turn.prompt`, bridge wired, run in the run's sandbox.
      const once: HarnessOnce = async (turn) => {
        const tctx = { ...c, prompt: turn.prompt }
        let inv = await leg.adapter.prepare(leg.installed, tctx)
        if (bridge) {
          const wired = await wireBridge(
            leg.adapter.name,
            inv,
            tctx,
            bridgeStdioEndpoint(bridge, bridge.sandbox),
          )
          inv = wired.invocation
          transport = wired.transport
        }
        inv = turn.adjust(inv)
        configured ??= await readAttemptCapabilities(leg, inv, tctx.home, turn.prompt, tctx.workspace)
        const env = harnessEnv({
          dirs: d,
          runnerEnv: leg.runnerEnv,
          invocationEnv: inv.env,
          configEnv: leg.cell.config.env,
          passEnv: leg.cell.config.pass_env,
        })
        missingPassEnv = env.missing
        if (setupMs === 0) setupMs = performance.now() - t0
        const reach = bridge ? bridgeSandboxPaths(bridge) : { writable: [], readOnly: [] }
        const container =
          leg.sandbox.backend.kind === 'container'
            ? {
                phase: 'agent' as const,
                ...(await leg.source.container(spec.instance)),
                // No capture, no endpoint to forward: the closed port stays closed.
                ports: tel ? loopbackPorts(c.endpoint.origin) : [],
              }
            : undefined
        // A dialogue's next turn: the previous turn's container is done with.
        await keep.agent?.box.close()
        keep.agent = null
        const box = await leg.sandbox.backend.open({
          writable: [d.workspace, d.home, ...reach.writable],
          readOnly: [leg.installed.root, ...leg.readOnly, ...reach.readOnly],
          container,
          // A declared read_only checkout is readable, its .git (which may hold a token) is not.
          masked: leg.readOnly.map((p) => path.join(p, '.git')).filter((g) => existsSync(g)),
          // An isolating backend gives the harness a network of its own whose only way out is the
          // attempt's endpoint, the recording proxy on 127.0.0.1, wherever the upstream lives.
          loopbackPorts: harnessPorts(c.endpoint.origin, leg.sandbox.backend.kind),
        })
        network = box.network
        if (box.provenance) agentBox = box.provenance
        try {
          return await box.exec(
            { command: inv.command, args: inv.args, cwd: inv.cwd, env: env.env, stdin: inv.stdin },
            {
              timeoutMs: turn.timeoutMs,
              graceMs: leg.killGraceMs,
              stdoutFile: turn.stdoutFile,
              stderrFile: turn.stderrFile,
              signal,
              sweepHome: d.home,
            },
          )
        } finally {
          // A container stays, its processes ended, for a verifier that runs in it; the rest close now.
          if (box.settle && !signal?.aborted)
            keep.agent = { box, alive: await box.settle().catch(() => false) }
          else await box.close()
        }
      }
      try {
        if (bridge?.scenario) {
          userTel = await beginUserSimulation(leg, attribution)
          ;({ run, summary: dialogue } = await runDialogueAttempt(
            dialogueSpec(
              leg,
              { opening: prompt, scenario: bridge.scenario, logs, stdoutFile, stderrFile },
              userTel,
              once,
              (stdout, stderr, r) => parseRun(leg, c, r, stdout, stderr, d),
              signal,
            ),
          ))
        } else {
          run = await once({
            prompt,
            adjust: (inv) => inv,
            stdoutFile,
            stderrFile,
            timeoutMs: leg.timeoutS * 1000,
          })
        }
        if (run?.spawnError) infraError = `harness could not be started: ${run.spawnError}`
        else if (run?.fault) infraError = `${run.fault.kind}: ${run.fault.detail}`
        else if (dialogue?.error) infraError = `simulated user failed: ${dialogue.error}`
      } catch (e) {
        infraError =
          e instanceof ContainerFault
            ? `container ${e.kind.replace('_', ' ')}: ${firstLine(e.message)}`
            : `harness preparation failed: ${firstLine(messageOf(e))}`
      }
    }
    if (!run) setupMs = performance.now() - t0
    const harnessMs = run?.durationMs ?? 0

    // --- after the harness: telemetry (waits for quiescence) alongside deliverable + verifier ---
    const ranHarness = run !== null && !run.spawnError
    const telemetryP = finishTelemetry(tel, leg, ranHarness)
    const userSpendP = finishUserSimulation(userTel)
    const afterP = (async () => {
      const stdout = await readFile(stdoutFile, 'utf8').catch(() => '')
      const stderr = await readFile(stderrFile, 'utf8').catch(() => '')
      if (!run) {
        await writeFile(stdoutFile, stdout)
        await writeFile(stderrFile, stderr)
      }
      const parsed = await parseRun(leg, ctx, run, stdout, stderr, dirs)
      await writeFile(
        path.join(logs, 'trajectory.jsonl'),
        parsed.trajectory.map((e) => `${safeJson(e)}\n`).join(''),
      )
      const deliverable: Deliverable =
        dirs && baseCommit
          ? await collectDeliverable(dirs.workspace, baseCommit, leg.sandbox.backend)
          : { patch: '', bytes: 0, sha256: null, files_changed: 0, error: null }
      const patchFile = path.join(logs, 'patch.diff')
      await writeFile(patchFile, deliverable.patch)
      // Beside the patch: what it leaves out (binary files, files the repository ignores).
      if (deliverable.excluded && deliverable.excluded.length > 0) {
        await writeFile(
          path.join(logs, 'patch.excluded.txt'),
          deliverable.excluded.map((e) => `${e.why}\t${e.path}\n`).join(''),
        )
      }
      let verdict: Verdict | null = null
      const vt0 = performance.now()
      if (ranHarness && dirs && !run?.aborted) {
        // The answer grader of bridge tasks reads the final answer from the private scratch folder.
        await writeFile(path.join(dirs.scratch, ANSWER_FILE), parsed.finalMessage ?? '')
        verdict = await leg.source.verify(
          spec.instance,
          { workspace: dirs.workspace, scratch: dirs.scratch, logsDir: logs },
          patchFile,
          signal,
          keep.agent ?? undefined,
        )
      } else {
        await writeFile(path.join(logs, 'verifier.log'), 'verifier skipped: the harness did not run\n')
      }
      await keep.agent?.box.close()
      return { parsed, deliverable, verdict, verifierMs: performance.now() - vt0 }
    })()
    const [telemetry, after, userSpend] = await Promise.all([telemetryP, afterP, userSpendP])
    const { parsed, deliverable, verdict } = after

    // --- exit class and outcome ---
    let exit: ExitDecision = classifyExit({
      infraError,
      exitCode: run?.exitCode ?? null,
      signal: run?.signal ?? null,
      timedOut: run?.timedOut ?? false,
      startupError: parsed.startupError,
      budgetExceeded: telemetry.summary.budget_exceeded,
      harnessBudgetStop: parsed.budgetStop ?? null,
      rows: telemetry.rows,
      deliverableBytes: deliverable.bytes,
    })
    if (exit.class === 'clean' && verdict?.status === 'error') {
      exit = { class: 'infra', reason: `verifier crashed: ${verdict.reason ?? 'unknown'}` }
    }
    const verifierStatus = verdict?.status ?? 'skipped'
    const outcome = decideOutcome({ exit, verifier: verifierStatus, deliverableBytes: deliverable.bytes })
    // The proxy's numbers stand; the harness's own report only raises flags (and lowers coverage).
    const checked = selfReportDivergence(telemetry.summary, parsed.selfReport, leg.divergence).summary
    const flags: string[] = []
    if (deliverable.error) flags.push('deliverable_unavailable')
    if (run && run.strays > 0) flags.push('stray_processes_killed')
    const summary = { ...checked, flags: [...new Set([...checked.flags, ...flags])] }
    // The trajectory also as ATIF v1.7 beside trajectory.jsonl, metrics from the proxy's ledger.
    const atif = await writeAttemptAtif({
      logsDir: logs,
      sessionId: `${leg.cell.id}/${spec.instance}/${spec.trial}-${spec.attempt}`,
      cell: leg.cell.id,
      instance: spec.instance,
      trial: spec.trial,
      attempt: spec.attempt,
      harness: leg.cell.harness,
      harnessVersion: leg.harnessVersion,
      startedAtMs: startedAt.getTime(),
      rows: telemetry.rows,
    })
    if (atif.file === null) summary.flags.push('atif_not_written')
    if (!(await writeAttemptCapabilities(leg, logs, configured, telemetry.rows)))
      summary.flags.push('capabilities_not_written')
    const record: AttemptRecord = {
      schema_version: 1,
      experiment_id: leg.experimentId,
      run_id: leg.runId,
      round: leg.round,
      leg: leg.leg,
      cell_id: leg.cell.id,
      harness: leg.cell.harness,
      harness_version: leg.harnessVersion,
      config_hash: leg.configHash,
      model: leg.model,
      instance_id: spec.instance,
      trial: spec.trial,
      attempt: spec.attempt,
      final: true,
      quarantined: spec.quarantined,
      started_at: startedAt.toISOString(),
      ended_at: new Date().toISOString(),
      phases_ms: { setup: round1(setupMs), harness: round1(harnessMs), verifier: round1(after.verifierMs) },
      exit: {
        class: exit.class,
        code: run?.exitCode ?? null,
        signal: run?.signal ?? null,
        reason: exit.reason,
      },
      timed_out: run?.timedOut ?? false,
      outcome: outcome.outcome,
      outcome_reason: outcome.reason,
      verifier: {
        status: verifierStatus,
        exit_code: verdict?.exitCode ?? null,
        reward: verdict?.reward ?? null,
        duration_ms: round1(verdict?.durationMs ?? 0),
      },
      deliverable: {
        bytes: deliverable.bytes,
        sha256: deliverable.sha256,
        files_changed: deliverable.files_changed,
        ...(deliverable.test_only ? { test_only: true } : {}),
        ...(deliverable.non_utf8 ? { non_utf8: deliverable.non_utf8 } : {}),
      },
      telemetry: summary,
      ledger_check: checkLedger(telemetry.rows, summary.reconciliation?.proxy_requests ?? null),
      self_report: parsed.selfReport,
      final_message: parsed.finalMessage === null ? null : parsed.finalMessage.slice(0, FINAL_MESSAGE_MAX),
      logs_dir: spec.logs.rel,
      ...(atif.file !== null ? { atif: atif.file } : {}),
      ...(leg.planSha256 ? { plan_sha256: leg.planSha256 } : {}),
      ...(leg.legAttempt ? { leg_attempt: leg.legAttempt } : {}),
      ...(transport ? { transport } : {}),
      ...(dialogue ? { dialogue: dialogueRecord(dialogue, userSpend) } : {}),
      ...(verdict?.tools ? { tools: verdict.tools } : {}),
      isolation: leg.sandbox.backend.kind,
      canary: leg.sandbox.canary,
      ...(network ? { network } : {}),
      ...(agentBox ? { environment: environmentRecord(agentBox, verdict) } : {}),
    }
    return {
      record,
      telemetry: { rows: telemetry.rows, summary },
      // Once the run is aborted nothing that ends is recorded: an interrupted copy or a killed child is
      // our stop, not the attempt's failure (resume runs it again).
      aborted: (run?.aborted ?? false) || (signal?.aborted ?? false),
      missingPassEnv,
      userRows: userSpend?.rows ?? [],
    }
  } finally {
    await keep.agent?.box.close()
    if (dirs && !leg.keepWorkspaces) await removeAttemptDirs(dirs)
  }
}

/** Collect the attempt's telemetry; a failing capture is coverage `missing` with its reason, never zero. */
async function finishTelemetry(
  tel: AttemptTelemetry | null,
  leg: LegContext,
  ranHarness: boolean,
): Promise<CapturedTelemetry> {
  if (!tel) {
    const reason = leg.capture ? 'the harness did not run' : 'no telemetry capture configured'
    return { rows: [], summary: emptyTelemetry(leg.telemetrySource, 'unknown', reason) }
  }
  try {
    return await tel.finish()
  } catch (e) {
    const reason = `telemetry capture failed: ${firstLine(messageOf(e))}`
    return {
      rows: [],
      summary: emptyTelemetry(leg.telemetrySource, ranHarness ? 'missing' : 'unknown', reason),
    }
  }
}

/** The adapter's reading of the run; a parser that throws gives an empty reading, flagged in the trajectory. */
async function parseRun(
  leg: LegContext,
  ctx: AttemptContext | null,
  run: HarnessRunResult | null,
  stdout: string,
  stderr: string,
  dirs: AttemptDirs | null,
): Promise<ParsedRun> {
  if (!run || !ctx || !dirs)
    return { finalMessage: null, trajectory: [], selfReport: null, startupError: null }
  try {
    return await leg.adapter.parse(
      { stdout, stderr, exitCode: run.exitCode, signal: run.signal, home: dirs.home },
      ctx,
    )
  } catch (e) {
    return {
      finalMessage: null,
      trajectory: [{ type: 'hw_parse_error', message: firstLine(messageOf(e)) }],
      selfReport: null,
      startupError: null,
    }
  }
}

/** The attempt's container provenance: the agent's container, and the verifier's network when one ran. */
function environmentRecord(agent: SandboxProvenance, verdict: Verdict | null): AttemptEnvironment {
  return {
    runtime: agent.runtime,
    runtime_version: agent.runtime_version,
    image_ref: agent.image_ref,
    image_id: agent.image_id,
    workdir: agent.workdir,
    resources: agent.resources,
    network: { agent: agent.network, verifier: verdict?.network ?? null },
    verifier_container: verdict?.container?.where ?? null,
    verifier_container_reason: verdict?.container?.reason ?? null,
    ...(agent.storage_enforced !== undefined ? { storage_enforced: agent.storage_enforced } : {}),
  }
}

/** The 127.0.0.1 port of a loopback endpoint (the recording proxy), to forward into a container. */
export function loopbackPorts(origin: string): number[] {
  try {
    const u = new URL(origin)
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return []
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80))
    return Number.isInteger(port) && port > 0 ? [port] : []
  } catch {
    return []
  }
}

function firstLine(s: string): string {
  return (s.split('\n')[0] ?? '').slice(0, 500)
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10
}

/** JSON of a trajectory event; values without a JSON form (cycles, BigInt) become a note. */
function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'null'
  } catch {
    return JSON.stringify({ type: 'hw_unserialisable_event' })
  }
}

/**
 * The loopback ports a harness may reach: under an isolating backend, the port of its
 * `http://127.0.0.1:<port>` endpoint (the recording proxy, which alone reaches the upstream, local or
 * remote); never the host's network. An endpoint elsewhere cannot be the only way out: HwError
 * `endpoint_not_proxied`. Unisolated backends keep the host's network (undefined).
 */
export function harnessPorts(origin: string, backend: Isolation): number[] | undefined {
  if (isUnisolated(backend)) return undefined
  const m = /^http:\/\/127\.0\.0\.1:(\d+)(\/|$)/.exec(origin)
  if (m) return [Number(m[1])]
  throw new HwError(
    'endpoint_not_proxied',
    `the harness's model endpoint ${origin} is not the recording proxy on 127.0.0.1: under the ${backend} sandbox the proxy is the harness's only way out`,
    { help: 'keep the recording proxy in front of the upstream (telemetry.litellm keeps it by default)' },
  )
}
