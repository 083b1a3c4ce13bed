import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type {
  ContainerRequest,
  ExecCommand,
  ExecResult,
  Sandbox,
  SandboxBackend,
} from '../sandbox/contract.js'
import { isolates, type JobRun, runSandboxJob } from '../sandbox/job.js'
import { readBack } from '../sandbox/read-back.js'
import { messageOf } from '../util/errors.js'
import { readByContract, type VerifierContract } from './contract.js'
import type { Task } from './task.js'

/** pass: graded solved; fail: graded not solved; error: the verifier could not grade; timeout: killed. */
export type VerifierStatus = 'pass' | 'fail' | 'error' | 'timeout'

export interface VerifierResult {
  status: VerifierStatus
  /** Exit code of tests/test.sh; null on timeout, signal or spawn failure. */
  exitCode: number | null
  /** Reward (0..1) the verifier wrote to HW_REWARD_FILE, or null when it wrote none. */
  reward: number | null
  /** Wall-clock milliseconds of tests/test.sh. */
  durationMs: number
  /** Why the status is `error`, or null. */
  reason: string | null
}

export interface VerifierOptions {
  /** Seconds; default: the task's [verifier] timeout_sec. */
  timeoutS?: number
  /** File receiving the verifier's stdout and stderr (appended); default: discarded. */
  logFile?: string
  /** Extra environment variables (added after the task's [verifier] env). */
  env?: Record<string, string>
  /** Aborting kills the verifier at once (the run was stopped). */
  signal?: AbortSignal
  /**
   * The run's sandbox backend: the verifier runs in a sandbox of it opened for the grading, with the
   * workspace and the reward folder writable and tests/ read-only (under an isolating backend HOME is a
   * fresh folder and TMPDIR the sandbox's /tmp). Absent: as the action's user (backend `none`).
   */
  sandbox?: SandboxBackend
  /** More folders the verifier may read in the sandbox (the manifest's `sandbox.read_only`). */
  readOnly?: string[]
  /**
   * A container backend's request for the grading (image, limits, network): tests/ is then copied in at
   * /tests only now, after the agent, and the reward read from /logs/verifier/reward.txt or reward.json.
   */
  container?: Omit<ContainerRequest, 'phase' | 'binds' | 'ports'>
  /** The manifest's declared verifier contract (absent: `default`, see panel/contract.ts). */
  contract?: VerifierContract
  /**
   * Harbor's default: the agent's own container, its processes ended (Sandbox.settle): tests/ is copied
   * into it at /tests now and tests/test.sh runs there. Absent: a fresh container (`container`).
   */
  agent?: Sandbox
}

/** Harbor's paths inside the container. */
export const HARBOR_TESTS = '/tests'
export const HARBOR_VERIFIER_LOGS = '/logs/verifier'

/**
 * Run a task's hidden verifier, `bash tests/test.sh`, with cwd = `workspace` (after Harbor's
 * tests/test.sh + /logs/verifier/reward.txt contract, on the host without a container). The script sees
 * HW_TESTS_DIR (absolute tests/ folder), HW_WORKSPACE and HW_REWARD_FILE (a fresh path outside the
 * workspace where it may write a reward in 0..1), on top of `verifierBaseEnv` (an allowlist: no runner
 * secrets), the task's [verifier] env and `opts.env`; it runs in a sandbox of `opts.sandbox`, since the
 * code being graded runs under it. Verdict: a written reward decides (1 → pass, below →
 * fail, unreadable or out of range → error); otherwise the declared contract reads the exit
 * (contract.ts; without one, `default`: exit 0 → pass, exit 1 → fail unless the error output ends in
 * an uncaught exception outside the workspace, any other exit or a signal → error); over the limit →
 * timeout, with the whole process group killed. Bytecode writing is switched off so grading leaves no files behind.
 */
