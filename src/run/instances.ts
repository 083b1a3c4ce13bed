import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { defaultContainerSetting, type Manifest } from '../manifest/schema.js'
import { type BridgeTask, loadBridgeTask } from '../panel/bridge-task.js'
import { readByContract, verifierContract } from '../panel/contract.js'
import { expandTemplate, writePredictions } from '../panel/idlist.js'
import { loadTask, type Task } from '../panel/task.js'
import { rewardVerdict, runTaskVerifier } from '../panel/verifier.js'
import { toolEnv } from '../process/exec.js'
import type { SandboxBackend } from '../sandbox/contract.js'
import { describeExit, isolates, type JobLimits, type JobRun, runSandboxJob } from '../sandbox/job.js'
import { readBack } from '../sandbox/read-back.js'
import { HwError } from '../util/errors.js'
import { safeSegment } from '../util/paths.js'
import { type BridgeAttempt, prepareBridge, verifyBridge } from './bridge-source.js'
import {
  sharedVerifierNetwork,
  type TaskRequest,
  taskImage,
  taskRequest,
  verifierPlacement,
} from './container-request.js'
import type { AgentContainer, SourceDirs, Verdict } from './verdict.js'
import { buildTemplate, commitBaseline, copyTemplate } from './workspace.js'

/**
 * Where an instance's workspace, prompt and grade come from. Task folders: environment/ is copied,
 * instruction.md is the prompt, tests/test.sh grades. Id lists: `benchmark.setup` prepares the
 * workspace and `benchmark.verifier.command` grades the patch.
 */
export interface InstanceSource {
  /**
   * Fill the empty workspace with the instance's starting state, committed as the baseline; return the
   * prompt and the baseline commit, and for a bridge task the bridge the run stage wires into the
   * harness (harnesses/mcp.ts). Throws on failure (an infra failure of the attempt).
   */
  prepare(
    instance: string,
    dirs: SourceDirs,
    signal?: AbortSignal,
  ): Promise<{ prompt: string; baseCommit: string; bridge?: BridgeAttempt }>
  /**
   * Grade the attempt after the harness; `patchFile` holds its deliverable. Never throws. Aborting
   * `signal` kills the grader at once. `agent`: the agent's container, kept after the harness exited
   * (container backend), where a Harbor task's verifier runs by default; the source closes it once it
   * is no longer needed.
   */
  verify(
    instance: string,
    dirs: SourceDirs,
    patchFile: string,
    signal?: AbortSignal,
    agent?: AgentContainer,
  ): Promise<Verdict>
  /** Remove cached starting states. */
  dispose(): Promise<void>
  /**
   * Container backends: what the agent's container is (the task's image, resources and network), once
   * `prepare` has run. Null for an id-list panel (the manifest's settings apply).
   */
  container(instance: string): Promise<TaskRequest | null>
}

export interface SourceOptions {
  manifest: Manifest
  /** Task folder root (resolvePanel's tasksDir), or null for an id-list panel. */
  tasksDir: string | null
  runId: string
  /** Label of the predictions' model_name_or_path (the cell id). */
  label: string
  /** Seconds the setup command may run. */
  setupTimeoutS: number
  /** Folder for cached starting states of task folders (one per instance, built on first use). */
  templatesDir: string
  /**
   * The run's sandbox backend: setup scripts and verifiers run in a sandbox of it opened for each job
   * (as the attempts do). Absent: as the action's user with an allowlisted environment.
   */
  sandbox?: SandboxBackend
  /** Extra folders jobs may read in the sandbox (the manifest's `sandbox.read_only`, absolute). */
  readOnly?: string[]
  /**
   * `sandbox.host_commands`: `benchmark.setup` and `benchmark.verifier.command` run as the action's
   * user (allowlisted environment) outside the sandbox, e.g. for a grader that needs Docker.
   */
  hostCommands?: boolean
}

/**
 * Choose the instance source for a manifest. Throws HwError `panel_invalid` when the panel cannot be
 * run: task-tests grading without task folders, or an id list without `benchmark.setup`.
 */
