import { rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { loadManifest } from '../manifest/load.js'
import { cellRouteWhere } from '../manifest/schema.js'
import { resolvePanel } from '../panel/resolve.js'
import type { LegRecord } from '../records/attempt.js'
import { type LegProgressEvent, runLeg } from './leg.js'
import { loadPlan, selectLeg } from './plan-file.js'
import type { ProgressReporter } from './progress.js'
import { openRunTelemetry } from './telemetry-setup.js'

export interface RunLegFilesOptions {
  manifestFile: string
  planFile: string
  leg: string
  /** The leg's artifact folder. */
  outDir: string
  /** Default: `<GITHUB_RUN_ID>-<GITHUB_RUN_ATTEMPT>` on Actions, else `local-<UTC stamp>`. */
  runId?: string
  fresh?: boolean
  cacheDir?: string
  workRoot?: string
  keepWorkspaces?: boolean
  progress?: ProgressReporter
  log?: (line: string) => void
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

export interface RunLegFilesResult {
  leg: LegRecord
  /** The artifact name the plan gives this leg (upload it under this name). */
  artifact: string
  /** Absolute path of the leg folder. */
  dir: string
}

/** A run id: the Actions run (and its attempt) when there is one, else a UTC stamp. */
export function defaultRunId(env: NodeJS.ProcessEnv = process.env, now = new Date()): string {
  if (env.GITHUB_RUN_ID) return `${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`
  return `local-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`
}

/**
 * The `run` command as the CLI and the action use it: load the manifest and plan.json, check the leg
 * (stale plan, unknown leg, bad ids: HwError before anything starts), open the telemetry (recording
 * proxy, and the scripted model for a scripted route), run the leg with progress, close everything.
 */
export async function runLegFromFiles(opts: RunLegFilesOptions): Promise<RunLegFilesResult> {
  const loaded = await loadManifest(opts.manifestFile, { runnable: true })
  const plan = await loadPlan(opts.planFile)
  const { leg } = selectLeg(loaded, plan, opts.leg)
  const panel = await resolvePanel(loaded.manifest, loaded.dir, opts.manifestFile, loaded.locate)
  const runId = opts.runId ?? defaultRunId(opts.env)
  const journalFile = path.join(os.tmpdir(), `hw-proxy-${process.pid}-${leg.leg}.jsonl`)
  const cell = loaded.manifest.cells.find((c) => c.id === leg.cell)
  const telemetry = await openRunTelemetry({
    manifest: loaded.manifest,
    ...(cell ? { route: cellRouteWhere(loaded.manifest, cell) } : {}),
    tasksDir: panel.tasksDir,
    runId,
    journalFile,
    env: opts.env,
  })
  opts.log?.(
    `leg ${leg.leg}: ${leg.instances.length} instance(s) × ${plan.trials} trial(s); model via ${telemetry.upstream}`,
  )
  try {
    const record = await runLeg({
      loaded,
      plan,
      leg: leg.leg,
      outDir: opts.outDir,
      runId,
      capture: telemetry.capture,
      cacheDir: opts.cacheDir,
      fresh: opts.fresh,
      workRoot: opts.workRoot,
      keepWorkspaces: opts.keepWorkspaces,
      signal: opts.signal,
      runnerEnv: opts.env,
      log: opts.log,
      onProgress: (e: LegProgressEvent) => opts.progress?.onProgress(e),
    })
    return { leg: record, artifact: leg.artifact, dir: path.resolve(opts.outDir) }
  } finally {
    opts.progress?.stop()
    await telemetry.close()
    // The leg's ledger.jsonl holds every attributed row; the proxy's own journal is a duplicate.
    await rm(journalFile, { force: true })
  }
}