export async function runTaskVerifier(
  task: Task,
  workspace: string,
  opts: VerifierOptions = {},
): Promise<VerifierResult> {
  const rewardDir = await mkdtemp(path.join(os.tmpdir(), 'hw-reward-'))
  const rewardFile = path.join(rewardDir, 'reward.txt')
  if (opts.sandbox?.kind === 'container') {
    return opts.agent
      ? runInAgentContainer(task, workspace, opts, opts.agent, rewardDir)
      : runInContainer(task, workspace, opts, rewardDir)
  }
  try {
    const home = path.join(rewardDir, 'home')
    await mkdir(home)
    const [run] = await runSandboxJob(
      opts.sandbox,
      {
        writable: [path.resolve(workspace), rewardDir],
        readOnly: [task.paths.tests, ...(opts.readOnly ?? [])],
      },
      [
        {
          command: 'bash',
          args: [task.paths.testScript],
          cwd: workspace,
          env: {
            ...verifierBaseEnv(process.env),
            // The runner's home and temporary folder are hidden in an isolating sandbox.
            ...(isolates(opts.sandbox) ? { HOME: home, TMPDIR: '/tmp' } : {}),
            ...task.verifierEnv,
            ...opts.env,
            HW_TESTS_DIR: task.paths.tests,
            HW_WORKSPACE: path.resolve(workspace),
            HW_REWARD_FILE: rewardFile,
            PYTHONDONTWRITEBYTECODE: '1',
          },
        },
      ],
      {
        timeoutMs: (opts.timeoutS ?? task.verifierTimeoutS) * 1000,
        logFile: opts.logFile,
        signal: opts.signal,
      },
    )
    if (!run) throw new Error('the verifier did not start')
    const base = { exitCode: run.exitCode, durationMs: run.durationMs }
    if (run.timedOut) return { ...base, status: 'timeout', reward: null, reason: null }
    if (run.spawnError) return { ...base, status: 'error', reward: null, reason: `bash: ${run.spawnError}` }
    if (run.aborted) return { ...base, status: 'error', reward: null, reason: 'stopped' }
    const written = await readBack(rewardFile).catch(() => null)
    const reward = written === null ? null : rewardVerdict(written)
    const v = readByContract(
      opts.contract ?? { kind: 'default' },
      {
        exitCode: run.exitCode,
        signal: run.signal,
        reward,
        report: null,
        errorOutput: run.errorOutput,
        workspace: path.resolve(workspace),
      },
      'test.sh',
    )
    return { ...base, ...v }
  } finally {
    await rm(rewardDir, { recursive: true, force: true })
  }
}

/**
 * The verifier in a fresh container of the task's image (Harbor's order: tests/ enters only now, after
 * the agent exited): the final workspace at the working directory, tests/ read-only at /tests, a fresh
 * /logs/verifier for the reward. A Harbor task (its own image) is graded by its reward file alone: no
 * reward, a crashed script or a container that will not start is `error` (ungraded), never a loss.
 * Other tasks without a reward are read by the declared contract, as on the host.
 */
async function runInContainer(
  task: Task,
  workspace: string,
  opts: VerifierOptions,
  rewardDir: string,
): Promise<VerifierResult> {
  const logs = path.join(rewardDir, 'verifier')
  const home = path.join(rewardDir, 'home')
  try {
    await mkdir(logs, { mode: 0o755 })
    await mkdir(home)
    let runs: JobRun[]
    try {
      runs = await runSandboxJob(
        opts.sandbox,
        {
          writable: [path.resolve(workspace), home],
          readOnly: [...(opts.readOnly ?? [])],
          container: {
            phase: 'verifier',
            ...opts.container,
            binds: [
              { source: task.paths.tests, target: HARBOR_TESTS, readOnly: true },
              { source: logs, target: HARBOR_VERIFIER_LOGS, readOnly: false },
            ],
          },
        },
        [harborTestCommand(task, opts, workspace, home)],
        {
          timeoutMs: (opts.timeoutS ?? task.verifierTimeoutS) * 1000,
          logFile: opts.logFile,
          signal: opts.signal,
        },
      )
    } catch (e) {
      return {
        status: 'error',
        exitCode: null,
        reward: null,
        durationMs: 0,
        reason: `verifier container: ${messageOf(e)}`,
      }
    }
    const run = runs[0]
    if (!run) throw new Error('the verifier did not start')
    return await containerVerdict(task, run, logs, {
      contract: opts.contract,
      errorOutput: run.errorOutput,
      workspace: opts.container?.workdir ?? path.resolve(workspace),
    })
  } finally {
    await rm(rewardDir, { recursive: true, force: true })
  }
}