export function instanceSource(opts: SourceOptions): InstanceSource {
  const b = opts.manifest.benchmark
  if (b.verifier.kind === 'task-tests' && !opts.tasksDir) {
    throw new HwError('panel_invalid', 'verifier kind "task-tests" needs a panel of task folders', {
      where: 'benchmark.verifier.kind',
      help: 'use panel source "tasks" or "builtin", or a command verifier (kind: command) with benchmark.setup',
    })
  }
  if (!opts.tasksDir && !b.setup) {
    throw new HwError('panel_invalid', 'an id-list panel needs benchmark.setup to prepare each workspace', {
      where: 'benchmark.setup',
      help: 'e.g. setup: "prepare-instance --instance {instance} --workspace {workspace} --out {out}"',
    })
  }
  const tasks = new Map<string, Promise<Task>>()
  const taskOf = (id: string): Promise<Task> =>
    memo(tasks, id, () => loadTask(path.join(opts.tasksDir ?? '', id)))
  // environment/ copied and committed once per instance; every attempt copies the result.
  const templates = new Map<string, Promise<string>>()
  const containerSetting = opts.manifest.sandbox.container ?? defaultContainerSetting()
  const templateOf = (task: Task): Promise<string> =>
    memo(templates, task.id, async () => {
      const dir = path.join(opts.templatesDir, safeSegment(task.id))
      const image = taskImage(task)
      if (!image) return buildTemplate(task.paths.environment, dir)
      // Harbor's layout: the repository lives in the image (SWE-bench's /testbed), not in environment/.
      const exportWorkdir = opts.sandbox?.exportWorkdir
      if (!exportWorkdir) {
        throw new HwError(
          'task_needs_container',
          `task ${task.id} runs in its own image: it needs sandbox.backend: container`,
          {
            where: task.dir,
          },
        )
      }
      const raw = await mkdtemp(path.join(os.tmpdir(), 'hw-export-'))
      try {
        await exportWorkdir.call(opts.sandbox, image, raw)
        return await buildTemplate(raw, dir)
      } finally {
        await rm(raw, { recursive: true, force: true })
      }
    })
  // The working directory: the image's for a task in its own image, else the backend's default (/app).
  const workdirOf = async (task: Task): Promise<{ workdir?: string }> => {
    const image = taskImage(task)
    const backend = opts.sandbox as { image?: (s: unknown) => Promise<{ workdir: string }> } | undefined
    if (!image || !backend?.image) return {}
    return { workdir: (await backend.image(image)).workdir }
  }
  // Bridge tasks: the third source of prompts and grades (src/run/bridge-source.ts).
  const bridgeTasks = new Map<string, Promise<BridgeTask>>()
  const bridgeOf = (task: Task): Promise<BridgeTask> => memo(bridgeTasks, task.id, () => loadBridgeTask(task))
  return {
    async prepare(instance, dirs, signal) {
      if (opts.tasksDir) {
        const task = await taskOf(instance)
        if (task.kind === 'bridge') {
          const r = await prepareBridge(task.id, await bridgeOf(task), dirs, opts.templatesDir, templates)
          return { prompt: task.instruction, ...r }
        }
        const baseCommit = await templateOf(task)
        await copyTemplate(path.join(opts.templatesDir, safeSegment(task.id)), dirs.workspace)
        return { prompt: task.instruction, baseCommit }
      }
      const { prompt } = await runSetup(instance, dirs, opts, signal)
      return { prompt, baseCommit: await commitBaseline(dirs.workspace) }
    },
    async container(instance) {
      if (!opts.tasksDir) return null
      const task = await taskOf(instance)
      return { ...taskRequest(task, containerSetting, 'agent'), ...(await workdirOf(task)) }
    },
    async dispose() {
      await Promise.allSettled([...templates.values()])
      await rm(opts.templatesDir, { recursive: true, force: true })
    },
    async verify(instance, dirs, patchFile, signal, agent) {
      try {
        if (b.verifier.kind === 'task-tests') {
          const task = await taskOf(instance)
          if (task.kind === 'bridge') return await verifyBridge(await bridgeOf(task), dirs)
          const verifierReq = {
            ...taskRequest(task, containerSetting, 'verifier'),
            ...(await workdirOf(task)),
          }
          const inContainer = opts.sandbox?.kind === 'container'
          const agentNetwork = agent?.box.provenance?.network ?? 'proxy-only'
          const placement = inContainer
            ? verifierPlacement({
                manifest: b.verifier.isolation ?? 'task',
                environmentMode: task.harbor.environmentMode,
                agentAlive: agent?.alive ?? false,
                agentNetwork,
                verifierNetwork: verifierReq.network ?? 'none',
              })
            : null
          const shared = placement?.isolation === 'shared' ? agent?.box : undefined
          // Harbor's separate mode: the agent's container is gone before the verifier's starts.
          if (!shared) await agent?.box.close()
          const r = await runTaskVerifier(task, dirs.workspace, {
            logFile: path.join(dirs.logsDir, 'verifier.log'),
            signal,
            sandbox: opts.sandbox,
            readOnly: opts.readOnly,
            container: verifierReq,
            contract: verifierContract(b.verifier),
            ...(shared ? { agent: shared } : {}),
          })
          await agent?.box.close()
          const network = shared ? sharedVerifierNetwork(agentNetwork) : verifierReq.network
          return {
            ...(inContainer && network ? { network } : {}),
            ...(placement
              ? { container: { where: shared ? 'agent' : 'fresh', reason: shared ? null : placement.reason } }
              : {}),
            status: r.status,
            exitCode: r.exitCode,
            reward: r.reward,
            durationMs: r.durationMs,
            reason: r.reason,
          }
        }
        return await runCommandVerifier(instance, dirs, patchFile, opts, signal)
      } catch (e) {
        return { status: 'error', exitCode: null, reward: null, durationMs: 0, reason: (e as Error).message }
      }
    },
  }
}

