import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pLimit from 'p-limit'
import lockfile from 'proper-lockfile'
import { defaultCacheDir, readMarker } from '../harnesses/install.js'
import { adapterFor } from '../harnesses/registry.js'
import { HARNESSES, isHarnessName } from '../manifest/harness-names.js'
import { type LoadedManifest, loadManifest } from '../manifest/load.js'
import { primaryRoute } from '../manifest/schema.js'
import { scriptedAnalyst } from '../model/analyst-script.js'
import { resolvePanel } from '../panel/resolve.js'
import { buildPlan } from '../plan/plan.js'
import type { Plan } from '../plan/schema.js'
import type { LegRecord } from '../records/attempt.js'
import type { HistorySource } from '../report/write.js'
import { defaultRunId } from '../run/entry.js'
import { legWorkRoot, runLeg } from '../run/leg.js'
import type { ProgressReporter } from '../run/progress.js'
import { openRoutedTelemetry, type RoutedTelemetry } from '../run/route-telemetry.js'
import type { SandboxBackend } from '../sandbox/contract.js'
import { chooseSandbox } from '../sandbox/select.js'
import { HwError } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { quotePath } from '../util/paths.js'
import { aggregate, type WrittenReports } from './aggregate.js'
import { harnessAnalyst } from './analyst-harness.js'
import { type DetectStepResult, detectStep } from './detect.js'
import { diagnoseRun } from './diagnose.js'

export interface LocalOptions {
  manifestFile: string
  /** Output folder: plan.json, artifacts/<artifact>/, comparison.json, report.md, report.html, decision.json. */
  out: string
  /** Harness install cache (default $HW_CACHE_DIR or ~/.cache/harness-watch/harnesses). */
  cacheDir?: string
  /** Root of attempt workspaces and homes (default <tmp>/hw). */
  workRoot?: string
  /** Overrides manifest.concurrency (legs at once). */
  concurrency?: number
  /** Run the targeted confirmation round on a breach (default true when the manifest enables it). */
  confirm?: boolean
  /** Move an existing `out` aside (to `<out>.prev-<UTC stamp>`) and start afresh; default: resume it. */
  fresh?: boolean
  /** Run only these instances of the panel (a short run); unknown ids are a usage error. */
  instances?: string[]
  /** Run only the first `limit` instances of the panel, in its listed order (a short run). */
  limit?: number
  progress?: ProgressReporter
  log: (line: string) => void
  /** Aborting stops every attempt in flight and every process this run started. */
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
  /** The experiment's weekly history page, linked from every round's reports; absent: none. */
  history?: HistorySource | null
}

export interface LocalRound {
  round: number
  plan: Plan
  planPath: string
  legs: LegRecord[]
  reports: WrittenReports
  detection: DetectStepResult
}

export interface LocalResult {
  runId: string
  rounds: LocalRound[]
  /** The decision of the last round (the confirmation round when one ran). */
  final: DetectStepResult
  /** diagnosis/dossier.json of a confirmed breach (beside the final report), else null. */
  diagnosis: string | null
  /** Wall time of the whole pipeline, seconds. */
  wallS: number
}

/**
 * The whole pipeline on one machine — what a GitHub workflow does across jobs: plan, install the pinned
 * harness CLIs (npm, cached), start the measurement plane (the recording proxy, and the scripted model
 * for a scripted route) on 127.0.0.1, run every leg with the manifest's concurrency (legs are listed
 * shard-major, so cells of a block run side by side), aggregate, detect, and on a breach run the
 * targeted confirmation round on the affected blocks and decide on it. Every process started here is
 * stopped when it returns, throws, or `signal` aborts.
 * Throws HwError for user mistakes (manifest, plan, missing route variables) before anything runs.
 */
export async function runLocal(opts: LocalOptions): Promise<LocalResult> {
  const t0 = performance.now()
  const loaded = await loadManifest(opts.manifestFile, { runnable: true })
  const m = loaded.manifest
  const panel = await resolvePanel(m, loaded.dir, opts.manifestFile, loaded.locate)
  const plan = buildPlan(loaded, panel, { instances: shortRunInstances(panel.instances, opts) })
  if (opts.concurrency !== undefined && (!Number.isInteger(opts.concurrency) || opts.concurrency < 1)) {
    throw new HwError('usage', `--concurrency must be a whole number ≥ 1, got ${opts.concurrency}`)
  }
  if (opts.fresh) await moveAside(opts.out, opts.log)
  await mkdir(opts.out, { recursive: true })
  const release = await lockOut(opts.out)
  try {
    return await runLocked(opts, loaded, panel, plan, t0)
  } finally {
    await release()
  }
}

