import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pLimit from 'p-limit'
import type { SandboxBackend } from '../sandbox/contract.js'
import { describeExit, isolates, runSandboxJob } from '../sandbox/job.js'
import { HwError } from '../util/errors.js'
import { builtinPanelsDir } from '../util/paths.js'
import { verifyBridgeTask } from './bridge-verify.js'
import { listTaskFolders } from './resolve.js'
import { loadTask, type Task } from './task.js'
import { runTaskVerifier, type VerifierStatus, verifierBaseEnv } from './verifier.js'

export { runTaskVerifier, type VerifierResult, type VerifierStatus } from './verifier.js'

/**
 * One task's check. `start`: the verifier on the untouched environment (must be `fail`).
 * `solution`: the verifier after solution/solve.sh ran twice (must be `pass`); `error` when solve.sh
 * itself failed or is not idempotent, `missing` without a solve.sh, `flaky` when repeated runs disagree.
 */
export interface TaskVerification {
  id: string
  start: VerifierStatus
  solution: VerifierStatus | 'missing' | 'flaky'
  /** Why a task is bad (absent for good tasks). */
  note?: string
}

export interface PanelVerification {
  tasks: TaskVerification[]
}

export interface VerifyOptions {
  /** Times the solution is applied and graded afresh; any disagreement makes it `flaky` (F07). */
  repeat?: number
  /** Keep logs here as <logsDir>/<id>/{start,solve,solution}.log; default: a temp folder, removed. */
  logsDir?: string
  /** Tasks checked at once. */
  concurrency?: number
  /** Called when a task is done (for progress lines). */
  onTask?: (t: TaskVerification, done: number, total: number, durationMs: number) => void
  /**
   * Sandbox backend for solve.sh and the verifier (each run in a sandbox of it opened for the job, the
   * workspace writable, the task's solution/ and tests/ read-only). Absent: as the action's user.
   */
  sandbox?: SandboxBackend
}

/** True when a task starts failing and passes with its solution. */
export function isGood(t: TaskVerification): boolean {
  return t.start === 'fail' && t.solution === 'pass'
}

/** Ids of the tasks that are not fail → pass. */
export function badTasks(v: PanelVerification): string[] {
  return v.tasks.filter((t) => !isGood(t)).map((t) => t.id)
}

/**
 * Check that a task is gradable: copy environment/ into a fresh workspace and grade it (expect fail);
 * then, `repeat` times, copy again, run solution/solve.sh twice (it must be idempotent) with cwd = the
 * workspace and grade (expect pass), each script in a sandbox of `opts.sandbox`. Workspaces are temp
 * folders removed afterwards.
 */
export async function verifyTask(task: Task, opts: VerifyOptions = {}): Promise<TaskVerification> {
  const ownLogs = opts.logsDir === undefined
  const logRoot = opts.logsDir ?? (await mkdtemp(path.join(os.tmpdir(), 'hw-verify-logs-')))
  const logs = path.join(logRoot, task.id)
  await mkdir(logs, { recursive: true })
  try {
    if (task.kind === 'bridge') return await verifyBridgeTask(task, { repeat: opts.repeat, logsDir: logRoot })
    const start = await withWorkspace(task, (ws) =>
      runTaskVerifier(task, ws, { logFile: path.join(logs, 'start.log'), sandbox: opts.sandbox }),
    )
    const out: TaskVerification = { id: task.id, start: start.status, solution: 'missing' }
    if (start.status !== 'fail') {
      out.note =
        start.status === 'pass'
          ? 'the verifier already passes before any change'
          : `the verifier gives ${start.status} before any change${start.reason ? ` (${start.reason})` : ''}`
    }
    if (!task.paths.solveScript) {
      out.note = joinNotes(out.note, 'no solution/solve.sh')
      return out
    }
    const seen = new Set<string>()
    let why: string | null = null
    for (let i = 0; i < Math.max(1, opts.repeat ?? 1); i++) {
      const r = await withWorkspace(task, (ws) => solveAndGrade(task, ws, logs, opts.sandbox))
      seen.add(r.status)
      why ??= r.note
    }
    const [only] = seen
    out.solution = seen.size === 1 && only ? (only as VerifierStatus) : 'flaky'
    if (out.solution === 'flaky')
      out.note = joinNotes(out.note, `solution results differ: ${[...seen].join(', ')}`)
    else if (out.solution !== 'pass')
      out.note = joinNotes(out.note, why ?? `the solution gives ${out.solution}`)
    return out
  } finally {
    if (ownLogs) await rm(logRoot, { recursive: true, force: true })
  }
}

