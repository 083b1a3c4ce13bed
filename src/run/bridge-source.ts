import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type CallSummary, summarizeCalls } from '../bridge/calls.js'
import { CALLS_FILE } from '../bridge/open.js'
import { collectEvidence } from '../grade/evidence.js'
import { gradeAll } from '../grade/registry.js'
import type { BridgeTask } from '../panel/bridge-task.js'
import { strictJson } from '../util/json.js'
import { safeSegment } from '../util/paths.js'
import type { SourceDirs, Verdict } from './verdict.js'
import { buildTemplate, copyTemplate } from './workspace.js'

/**
 * What a harness adapter needs to start the bridge for one attempt (all absolute):
 * `harness-watch bridge serve --env <envFile> --state <stateDir> --sandbox <sandbox>`.
 * The state folder is in the attempt's private scratch: it holds the world and the argument trace.
 */
export interface BridgeAttempt {
  envFile: string
  stateDir: string
  sandbox: string
  /** The simulated user's hidden scenario, or null for a single-turn task. */
  scenario: string | null
}

/** The file in the scratch folder the run stage writes the harness's final answer to before verify. */
export const ANSWER_FILE = 'answer.txt'

/** Bridge state folder of an attempt. */
export function bridgeStateDir(dirs: Pick<SourceDirs, 'scratch'>): string {
  return path.join(dirs.scratch, 'bridge')
}

/**
 * Prepare a bridge attempt: the workspace is environment/workspace/ (or empty), committed once per
 * instance as a template; the state folder is created empty (the bridge writes the initial world on
 * start). environment/bridge.json itself never enters the workspace.
 */
export async function prepareBridge(
  id: string,
  bt: BridgeTask,
  dirs: SourceDirs,
  templatesDir: string,
  template: Map<string, Promise<string>>,
): Promise<{ baseCommit: string; bridge: BridgeAttempt }> {
  const dir = path.join(templatesDir, safeSegment(id))
  let p = template.get(id)
  if (!p) {
    p = (async () => {
      const source = bt.workspaceDir ?? path.join(templatesDir, `${safeSegment(id)}.empty`)
      if (!bt.workspaceDir) await mkdir(source, { recursive: true })
      return buildTemplate(source, dir)
    })()
    template.set(id, p)
    p.catch(() => template.delete(id))
  }
  const baseCommit = await p
  await copyTemplate(dir, dirs.workspace)
  const stateDir = bridgeStateDir(dirs)
  await mkdir(stateDir, { recursive: true })
  return {
    baseCommit,
    bridge: { envFile: bt.envFile, stateDir, sandbox: dirs.workspace, scenario: bt.scenario },
  }
}

/**
 * Grade a bridge attempt with the task's graders (never seen by the attempt). Copies calls.jsonl (no
 * argument bodies) and grade.json (codes and reasons per grader) into the attempt's logs; the verdict
 * carries the call counts for the attempt record. A reward of 1 passes, below 1 fails, null (ungraded)
 * is an error with its reason. Never throws.
 */
export async function verifyBridge(
  bt: BridgeTask,
  dirs: SourceDirs,
): Promise<Verdict & { tools: CallSummary }> {
  const t0 = performance.now()
  const stateDir = bridgeStateDir(dirs)
  const callsFile = path.join(stateDir, CALLS_FILE)
  let tools: CallSummary = { calls: 0, ok: 0, error: 0, invalid_arguments: 0, unreadable: 0 }
  try {
    tools = summarizeCalls(callsFile)
    if (tools.calls + tools.unreadable > 0) await copyFile(callsFile, path.join(dirs.logsDir, CALLS_FILE))
    const answer = await readFile(path.join(dirs.scratch, ANSWER_FILE), 'utf8').catch(() => null)
    const ev = await collectEvidence({
      env: bt.env,
      reference: bt.reference,
      stateDir,
      workspace: dirs.workspace,
      answer,
    })
    const { grade, parts } = await gradeAll(bt.graders, ev)
    await writeFile(path.join(dirs.logsDir, 'grade.json'), strictJson({ grade, parts }))
    const durationMs = performance.now() - t0
    if (grade.reward === null) {
      return {
        status: 'error',
        exitCode: null,
        reward: null,
        durationMs,
        reason: `ungraded: ${grade.reason}`,
        tools,
      }
    }
    return {
      status: grade.reward >= 1 ? 'pass' : 'fail',
      exitCode: null,
      reward: grade.reward,
      durationMs,
      reason: null,
      tools,
    }
  } catch (e) {
    return {
      status: 'error',
      exitCode: null,
      reward: null,
      durationMs: performance.now() - t0,
      reason: (e as Error).message,
      tools,
    }
  }
}