async function runLocked(
  opts: LocalOptions,
  loaded: LoadedManifest,
  panel: Awaited<ReturnType<typeof resolvePanel>>,
  plan: Plan,
  t0: number,
): Promise<LocalResult> {
  const m = loaded.manifest
  const planPath = path.join(opts.out, 'plan.json')
  await refuseOtherRun(planPath, plan)
  await writeFile(planPath, strictJson(plan))
  opts.log(
    `plan: ${plan.legs.length} legs (${plan.cells.map((c) => c.id).join(', ')} × ${plan.shards.count} shard(s)), ` +
      `${plan.panel.instances.length} instances × ${plan.trials} trial(s) → ${planPath}`,
  )
  if (plan.legs.length === 0) throw new HwError('plan_empty', 'no legs planned: nothing to run')

  const cacheDir = opts.cacheDir ?? defaultCacheDir(opts.env)
  // The same sandbox the legs use (chosen once per run): install scripts run in it too.
  const sandbox = await chooseSandbox(m.sandbox, legWorkRoot(opts.workRoot))
  await installAll(loaded, cacheDir, opts.log, opts.signal, sandbox.backend)

  const runId = defaultRunId(opts.env)
  const journalFile = path.join(opts.out, 'proxy-journal.jsonl')
  const telemetry = await openRoutedTelemetry({
    manifest: m,
    tasksDir: panel.tasksDir,
    runId,
    journalFile,
    env: opts.env,
  })
  opts.log(`measurement plane: ${telemetry.description}`)
  const rounds: LocalRound[] = []
  try {
    const first = await runRound(loaded, plan, planPath, opts.out, { ...opts, cacheDir, runId, telemetry })
    rounds.push(first)
    const wantConfirm = opts.confirm ?? m.confirmation.enabled
    const confirmPlanPath = first.detection.confirmPlanPath
    if (wantConfirm && first.detection.confirmPlan && confirmPlanPath) {
      opts.log(
        `breach on the first run: confirming on ${first.detection.confirmPlan.panel.instances.length} affected block(s)`,
      )
      const confirmDir = path.dirname(confirmPlanPath)
      rounds.push(
        await runRound(loaded, first.detection.confirmPlan, confirmPlanPath, confirmDir, {
          ...opts,
          cacheDir,
          runId,
          telemetry,
        }),
      )
    }
  } finally {
    opts.progress?.stop()
    await telemetry.close()
    // Every attributed row is in the legs' ledger.jsonl; the proxy's own journal duplicates them.
    for (const j of telemetry.journals) await rm(j, { force: true })
  }
  const last = rounds[rounds.length - 1] as LocalRound
  // A confirmed breach gets its evidence: the dossier beside the final report (never fails the run).
  let diagnosis: string | null = null
  if (last.detection.decision.status === 'confirmed') {
    try {
      const dir = path.dirname(last.reports.comparisonPath)
      // The scripted route has an analyst script: the demo's proposal needs no keys. The analyst runs
      // through a harness (read-only, sandboxed, its own proxy and ledger); in process only as fallback.
      const scripted = primaryRoute(loaded.manifest).provider === 'scripted'
      const analyst = scripted
        ? harnessAnalyst({
            manifest: loaded.manifest,
            diagnosisDir: path.join(dir, 'diagnosis'),
            runId,
            cacheDir,
            env: opts.env,
            log: opts.log,
          })
        : null
      try {
        diagnosis = (
          await diagnoseRun({
            dir,
            analyst: analyst ?? (scripted ? scriptedAnalyst : undefined),
            fallback: scripted ? scriptedAnalyst : undefined,
            log: opts.log,
          })
        ).dossierJson
      } finally {
        await analyst?.close()
      }
    } catch (e) {
      opts.log(
        `diagnosis: the dossier could not be written: ${String((e as Error)?.message ?? e).split('\n')[0]}`,
      )
    }
  }
  return { runId, rounds, final: last.detection, diagnosis, wallS: (performance.now() - t0) / 1000 }
}

/**
 * The instances a short run keeps: `instances` as given (checked against the panel by the plan), or the
 * first `limit` of the panel in its listed order; undefined (the whole panel) when neither is set.
 */
export function shortRunInstances(
  panel: readonly string[],
  opts: Pick<LocalOptions, 'instances' | 'limit'>,
): string[] | undefined {
  if (opts.instances && opts.limit !== undefined) {
    throw new HwError('usage', 'give either --instances or --limit, not both')
  }
  if (opts.limit !== undefined) {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) {
      throw new HwError('usage', `--limit must be a whole number ≥ 1, got ${opts.limit}`)
    }
    return panel.slice(0, opts.limit)
  }
  if (opts.instances) {
    if (opts.instances.length === 0) throw new HwError('usage', '--instances names no instance')
    return [...new Set(opts.instances)]
  }
  return undefined
}

interface RoundContext extends LocalOptions {
  cacheDir: string
  runId: string
  telemetry: RoutedTelemetry
}

