import { cp, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { CallLog, TraceLog } from '../bridge/calls.js'
import { Dispatcher } from '../bridge/dispatch.js'
import { EnvProvider } from '../bridge/env-provider.js'
import { CALLS_FILE, TRACE_FILE } from '../bridge/open.js'
import { collectEvidence } from '../grade/evidence.js'
import { gradeAll } from '../grade/registry.js'
import type { Grade } from '../grade/types.js'
import { type BridgeTask, loadBridgeTask } from './bridge-task.js'
import type { Task } from './task.js'
import type { VerifierStatus } from './verifier.js'

/** The same shape as verify.ts's TaskVerification (kept apart so the two files do not import each other). */
export interface BridgeVerification {
  id: string
  start: VerifierStatus
  solution: VerifierStatus | 'missing' | 'flaky'
  note?: string
}

/**
 * `panel verify` for a bridge task. Start: the graders on the untouched world and workspace with an
 * empty answer (must fail). Solution, `repeat` times on fresh copies: solution/calls.json replayed
 * through the bridge's own dispatcher (validation and builtins included), with solution/answer.md as
 * the answer, then graded (must pass). A reference call the bridge refuses makes the solution `error`.
 */
export async function verifyBridgeTask(
  task: Task,
  opts: { repeat?: number; logsDir: string },
): Promise<BridgeVerification> {
  const bt = await loadBridgeTask(task)
  const logs = path.join(opts.logsDir, task.id)
  await mkdir(logs, { recursive: true })
  const start = await attempt(task, bt, false)
  await writeFile(path.join(logs, 'start.log'), `${JSON.stringify(start.grade)}\n`)
  const out: BridgeVerification = { id: task.id, start: start.status, solution: 'missing' }
  if (start.status !== 'fail') {
    out.note =
      start.status === 'pass'
        ? 'the graders already pass before any call'
        : `the graders give ${start.status} before any call (${start.grade.reason})`
  }
  if (!task.hasSolution) {
    out.note = [out.note, 'no solution/calls.json'].filter(Boolean).join('; ')
    return out
  }
  const seen = new Set<VerifierStatus>()
  let why: string | null = null
  for (let i = 0; i < Math.max(1, opts.repeat ?? 1); i++) {
    const r = await attempt(task, bt, true)
    await writeFile(path.join(logs, 'solution.log'), `${JSON.stringify(r.grade)}\n`)
    seen.add(r.status)
    why ??= r.note ?? (r.status === 'pass' ? null : r.grade.reason)
  }
  const [only] = seen
  out.solution = seen.size === 1 && only ? only : 'flaky'
  if (out.solution !== 'pass') {
    const note =
      out.solution === 'flaky'
        ? `solution results differ: ${[...seen].join(', ')}`
        : (why ?? `the solution gives ${out.solution}`)
    out.note = [out.note, note].filter(Boolean).join('; ')
  }
  return out
}

async function attempt(
  task: Task,
  bt: BridgeTask,
  solve: boolean,
): Promise<{ status: VerifierStatus; grade: Grade; note: string | null }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `hw-bridge-verify-${task.id.slice(0, 30)}-`))
  try {
    const ws = path.join(dir, 'workspace')
    const state = path.join(dir, 'state')
    await mkdir(ws)
    await mkdir(state)
    if (bt.workspaceDir) await cp(bt.workspaceDir, ws, { recursive: true })
    const root = await realpath(ws)
    let note: string | null = null
    if (solve) {
      const provider = new EnvProvider(bt.env, state, root)
      const d = new Dispatcher(
        provider,
        new CallLog(path.join(state, CALLS_FILE)),
        new TraceLog(path.join(state, TRACE_FILE)),
      )
      for (const [i, c] of bt.reference.entries()) {
        const r = await d.call(c.tool, c.arguments)
        if (r.status !== 'ok') {
          note = `reference call ${i + 1} (${c.tool}) gives ${r.status}: ${r.text.slice(0, 200)}`
          return { status: 'error', grade: { reward: null, code: 'bad_reference', reason: note }, note }
        }
      }
    }
    const ev = await collectEvidence({
      env: bt.env,
      reference: bt.reference,
      stateDir: state,
      workspace: root,
      answer: solve ? (bt.referenceAnswer ?? '') : '',
    })
    const { grade } = await gradeAll(bt.graders, ev)
    const status: VerifierStatus = grade.reward === null ? 'error' : grade.reward >= 1 ? 'pass' : 'fail'
    return { status, grade, note }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