async function solveAndGrade(
  task: Task,
  ws: string,
  logs: string,
  sandbox: SandboxBackend | undefined,
): Promise<{ status: VerifierStatus; note: string | null }> {
  const solveLog = path.join(logs, 'solve.log')
  const script = task.paths.solveScript ?? ''
  // In an isolating sandbox the runner's home and temporary folder are hidden: a fresh HOME instead.
  const home = await mkdtemp(path.join(os.tmpdir(), 'hw-solve-home-'))
  try {
    for (const pass of ['first', 'second'] as const) {
      const [run] = await runSandboxJob(
        sandbox,
        { writable: [ws, home], readOnly: [path.dirname(script)] },
        [
          {
            command: 'bash',
            args: [script],
            cwd: ws,
            env: {
              ...verifierBaseEnv(process.env),
              ...(isolates(sandbox) ? { HOME: home, TMPDIR: '/tmp' } : {}),
              HW_WORKSPACE: ws,
            },
          },
        ],
        { timeoutMs: task.agentTimeoutS * 1000, logFile: solveLog },
      )
      if (!run) return { status: 'error', note: 'solve.sh did not start' }
      if (run.timedOut) return { status: 'error', note: `solve.sh timed out after ${task.agentTimeoutS} s` }
      if (run.exitCode !== 0) {
        const how = describeExit(run)
        const idem = pass === 'second' ? ' on its second run (it must be idempotent)' : ''
        return { status: 'error', note: `solve.sh ${how}${idem}` }
      }
    }
  } finally {
    await rm(home, { recursive: true, force: true })
  }
  const graded = await runTaskVerifier(task, ws, { logFile: path.join(logs, 'solution.log'), sandbox })
  return { status: graded.status, note: graded.reason }
}

async function withWorkspace<T>(task: Task, fn: (ws: string) => Promise<T>): Promise<T> {
  const ws = await mkdtemp(path.join(os.tmpdir(), `hw-ws-${task.id.slice(0, 40)}-`))
  try {
    await cp(task.paths.environment, ws, { recursive: true })
    return await fn(ws)
  } finally {
    await rm(ws, { recursive: true, force: true })
  }
}

/**
 * Verify every task of a panel folder (or the subset `only`), `concurrency` at a time, in folder order.
 * Throws HwError `panel_invalid` for an unknown id in `only`, and `task_invalid` (every bad task.toml
 * listed in details) before running anything when a task folder does not load.
 */
export async function verifyPanel(
  panelDir: string,
  opts: VerifyOptions & { only?: string[] } = {},
): Promise<PanelVerification> {
  const tasks = await loadPanelTasks(panelDir, opts.only)
  const limit = pLimit(Math.max(1, opts.concurrency ?? 2))
  let done = 0
  const results = await Promise.all(
    tasks.map((task) =>
      limit(async () => {
        const t0 = performance.now()
        const r = await verifyTask(task, opts)
        opts.onTask?.(r, ++done, tasks.length, performance.now() - t0)
        return r
      }),
    ),
  )
  return { tasks: results }
}

/** Load a panel folder's tasks (sorted by id), all problems reported together. */
export async function loadPanelTasks(panelDir: string, only?: string[]): Promise<Task[]> {
  let ids = await listTaskFolders(panelDir)
  if (only && only.length > 0) {
    const known = new Set(ids)
    const unknown = only.filter((id) => !known.has(id))
    if (unknown.length > 0) {
      throw new HwError('panel_invalid', `--only names tasks not in the panel: ${unknown.join(', ')}`, {
        where: panelDir,
      })
    }
    ids = ids.filter((id) => only.includes(id))
  }
  if (ids.length === 0) {
    throw new HwError('panel_invalid', 'no task folders (sub-folders with instruction.md)', {
      where: panelDir,
    })
  }
  const tasks: Task[] = []
  const problems: HwError[] = []
  for (const id of ids) {
    try {
      tasks.push(await loadTask(path.join(panelDir, id)))
    } catch (e) {
      if (!(e instanceof HwError)) throw e
      problems.push(e)
    }
  }
  const [first] = problems
  if (first && problems.length === 1) throw first
  if (problems.length > 1) {
    throw new HwError('task_invalid', `${problems.length} task folders are invalid`, {
      where: panelDir,
      details: problems.map((p) => p.format()),
    })
  }
  return tasks
}

/**
 * A panel argument as a folder: an existing path, else the name of a built-in panel
 * (manifests/panels/<name>). Throws HwError `panel_invalid` when it is neither.
 */
export async function resolvePanelDir(arg: string): Promise<string> {
  const direct = path.resolve(arg)
  const st = await stat(direct).catch(() => null)
  if (st?.isDirectory()) return direct
  if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(arg)) {
    const builtin = path.join(builtinPanelsDir(), arg)
    if ((await stat(builtin).catch(() => null))?.isDirectory()) return builtin
  }
  const what = st ? 'the panel path is not a folder' : 'no such panel folder or built-in panel'
  throw new HwError('panel_invalid', what, {
    where: arg,
    help: 'pass a folder of task folders, or a built-in panel name such as "core"',
  })
}

function joinNotes(a: string | undefined, b: string): string {
  return a ? `${a}; ${b}` : b
}