/** The cached promise for `key`, made once; a rejected promise is forgotten so a later call retries. */
function memo<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = cache.get(key)
  if (!p) {
    p = make()
    cache.set(key, p)
    p.catch(() => cache.delete(key))
  }
  return p
}

/**
 * Id-list setup: run `benchmark.setup` (expanded with {instance} {workspace} {out} {run_id}) with
 * `bash -c` from the current working directory (relative script paths resolve as the user typed
 * them; in Actions, the repository root); it must fill the workspace and write the task's prompt to
 * `{out}/instruction.md`. Output goes to setup.log. Throws when it fails or writes no prompt.
 */
async function runSetup(
  instance: string,
  dirs: SourceDirs,
  opts: SourceOptions,
  signal?: AbortSignal,
): Promise<{ prompt: string }> {
  const script = expandTemplate(
    opts.manifest.benchmark.setup ?? '',
    { instance, workspace: dirs.workspace, out: dirs.scratch, run_id: opts.runId },
    'benchmark.setup',
  )
  const run = await runCommandJob(script, dirs, [], {}, opts, {
    timeoutMs: opts.setupTimeoutS * 1000,
    logFile: path.join(dirs.logsDir, 'setup.log'),
    signal,
  })
  if (run.timedOut) throw new Error(`setup timed out after ${opts.setupTimeoutS} s`)
  if (run.aborted) throw new Error('setup stopped')
  if (run.exitCode !== 0) {
    throw new Error(`setup ${describeExit(run)}`)
  }
  const prompt = await readBack(path.join(dirs.scratch, 'instruction.md')).catch(() => null)
  if (prompt === null || prompt.trim() === '') {
    throw new Error('setup wrote no prompt: it must write the instruction to {out}/instruction.md')
  }
  return { prompt }
}

/**
 * Id-list grading: write the patch as SWE-bench predictions (`{predictions}`), run
 * `benchmark.verifier.command` (expanded with {instance} {workspace} {patch} {predictions} {out}
 * {run_id}: the run id plus a digest of the attempt, unique per attempt) from the current working directory under its timeout with HW_REWARD_FILE / HW_PATCH_FILE / HW_WORKSPACE set. Verdict: a reward
 * written to HW_REWARD_FILE decides; else a SWE-bench report under {out} that lists the instance
 * (resolved_ids → pass; unresolved/empty-patch ids → fail; error ids, or not listed → error); with
 * `verifier.reports: true` no report naming the instance is `error` (ungraded), never the exit code; else the exit code (0 pass, 126/127 error, others fail). Over the limit → timeout.
 */
async function runCommandVerifier(
  instance: string,
  dirs: SourceDirs,
  patchFile: string,
  opts: SourceOptions,
  signal?: AbortSignal,
): Promise<Verdict> {
  const v0 = opts.manifest.benchmark.verifier
  const out = path.join(dirs.scratch, 'grade')
  const predictions = path.join(dirs.scratch, 'predictions.jsonl')
  const rewardFile = path.join(dirs.scratch, 'reward.txt')
  // A run id of its own per attempt: SWE-bench skips an instance whose report already exists for the
  // run id and model, so a shared one would grade a retry or a second trial from the first's report.
  const runId = attemptRunId(opts.runId, dirs.logsDir)
  await writePredictions(predictions, {
    instance_id: instance,
    model_name_or_path: opts.label,
    model_patch: await readFile(patchFile, 'utf8'),
  })
  await rm(rewardFile, { force: true })
  const script = expandTemplate(
    v0.command ?? '',
    { instance, workspace: dirs.workspace, patch: patchFile, predictions, out, run_id: runId },
    'benchmark.verifier.command',
  )
  // Only a report this run writes may decide: nothing left from an earlier grading of the attempt.
  await rm(out, { recursive: true, force: true })
  await mkdir(out, { recursive: true })
  const run = await runCommandJob(
    script,
    dirs,
    [path.dirname(patchFile)],
    { HW_REWARD_FILE: rewardFile, HW_PATCH_FILE: patchFile, HW_WORKSPACE: dirs.workspace },
    opts,
    { timeoutMs: v0.timeout_s * 1000, logFile: path.join(dirs.logsDir, 'verifier.log'), signal },
  )
  const base = { exitCode: run.exitCode, durationMs: run.durationMs }
  if (run.timedOut) return { ...base, status: 'timeout', reward: null, reason: `over ${v0.timeout_s} s` }
  if (run.spawnError) return { ...base, status: 'error', reward: null, reason: `bash: ${run.spawnError}` }
  if (run.aborted) return { ...base, status: 'error', reward: null, reason: 'stopped' }
  const written = await readBack(rewardFile).catch(() => null)
  const report = await sweBenchVerdict(out, instance)
  const v = readByContract(
    verifierContract(v0),
    {
      exitCode: run.exitCode,
      signal: run.signal,
      errorOutput: run.errorOutput,
      workspace: dirs.workspace,
      reward: written === null ? null : rewardVerdict(written),
      report: report
        ? { status: report.status === 'timeout' ? 'error' : report.status, reason: report.reason ?? null }
        : null,
    },
    'verifier',
    instance,
  )
  return { ...base, ...v }
}