async function runRound(
  loaded: LoadedManifest,
  plan: Plan,
  planPath: string,
  dir: string,
  ctx: RoundContext,
): Promise<LocalRound> {
  const artifacts = path.join(dir, 'artifacts')
  const limit = pLimit(ctx.concurrency ?? loaded.manifest.concurrency)
  const legs = await Promise.all(
    plan.legs.map((leg) =>
      limit(async () => {
        if (ctx.signal?.aborted) throw new HwError('aborted', 'stopped before every leg ran')
        return runLeg({
          loaded,
          plan,
          leg: leg.leg,
          outDir: path.join(artifacts, leg.artifact),
          runId: ctx.runId,
          capture: ctx.telemetry.forCell(leg.cell).capture,
          cacheDir: ctx.cacheDir,
          fresh: ctx.fresh,
          workRoot: ctx.workRoot,
          signal: ctx.signal,
          runnerEnv: ctx.env,
          log: ctx.log,
          onProgress: (e) => ctx.progress?.onProgress(e),
        })
      }),
    ),
  )
  if (ctx.signal?.aborted) throw new HwError('aborted', 'stopped: the report was not written')
  // Its own legs, of this and earlier local runs (a resume): not checked against a workflow run.
  const history = ctx.history ?? null
  const reports = await aggregate({ plan: planPath, artifacts, out: dir, workflowRun: null, history })
  const detection = await detectStep({
    comparison: reports.comparisonPath,
    plan: planPath,
    out: dir,
    history,
  })
  return { round: plan.round, plan, planPath, legs, reports, detection }
}

/**
 * Hold `<out>/.hw-local.lock` for the whole run: two runs writing one folder would run every attempt
 * twice and mix their records. Throws HwError `out_locked` when another run holds it.
 */
async function lockOut(out: string): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(out, {
      lockfilePath: path.join(out, '.hw-local.lock'),
      realpath: false,
      stale: 30_000,
      update: 5_000,
      onCompromised: () => {},
    })
  } catch (e) {
    if ((e as { code?: string }).code !== 'ELOCKED') throw e
    throw new HwError('out_locked', `another harness-watch run is writing to ${quotePath(out)}`, {
      help: 'wait for it to finish, or use another --out',
    })
  }
}

/**
 * A folder already holding a run of another manifest version (or another plan) is never reused: its
 * attempts would be mixed with the new ones. Throws HwError `out_mismatch`.
 */
async function refuseOtherRun(planPath: string, plan: Plan): Promise<void> {
  let old: { manifest_sha256?: string; seed?: number; experiment_id?: string } | null = null
  try {
    old = JSON.parse(await readFile(planPath, 'utf8'))
  } catch {
    return
  }
  if (!old) return
  const same =
    old.manifest_sha256 === plan.manifest_sha256 &&
    old.seed === plan.seed &&
    old.experiment_id === plan.experiment_id
  if (!same) {
    throw new HwError(
      'out_mismatch',
      `${quotePath(path.dirname(planPath))} holds a run of another manifest version (sha256 ${String(old.manifest_sha256).slice(0, 12)}, now ${plan.manifest_sha256.slice(0, 12)})`,
      { help: 'use another --out, or --fresh to move the old run aside' },
    )
  }
}

/** Move an existing output folder to `<out>.prev-<UTC stamp>` (nothing is deleted). */
async function moveAside(out: string, log: (line: string) => void): Promise<void> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const dest = `${out.replace(/\/+$/, '')}.prev-${stamp}`
  try {
    await rename(out, dest)
    log(`--fresh: moved the previous run to ${quotePath(dest)}`)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
}

/**
 * Install every harness the plan uses, one after another (before legs start in parallel). Logs
 * `<harness>@<version> cached at <folder>` for a finished install found in the cache (a fresh install
 * logs its own line with its time and size) and `<harness>@<version>: nothing to install` for a command
 * cell. `sandbox`: the run's backend, in which installs run. Throws HwError `harness_not_runnable` /
 * `install_failed` / `aborted`.
 */
export async function installAll(
  loaded: LoadedManifest,
  cacheDir: string,
  log: (line: string) => void,
  signal?: AbortSignal,
  sandbox?: SandboxBackend,
): Promise<void> {
  const seen = new Set<string>()
  for (const cell of loaded.manifest.cells) {
    const key = `${cell.harness}@${cell.version}`
    if (seen.has(key) || !isHarnessName(cell.harness)) continue
    seen.add(key)
    if (signal?.aborted) throw new HwError('aborted', 'stopped during harness installation')
    if (!HARNESSES[cell.harness].runnable) {
      throw new HwError('harness_not_runnable', `${key} cannot be installed on this machine`, {
        where: `cells[${loaded.manifest.cells.indexOf(cell)}]`,
        help: `${cell.harness} is a Python program; run this manifest on a runner with Python and PyPI access`,
      })
    }
    const started = Date.now()
    const installed = await adapterFor(cell.harness).install(cell.version, { cacheDir, log, sandbox, signal })
    // A fresh install logs its own "installed … in N s" line; a cached one is reported here.
    const marker = await readMarker(installed.root)
    if (!marker) log(`${key}: nothing to install`)
    else if (Date.parse(marker.installed_at) < started) log(`${key} cached at ${quotePath(installed.root)}`)
  }
}
