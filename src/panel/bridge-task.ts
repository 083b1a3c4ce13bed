import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { type Environment, loadEnvironment } from '../bridge/env-schema.js'
import { type GraderUse, parseGraderUses } from '../grade/registry.js'
import type { ReferenceCall } from '../grade/types.js'
import { HwError } from '../util/errors.js'
import { loadTask, parseTaskToml, type Task } from './task.js'

/**
 * A bridge task folder (`[hw] kind = "bridge"` in task.toml):
 *
 *     instruction.md            the first user message
 *     task.toml                 [metadata], [hw] kind = "bridge", [[hw.graders]] name = "…" + fields
 *     environment/bridge.json   tools and initial world (src/bridge/env-schema.ts)
 *     environment/workspace/    optional: files copied into the attempt's workspace (the sandbox)
 *     solution/calls.json       reference calls: [{ "tool": "…", "arguments": { … } }]
 *     solution/answer.md        optional: the reference final answer (for the answer grader)
 *     user/scenario.md          optional: the simulated user's hidden scenario (multi-turn)
 *
 * Nothing but environment/workspace/ reaches the attempt; graders and the reference stay private.
 */
export interface BridgeTask {
  envFile: string
  env: Environment
  graders: GraderUse[]
  reference: ReferenceCall[]
  referenceAnswer: string | null
  /** environment/workspace/, or null when the sandbox starts empty. */
  workspaceDir: string | null
  scenario: string | null
}

const ReferenceSchema = z.array(
  z.strictObject({ tool: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }),
)

/**
 * Load the bridge parts of a loaded task. Throws HwError `task_invalid` (or `bridge_env_invalid`
 * with file, line and field) for a bad environment, grader list, reference call or tool name.
 */
export async function loadBridgeTask(task: Task): Promise<BridgeTask> {
  if (task.kind !== 'bridge') throw new HwError('task_invalid', 'not a bridge task', { where: task.dir })
  const envFile = path.join(task.paths.environment, 'bridge.json')
  const env = await loadEnvironment(envFile)
  const tomlFile = path.join(task.dir, 'task.toml')
  const toml = parseTaskToml(await readFile(tomlFile, 'utf8'), tomlFile)
  const parsed = parseGraderUses(toml.hw.graders ?? [])
  if ('problems' in parsed) {
    throw new HwError('task_invalid', `hw.graders: ${parsed.problems.length} problem(s)`, {
      where: tomlFile,
      details: parsed.problems.map((p) => `hw.graders${p}`),
      help: 'each [[hw.graders]] names a grader (tool_calls, end_state, files, command, answer) and its fields',
    })
  }
  const callsFile = path.join(task.dir, 'solution', 'calls.json')
  let reference: ReferenceCall[] = []
  const refText = await readFile(callsFile, 'utf8').catch(() => null)
  if (refText !== null) {
    let raw: unknown
    try {
      raw = JSON.parse(refText)
    } catch (e) {
      throw new HwError('task_invalid', `not valid JSON: ${(e as Error).message}`, { where: callsFile })
    }
    const r = ReferenceSchema.safeParse(raw)
    if (!r.success) {
      const i = r.error.issues[0]
      throw new HwError('task_invalid', `[${i?.path.join('].')}: ${i?.message}`, { where: callsFile })
    }
    reference = r.data
    const names = new Set(env.tools.map((t) => t.name))
    const bad = reference.findIndex((c) => !names.has(c.tool))
    if (bad >= 0) {
      throw new HwError(
        'task_invalid',
        `[${bad}].tool: "${reference[bad]?.tool}" is not a tool of environment/bridge.json`,
        {
          where: callsFile,
        },
      )
    }
  }
  const workspaceDir = path.join(task.paths.environment, 'workspace')
  const hasWorkspace = (await stat(workspaceDir).catch(() => null))?.isDirectory() ?? false
  return {
    envFile,
    env,
    graders: parsed.uses,
    reference,
    referenceAnswer: await readFile(path.join(task.dir, 'solution', 'answer.md'), 'utf8').catch(() => null),
    workspaceDir: hasWorkspace ? workspaceDir : null,
    scenario: await readFile(path.join(task.dir, 'user', 'scenario.md'), 'utf8').catch(() => null),
  }
}

/**
 * Load every bridge task among `ids` of a task-folder panel, so `validate` refuses a bad environment,
 * grader list or reference before anything runs. Throws HwError `task_invalid` listing every problem
 * (each with its file, and line and field when known).
 */
export async function checkBridgeTasks(tasksDir: string, ids: readonly string[]): Promise<number> {
  const problems: string[] = []
  let bridge = 0
  for (const id of ids) {
    try {
      const task = await loadTask(path.join(tasksDir, id))
      if (task.kind !== 'bridge') continue
      bridge++
      await loadBridgeTask(task)
    } catch (e) {
      if (!(e instanceof HwError)) throw e
      if (e.details.length > 0 && e.code === 'bridge_env_invalid') problems.push(...e.details)
      else
        problems.push(`${e.where ? `${e.where} ` : ''}${e.message}${e.details.map((d) => `; ${d}`).join('')}`)
    }
  }
  if (problems.length > 0) {
    throw new HwError('task_invalid', `${problems.length} problem(s) in the panel's task folders`, {
      details: problems,
      help: 'see docs/bridge.md for the bridge task format',
    })
  }
  return bridge
}