/** The verdict of tests/test.sh run in a container, from its end and the reward files in `logs`. */
async function containerVerdict(
  task: Task,
  run: ExecResult,
  logs: string,
  ctx: { contract?: VerifierContract; errorOutput: string; workspace: string },
): Promise<VerifierResult> {
  const base = { exitCode: run.exitCode, durationMs: run.durationMs }
  if (run.timedOut) return { ...base, status: 'timeout', reward: null, reason: null }
  if (run.spawnError) return { ...base, status: 'error', reward: null, reason: `bash: ${run.spawnError}` }
  if (run.aborted) return { ...base, status: 'error', reward: null, reason: 'stopped' }
  if (run.fault) return { ...base, status: 'error', reward: null, reason: run.fault.detail }
  const txt = await readBack(path.join(logs, 'reward.txt'), logs).catch(() => null)
  const json = txt === null ? await readBack(path.join(logs, 'reward.json'), logs).catch(() => null) : null
  const written = txt ?? (json === null ? null : rewardFromJson(json))
  if (written !== null) {
    const reward = parseReward(written)
    if (reward === null)
      return {
        ...base,
        status: 'error',
        reward: null,
        reason: `bad reward ${JSON.stringify(written.trim().slice(0, 80))}`,
      }
    return { ...base, status: reward >= 1 ? 'pass' : 'fail', reward, reason: null }
  }
  if (task.container) {
    const how = run.signal ? `ended by ${run.signal}` : `exited ${run.exitCode}`
    return {
      ...base,
      status: 'error',
      reward: null,
      reason: `no reward file in ${HARBOR_VERIFIER_LOGS} (test.sh ${how}): ungraded`,
    }
  }
  // Without a reward the declared contract reads the exit (its default tells a crash from a failure).
  const v = readByContract(
    ctx.contract ?? { kind: 'default' },
    {
      exitCode: run.exitCode,
      signal: run.signal,
      reward: null,
      report: null,
      errorOutput: ctx.errorOutput,
      workspace: ctx.workspace,
    },
    'test.sh',
  )
  return { ...base, ...v }
}

/**
 * Harbor's default order: the agent has exited and its processes are ended (Sandbox.settle); only now
 * does tests/ enter its container, at /tests, and tests/test.sh runs there as Harbor runs it, with the
 * agent's final workspace, /tmp and installed packages. /logs/verifier is made fresh for the reward and
 * copied out afterwards. Anything that keeps the script from running is `error` (ungraded).
 */
async function runInAgentContainer(
  task: Task,
  workspace: string,
  opts: VerifierOptions,
  box: Sandbox,
  rewardDir: string,
): Promise<VerifierResult> {
  const logs = path.join(rewardDir, 'verifier')
  const out = path.join(rewardDir, 'out.txt')
  const err = path.join(rewardDir, 'err.txt')
  const ungraded = (why: string): VerifierResult => ({
    status: 'error',
    exitCode: null,
    reward: null,
    durationMs: 0,
    reason: `verifier in the agent's container: ${why}`,
  })
  try {
    await mkdir(logs, { mode: 0o755 })
    if (!box.copyIn || !box.copyOut) return ungraded('the sandbox cannot take files in')
    const home = '/tmp/hw-verifier-home'
    // The deliverable was read on the host meanwhile: its git files go back to the container's user.
    await box.reclaim?.()
    // Whatever the agent left at /tests or /logs/verifier goes first: only the task's files are graded.
    const prep = await box.exec(
      {
        command: 'sh',
        args: [
          '-c',
          `rm -rf ${HARBOR_TESTS} ${HARBOR_VERIFIER_LOGS} 2>/dev/null; ! test -e ${HARBOR_TESTS} && ! test -e ${HARBOR_VERIFIER_LOGS} && mkdir -p ${home}`,
        ],
        cwd: '/',
        env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
      },
      { timeoutMs: 60_000, graceMs: 1000, stdoutFile: out, stderrFile: err },
    )
    if (prep.exitCode !== 0)
      return ungraded(`cannot clear ${HARBOR_TESTS} and ${HARBOR_VERIFIER_LOGS} (exit ${prep.exitCode})`)
    // The engine copies as the container's root: /logs/verifier and /tests are made where `/` is read-only.
    const skel = path.join(rewardDir, 'skel')
    await mkdir(path.join(skel, 'verifier'), { recursive: true, mode: 0o755 })
    try {
      await box.copyIn(`${skel}/.`, '/logs')
      await box.copyIn(task.paths.tests, HARBOR_TESTS)
    } catch (e) {
      return ungraded(messageOf(e))
    }
    const run = await box.exec(harborTestCommand(task, opts, workspace, home), {
      timeoutMs: (opts.timeoutS ?? task.verifierTimeoutS) * 1000,
      graceMs: 2000,
      stdoutFile: out,
      stderrFile: err,
      signal: opts.signal,
    })
    if (opts.logFile) {
      const o = await readFile(out, 'utf8').catch(() => '')
      const e = await readFile(err, 'utf8').catch(() => '')
      await appendFile(opts.logFile, o + (o && e && !o.endsWith('\n') ? '\n' : '') + e)
    }
    // A container killed at the verifier's limit holds nothing to copy: the verdict says why.
    if (!run.timedOut && !run.aborted) await box.copyOut(HARBOR_VERIFIER_LOGS, logs).catch(() => undefined)
    const errorOutput = (await readFile(err, 'utf8').catch(() => '')).slice(-16_384)
    return await containerVerdict(task, run, logs, {
      contract: opts.contract,
      errorOutput,
      workspace: opts.container?.workdir ?? path.resolve(workspace),
    })
  } finally {
    await rm(rewardDir, { recursive: true, force: true })
  }
}

