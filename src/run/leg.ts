import { randomBytes } from 'node:crypto'
import { cp, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { retryExitClass } from '../classify/classify.js'
import { classifyOptions, declaredLimits } from '../classify/options.js'
import type { InstalledHarness } from '../harnesses/contract.js'
import { defaultCacheDir } from '../harnesses/install.js'
import { adapterFor } from '../harnesses/registry.js'
import type { LoadedManifest } from '../manifest/load.js'
import { cellRoute } from '../manifest/schema.js'
import { resolvePanel } from '../panel/resolve.js'
import { planIdentity } from '../plan/identity.js'
import type { Plan } from '../plan/schema.js'
import type { AttemptRecord, LegRecord } from '../records/attempt.js'
import { isUnisolated, UNISOLATED_WARNING } from '../sandbox/contract.js'
import { chooseSandbox, type SandboxChoice } from '../sandbox/select.js'
import type { TelemetryCapture } from '../telemetry/capture.js'
import { HwError, messageOf } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import { LegArtifact } from './artifact.js'
import { type LegContext, runAttempt } from './attempt.js'
import { instanceSource } from './instances.js'
import { backoffSeconds, shouldRetry } from './outcome.js'
import { selectLeg } from './plan-file.js'
import { attemptKey, pairKey, resumeState } from './resume.js'
import { emptyTelemetry } from './telemetry.js'

/** Progress of one leg, for bars and log lines (see progress.ts). `done`/`total` count (instance, trial) pairs. */
export type LegProgressEvent =
  | {
      type: 'start'
      leg: string
      cell: string
      harness: string
      total: number
      done: number
      resolved: number
    }
  | {
      type: 'attempt'
      leg: string
      record: AttemptRecord
      done: number
      total: number
      resolved: number
      /** A retry of this (instance, trial) follows. */
      retrying: boolean
    }
  | {
      type: 'end'
      leg: LegRecord
      finals: AttemptRecord[]
      /** What this call did: attempts it ran and its wall time (s); `resumed` when earlier attempts were recorded. */
      session: LegSession
    }

/** One call of runLeg on a leg folder, for the summary line (a resume may run nothing). */
export interface LegSession {
  /** Attempts recorded by this call (0 when every (instance, trial) was already done). */
  attempts: number
  /** Wall time of this call, seconds. */
  seconds: number
  /** Attempts of earlier calls were found in the folder. */
  resumed: boolean
}

export interface RunLegOptions {
  /** The manifest as loaded (its sha256 must match the plan's). */
  loaded: LoadedManifest
  /** plan.json's content (validated again here). */
  plan: Plan | unknown
  /** Leg id, e.g. `pi-s0`. */
  leg: string
  /** The leg's artifact folder. */
  outDir: string
  runId: string
  /** Shared telemetry capture; null/undefined = none (coverage `unknown` on every attempt). */
  capture?: TelemetryCapture | null
  /** Where harness packages are installed (shared across legs). Default $HW_CACHE_DIR or ~/.cache/harness-watch/harnesses. */
  cacheDir?: string
  /** Move an existing output folder aside (to `<tmpdir>/harness-watch-prev/<name>-<UTC stamp>`) instead of resuming it. */
  fresh?: boolean
  onProgress?: (e: LegProgressEvent) => void
  /** Aborting kills the attempt in flight (not recorded) and ends the leg as `partial`. */
  signal?: AbortSignal
  /** Root of attempt workspaces and homes (same for every leg compared). Default `<tmpdir>/hw`. */
  workRoot?: string
  /** Milliseconds between SIGTERM and SIGKILL when an attempt times out. Default 5000. */
  killGraceMs?: number
  /** Keep workspaces and homes after each attempt (debugging). */
  keepWorkspaces?: boolean
  /** Runner environment (PATH, pass_env). Default process.env. */
  runnerEnv?: NodeJS.ProcessEnv
  /** Lines for a person (install progress, warnings). */
  log?: (line: string) => void
  /** The sandbox to use instead of choosing one from the manifest's `sandbox` section (tests). */
  sandbox?: SandboxChoice
}

/** Where a leg's attempt folders go: `workRoot` (absolute), default `<tmpdir>/hw`; also the sandbox choice's key. */
export function legWorkRoot(workRoot?: string): string {
  return path.resolve(workRoot ?? path.join(os.tmpdir(), 'hw'))
}

/**
 * Run one leg (one cell on one shard) into `outDir`: attempts.jsonl, ledger.jsonl, leg.json and
 * logs/<instance>/<trial>-<attempt>/. Instances run in the plan's seeded order, each `trials` times
 * (trial 0..k−1); an attempt whose exit class is in `retries.on` is retried (new attempt, fresh
 * workspace and key) up to `retries.max` times with exponential backoff; every attempt is recorded and
 * only the last of a (instance, trial) is `final`. Rerunning into the same folder skips pairs whose
 * final attempt is recorded (resume), unless `fresh`.
 *
 * Throws HwError before anything runs for a user mistake: invalid plan (`plan_invalid`, e.g. a `../`
 * instance id), stale plan (`plan_stale`: manifest sha256 or config hash differ), unknown leg
 * (`leg_unknown`), a panel that cannot run (`panel_invalid`), a folder holding another leg
 * (`resume_mismatch`). Later failures do not throw: they are in the returned LegRecord
 * (status `failed` with `error`; `partial` when aborted or incomplete; `complete` otherwise).
 */
export async function runLeg(opts: RunLegOptions): Promise<LegRecord> {
  const sessionT0 = performance.now()
  const { loaded } = opts
  const m = loaded.manifest
  const sel = selectLeg(loaded, opts.plan, opts.leg)
  const { plan, leg, cell, configHash } = sel
  const panel = await resolvePanel(m, loaded.dir, loaded.file, loaded.locate)
  const workRoot = legWorkRoot(opts.workRoot)
  const adapter = adapterFor(cell.harness)
  const planCell = plan.cells.find((c) => c.id === cell.id)
  // The cell's own model route (a several-model experiment names one per cell).
  const route = cellRoute(m, cell)
  const log = opts.log ?? (() => {})
  // Chosen (and canary-checked) once per run, before anything of the leg starts.
  const sandbox = opts.sandbox ?? (await chooseSandbox(m.sandbox, workRoot))
  const readOnly = m.sandbox.read_only.map((p) => path.resolve(loaded.dir, p))
  const source = instanceSource({
    manifest: m,
    tasksDir: panel.tasksDir,
    runId: opts.runId,
    label: cell.id,
    setupTimeoutS: Math.max(m.budgets.timeout_s, m.benchmark.verifier.timeout_s),
    templatesDir: path.join(workRoot, 't', randomBytes(6).toString('hex')),
    // Setup scripts and verifiers run in the run's sandbox, like the attempts.
    sandbox: sandbox.backend,
    readOnly,
    hostCommands: m.sandbox.host_commands === true,
  })
  for (const note of sandbox.notes) log(`sandbox: ${note}`)
  if (m.sandbox.host_commands && !isUnisolated(sandbox.backend.kind) && !panel.tasksDir) {
    log(
      "warning: sandbox.host_commands: benchmark.setup and benchmark.verifier.command run as the action's own user, outside the sandbox; code they run could read the action's secrets",
    )
  }
  if (isUnisolated(sandbox.backend.kind)) {
    if (!sandbox.notes.some((n) => n.includes(UNISOLATED_WARNING))) {
      log(`warning: sandbox ${sandbox.backend.kind}: ${UNISOLATED_WARNING}`)
    }
  }

  if (opts.fresh) await moveAside(opts.outDir, log)
  const artifact = new LegArtifact(opts.outDir)
  await artifact.init()
  const identity = {
    experiment_id: m.experiment.id,
    leg: leg.leg,
    cell_id: cell.id,
    config_hash: configHash,
    round: plan.round,
  }
  const existing = await artifact.readAttempts(log)
  const state = resumeState(existing, identity, artifact.attemptsFile)
  const previous = await artifact.readLeg()
  if (previous && existing.length > 0 && previous.manifest_sha256 !== loaded.sha256) {
    // Same cell, but budgets, retries or the panel may differ: attempts would not be comparable.
    throw new HwError(
      'resume_mismatch',
      'the output folder holds attempts made under another version of the manifest',
      {
        where: quotePath(artifact.legFile),
        help: 'use another --out folder, or --fresh to move the old results aside',
      },
    )
  }
  await artifact.pruneLedger(
    (row) =>
      !row.attribution ||
      row.attribution.cell_id !== cell.id ||
      state.recorded.has(
        attemptKey(row.attribution.instance_id, row.attribution.trial, row.attribution.attempt),
      ),
    log,
  )

  const total = leg.instances.length * plan.trials
  const finals = new Map<string, AttemptRecord>(state.done)
  let attemptsWritten = existing.length
  const resolvedCount = (): number => [...finals.values()].filter((r) => r.outcome === 'resolved').length

  // Run identity: the plan (canonical JSON), the run and the run attempt that ran the leg.
  const planSha256 = planIdentity(plan)
  const legAttempt = legRunAttempt(opts.runnerEnv ?? process.env)
  const legRecord: LegRecord = {
    schema_version: 1,
    experiment_id: m.experiment.id,
    run_id: opts.runId,
    round: plan.round,
    leg: leg.leg,
    cell_id: cell.id,
    shard: leg.shard,
    harness: cell.harness,
    harness_version_declared: cell.version,
    harness_version_observed: null,
    config_hash: configHash,
    manifest_sha256: loaded.sha256,
    model: route.id,
    api: planCell?.api ?? route.api,
    telemetry_source: m.telemetry.source,
    runner: runnerInfo(opts.runnerEnv ?? process.env),
    started_at: previous?.started_at ?? new Date().toISOString(),
    ended_at: null,
    planned_instances: leg.instances,
    plan_sha256: planSha256,
    leg_attempt: legAttempt,
    attempts: attemptsWritten,
    status: 'partial',
    error: null,
    isolation: sandbox.backend.kind,
    canary: sandbox.canary,
  }
  // A resume with nothing left to run leaves leg.json as the run that did the work wrote it.
  const nothingToRun = previous !== null && previous.ended_at !== null && finals.size >= total
  if (!nothingToRun) await artifact.writeLeg(legRecord)
  opts.onProgress?.({
    type: 'start',
    leg: leg.leg,
    cell: cell.id,
    harness: cell.harness,
    total,
    done: finals.size,
    resolved: resolvedCount(),
  })

  const quarantine = new Set(plan.panel.quarantine)
  let status: LegRecord['status'] = 'complete'
  let error: string | null = null
  try {
    // --- install the pinned harness once for the leg ---
    let installed: InstalledHarness | null = null
    try {
      // Nothing left to run: no install (the loop below skips every pair).
      if (!nothingToRun) {
        // Install scripts and the version probe run in the run's sandbox, like the attempts.
        installed = await adapter.install(cell.version, {
          cacheDir: opts.cacheDir ?? defaultCacheDir(),
          log,
          sandbox: sandbox.backend,
          signal: opts.signal,
        })
        legRecord.harness_version_observed = await adapter
          .probeVersion(installed, sandbox.backend)
          .catch(() => null)
      }
    } catch (e) {
      error = `install of ${cell.harness}@${cell.version} failed: ${messageOf(e).split('\n')[0]}`
      status = 'failed'
    }

    const ctx: LegContext | null = installed && {
      experimentId: m.experiment.id,
      runId: opts.runId,
      planSha256,
      legAttempt,
      round: plan.round,
      leg: leg.leg,
      cell,
      configHash,
      model: route.id,
      api: legRecord.api as LegContext['api'],
      prices: route.prices,
      adapter,
      installed,
      harnessVersion: legRecord.harness_version_observed,
      source,
      capture: opts.capture ?? null,
      telemetrySource: m.telemetry.source,
      budget: { maxSpendUsd: m.budgets.max_spend_usd, maxRequests: m.budgets.max_requests },
      timeoutS: m.budgets.timeout_s,
      killGraceMs: opts.killGraceMs ?? 5000,
      workRoot,
      divergence: m.telemetry.self_report_divergence,
      runnerEnv: opts.runnerEnv ?? process.env,
      keepWorkspaces: opts.keepWorkspaces ?? false,
      sandbox,
      readOnly,
      userModel: m.user_model ? { id: m.user_model.id, maxTurns: m.user_model.max_turns } : null,
    }
    let warnedPassEnv = false

    pairs: for (const instance of leg.instances) {
      for (let trial = 0; trial < plan.trials; trial++) {
        const key = pairKey(instance, trial)
        if (finals.has(key)) continue
        let attempt = (state.lastAttempt.get(key) ?? 0) + 1
        for (;;) {
          if (opts.signal?.aborted) {
            status = 'partial'
            error = 'aborted'
            break pairs
          }
          const logs = await artifact.freshLogsDir(instance, trial, attempt)
          let record: AttemptRecord
          let rows: Parameters<LegArtifact['appendLedger']>[0] = []
          if (!ctx) {
            record = notRunRecord(
              legRecord,
              instance,
              trial,
              attempt,
              quarantine.has(instance),
              logs.rel,
              error ?? 'install failed',
            )
            await writeFile(path.join(logs.abs, 'stderr.txt'), `${error}\n`)
          } else {
            const res = await runAttempt(
              ctx,
              { instance, trial, attempt, quarantined: quarantine.has(instance), logs },
              opts.signal,
            )
            if (res.aborted) {
              // A stopped attempt is recorded (its spend was real) but never final: it is no loss, and a
              // rerun into the same folder runs the pair again as the next attempt.
              const stopped = stoppedRecord(res.record, stopReason(opts.signal))
              await artifact.appendLedger([...res.telemetry.rows, ...res.userRows])
              await artifact.appendAttempt(stopped)
              attemptsWritten++
              opts.onProgress?.({
                type: 'attempt',
                leg: leg.leg,
                record: stopped,
                done: finals.size,
                total,
                resolved: resolvedCount(),
                retrying: false,
              })
              status = 'partial'
              error = 'aborted'
              break pairs
            }
            if (res.missingPassEnv.length > 0 && !warnedPassEnv) {
              warnedPassEnv = true
              log(
                `warning: ${cell.id}: pass_env names variables the runner does not have: ${res.missingPassEnv.join(', ')}`,
              )
            }
            record = res.record
            // The simulated user's rows (role user_simulation) are kept beside the harness's, tagged.
            rows = [...res.telemetry.rows, ...res.userRows]
          }
          // The classifier reads the attempt first: a startup, auth, quota or route failure is infra.
          const exitClass = retryExitClass(record, classifyOptions(m, declaredLimits(m)))
          const retry = ctx !== null && shouldRetry(exitClass, attempt - 1, m.retries)
          record.final = !retry
          // Rows first: a crash between the two leaves rows without a record, pruned on resume.
          await artifact.appendLedger(rows)
          await artifact.appendAttempt(record)
          attemptsWritten++
          if (record.final) finals.set(key, record)
          opts.onProgress?.({
            type: 'attempt',
            leg: leg.leg,
            record,
            done: finals.size,
            total,
            resolved: resolvedCount(),
            retrying: retry,
          })
          if (!retry) break
          try {
            await sleep(backoffSeconds(attempt, m.retries.backoff_s) * 1000, undefined, {
              signal: opts.signal,
            })
          } catch {
            // aborted during the backoff: the check at the top of the loop ends the leg
          }
          attempt++
        }
      }
    }
    if (status === 'complete' && finals.size < total) status = 'partial'
  } catch (e) {
    status = 'failed'
    error = messageOf(e).split('\n')[0] ?? 'failed'
  } finally {
    await source.dispose()
  }
  legRecord.status = status
  legRecord.error = error
  legRecord.attempts = attemptsWritten
  const ran = attemptsWritten - existing.length
  if (ran === 0 && previous && previous.ended_at !== null) {
    // Nothing ran: the leg's timing (and the run that did the work) stay as recorded.
    legRecord.run_id = previous.run_id
    // …and so does its run attempt, so that the rows it wrote still match the leg's identity.
    if (previous.leg_attempt === undefined) delete legRecord.leg_attempt
    else legRecord.leg_attempt = previous.leg_attempt
    legRecord.started_at = previous.started_at
    legRecord.ended_at = previous.ended_at
    legRecord.harness_version_observed ??= previous.harness_version_observed
  } else {
    legRecord.ended_at = new Date().toISOString()
  }
  // A resumed leg holds the rows of earlier runs too: named, so a mixture from elsewhere still shows.
  legRecord.runs = [
    ...new Set([...existing.map((r) => r.run_id), ...(previous?.runs ?? []), legRecord.run_id]),
  ]
  const unchanged =
    previous !== null &&
    previous.status === legRecord.status &&
    previous.error === legRecord.error &&
    previous.attempts === legRecord.attempts
  if (!(nothingToRun && ran === 0 && unchanged)) await artifact.writeLeg(legRecord)
  const session: LegSession = {
    attempts: ran,
    seconds: (performance.now() - sessionT0) / 1000,
    resumed: existing.length > 0,
  }
  opts.onProgress?.({ type: 'end', leg: legRecord, finals: [...finals.values()], session })
  return legRecord
}

/** Why the run was stopped, from the abort reason (e.g. `received SIGTERM`). */
function stopReason(signal: AbortSignal | undefined): string {
  const r: unknown = signal?.reason
  const text = typeof r === 'string' ? r : r instanceof Error && r.name !== 'AbortError' ? r.message : ''
  return text ? `stopped: ${text}` : 'stopped: the run was interrupted'
}

/**
 * The record of an attempt the user's stop ended: exit class `infra` with the stop as its reason,
 * outcome `infra_error`, not final (never counted, run again on resume).
 */
export function stoppedRecord(record: AttemptRecord, reason: string): AttemptRecord {
  return {
    ...record,
    final: false,
    exit: { ...record.exit, class: 'infra', reason },
    timed_out: false,
    outcome: 'infra_error',
    outcome_reason: reason,
  }
}

/** An attempt that could not run at all (the leg's harness failed to install): infra, intent-to-treat. */
function notRunRecord(
  leg: LegRecord,
  instance: string,
  trial: number,
  attempt: number,
  quarantined: boolean,
  logsRel: string,
  reason: string,
): AttemptRecord {
  const now = new Date().toISOString()
  return {
    schema_version: 1,
    experiment_id: leg.experiment_id,
    run_id: leg.run_id,
    round: leg.round,
    leg: leg.leg,
    cell_id: leg.cell_id,
    harness: leg.harness,
    harness_version: null,
    config_hash: leg.config_hash,
    model: leg.model,
    instance_id: instance,
    trial,
    attempt,
    final: true,
    quarantined,
    started_at: now,
    ended_at: now,
    phases_ms: { setup: 0, harness: 0, verifier: 0 },
    exit: { class: 'infra', code: null, signal: null, reason },
    timed_out: false,
    outcome: 'infra_error',
    outcome_reason: reason,
    verifier: { status: 'skipped', exit_code: null, reward: null, duration_ms: 0 },
    deliverable: { bytes: 0, sha256: null, files_changed: 0 },
    telemetry: emptyTelemetry(leg.telemetry_source, 'unknown', 'the harness did not run'),
    self_report: null,
    final_message: null,
    logs_dir: logsRel,
    ...(leg.plan_sha256 ? { plan_sha256: leg.plan_sha256 } : {}),
    ...(leg.leg_attempt ? { leg_attempt: leg.leg_attempt } : {}),
  }
}

/**
 * Move an existing output folder aside to `<tmpdir>/harness-watch-prev/<name>-<UTC stamp>` (never
 * deleted here). Not beside it: a sibling inside an artifacts folder would be read as another leg.
 */
async function moveAside(outDir: string, log: (line: string) => void): Promise<void> {
  const abs = path.resolve(outDir)
  if (!(await stat(abs).catch(() => null))) return
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const base = path.join(os.tmpdir(), 'harness-watch-prev', `${path.basename(abs)}-${stamp}`)
  let target = base
  for (let i = 1; await stat(target).catch(() => null); i++) target = `${base}-${i}`
  await mkdir(path.dirname(target), { recursive: true })
  try {
    await rename(abs, target)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e
    // Another file system: copy, then remove.
    await cp(abs, target, { recursive: true })
    await rm(abs, { recursive: true, force: true })
  }
  log(`--fresh: moved the previous results of ${quotePath(outDir)} to ${quotePath(target)}`)
}

function runnerInfo(env: NodeJS.ProcessEnv): LegRecord['runner'] {
  return {
    os: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    node: process.version,
    ci: env.CI === 'true' || env.CI === '1',
    runner_name: env.RUNNER_NAME ?? null,
  }
}

/** The run attempt (GITHUB_RUN_ATTEMPT, a positive integer), 1 when absent or not one. */
export function legRunAttempt(env: NodeJS.ProcessEnv): number {
  const n = Number(env.GITHUB_RUN_ATTEMPT)
  return Number.isInteger(n) && n >= 1 ? n : 1
}