/** `<run id>-<10 hex>`: the run's id plus a digest of the attempt's logs folder (unique per attempt). */
export function attemptRunId(runId: string, logsDir: string): string {
  return `${runId}-${createHash('sha256').update(logsDir).digest('hex').slice(0, 10)}`
}

/**
 * Run an id-list command (`benchmark.setup` or `benchmark.verifier.command`, already expanded) with
 * `bash -c` from the current working directory, as a job of the run's sandbox: the attempt's workspace
 * and scratch folder writable; the working directory (minus its `.git`, which may hold a checkout
 * token), `readOnly` and the manifest's `sandbox.read_only` readable. The environment is the tool
 * allowlist (toolEnv) plus `env`; in an isolating sandbox HOME is a fresh folder in the scratch folder
 * and TMPDIR the sandbox's /tmp. The working directory is not exposed when it is `/`, a home folder
 * or a temporary folder itself (that would show other attempts' files). With `opts.hostCommands` the
 * command runs as the action's user (allowlisted environment).
 */
async function runCommandJob(
  script: string,
  dirs: SourceDirs,
  readOnly: string[],
  env: Record<string, string>,
  opts: SourceOptions,
  limits: JobLimits,
): Promise<JobRun> {
  const cwd = process.cwd()
  const home = path.join(dirs.scratch, '.job-home')
  await mkdir(home, { recursive: true })
  const exposeCwd = ![
    '/',
    '/home',
    '/root',
    os.homedir(),
    '/tmp',
    '/var/tmp',
    '/dev/shm',
    os.tmpdir(),
  ].includes(cwd)
  const sandbox = opts.hostCommands ? undefined : opts.sandbox
  const [run] = await runSandboxJob(
    sandbox,
    {
      writable: [dirs.workspace, dirs.scratch],
      readOnly: [...(exposeCwd ? [cwd] : []), ...readOnly, ...(opts.readOnly ?? [])],
      masked: exposeCwd ? [path.join(cwd, '.git')] : [],
    },
    [
      {
        command: 'bash',
        args: ['-c', script],
        cwd,
        env: toolEnv(process.env, {
          ...(isolates(sandbox) ? { HOME: home, TMPDIR: '/tmp' } : {}),
          ...env,
        }),
      },
    ],
    limits,
  )
  if (!run) throw new Error('the command did not start')
  return run
}

/**
 * The instance's verdict in a SWE-bench run report (`*.json` with `resolved_ids`) under `dir`, or null
 * when no report names it. Source: swebench.harness.run_evaluation's make_run_report fields.
 */
export async function sweBenchVerdict(
  dir: string,
  instance: string,
): Promise<{ status: Verdict['status']; reason: string | null } | null> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[])
  let dropped: string | null = null
  for (const rel of entries.filter((e) => e.endsWith('.json')).sort()) {
    const file = path.join(dir, rel)
    if (!(await stat(file)).isFile()) continue
    let report: Record<string, unknown>
    try {
      report = JSON.parse(await readBack(file, dir)) as Record<string, unknown>
    } catch {
      continue
    }
    const has = (k: string): boolean =>
      Array.isArray(report[k]) && (report[k] as unknown[]).includes(instance)
    if (!Array.isArray(report.resolved_ids)) continue
    if (has('resolved_ids')) return { status: 'pass', reason: null }
    if (has('unresolved_ids') || has('empty_patch_ids')) return { status: 'fail', reason: null }
    if (has('error_ids')) return { status: 'error', reason: `grader error (${rel})` }
    dropped ??= rel
  }
  // Reports that leave the instance out: the grader dropped it (ungraded, never a verdict).
  return dropped === null
    ? null
    : { status: 'error', reason: `the grader report ${dropped} does not list the instance (dropped)` }
}