/** Harbor's verifier command: `tests/test.sh` in the workspace, with the variables a task's script reads. */
function harborTestCommand(task: Task, opts: VerifierOptions, workspace: string, home: string): ExecCommand {
  return {
    command: 'bash',
    args: [`${HARBOR_TESTS}/test.sh`],
    cwd: workspace,
    env: {
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TERM: 'dumb',
      TZ: 'UTC',
      ...task.verifierEnv,
      ...opts.env,
      HW_TESTS_DIR: HARBOR_TESTS,
      HW_WORKSPACE: opts.container?.workdir ?? workspace,
      HW_REWARD_FILE: `${HARBOR_VERIFIER_LOGS}/reward.txt`,
      PYTHONDONTWRITEBYTECODE: '1',
    },
  }
}

/** Harbor's reward.json: `{"reward": x}`, or one named reward; its text for parseReward, or a marker that fails it. */
export function rewardFromJson(text: string): string {
  try {
    const v = JSON.parse(text) as unknown
    if (typeof v === 'number') return String(v)
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>
      if (typeof o.reward === 'number') return String(o.reward)
      const nums = Object.values(o).filter((x): x is number => typeof x === 'number')
      if (nums.length === 1) return String(nums[0])
    }
  } catch {
    // not JSON: reported as a bad reward below
  }
  return `reward.json: ${text.trim().slice(0, 60)}`
}

/** Toolchain locators passed through from the runner (where python3/node are found), never secrets. */
const TOOLCHAIN_VARS =
  /^(PYENV_[A-Z_]+|NVM_[A-Z_]+|VIRTUAL_ENV|CONDA_[A-Z_]+|JAVA_HOME|GOPATH|GOROOT|CARGO_HOME|RUSTUP_HOME)$/

/**
 * The environment a verifier (or a reference solution) starts from: an allowlist, because the code
 * being graded runs under it and must not see the runner's tokens. PATH, HOME, USER, LOGNAME, SHELL and
 * TMPDIR and toolchain locators from `runnerEnv`; LANG/LC_ALL=C.UTF-8, TERM=dumb and TZ=UTC fixed so
 * grading does not depend on the machine. Pure.
 */
export function verifierBaseEnv(runnerEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = { PATH: runnerEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin' }
  for (const [k, v] of Object.entries(runnerEnv)) {
    if (v === undefined) continue
    if (['HOME', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'].includes(k) || TOOLCHAIN_VARS.test(k)) env[k] = v
  }
  return { ...env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'dumb', TZ: 'UTC' }
}

/** A written reward file's verdict: 1 → pass, below → fail, unreadable or out of range → error. */
export function rewardVerdict(written: string): {
  status: 'pass' | 'fail' | 'error'
  reward: number | null
  reason: string | null
} {
  const reward = parseReward(written)
  if (reward === null)
    return {
      status: 'error',
      reward: null,
      reason: `bad reward ${JSON.stringify(written.trim().slice(0, 80))}`,
    }
  return { status: reward >= 1 ? 'pass' : 'fail', reward, reason: null }
}

/** A reward file's text as a number in [0, 1], or null when it is not one. */
export function parseReward(text: string): number | null {
  const s = text.trim()
  if (!/^[+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(s)) return null
  const n = Number(s)
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : null
}
