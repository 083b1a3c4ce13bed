import { stat } from 'node:fs/promises'
import path from 'node:path'
import { bridgeRefusal } from '../harnesses/mcp.js'
import { RESUME_RECIPES } from '../harnesses/resume.js'
import { isHarnessName } from '../manifest/harness-names.js'
import type { Manifest } from '../manifest/schema.js'
import { HwError } from '../util/errors.js'
import type { ResolvedPanel } from './resolve.js'
import { loadTask } from './task.js'

/** The panel's bridge tasks (`[hw] kind = "bridge"`), in panel order; [] for an id list. */
export async function bridgeInstances(panel: ResolvedPanel): Promise<string[]> {
  if (!panel.tasksDir) return []
  const out: string[] = []
  for (const id of panel.instances) {
    const task = await loadTask(path.join(panel.tasksDir, id))
    if (task.kind === 'bridge') out.push(id)
  }
  return out
}

/**
 * Refuse a manifest whose panel holds bridge tasks while a cell's harness has no way to load the
 * tool-bridge (harnesses/mcp.ts `bridgeRefusal`). Throws HwError `bridge_unsupported` naming each such
 * cell at its `cells[i].harness` field (with file:line when `locate` is given) and one bridge task.
 */
export async function assertBridgeCapable(
  m: Manifest,
  panel: ResolvedPanel,
  locate?: (path: readonly PropertyKey[]) => string,
): Promise<void> {
  const bridge = await bridgeInstances(panel)
  if (bridge.length === 0) return
  const problems: string[] = []
  m.cells.forEach((cell, i) => {
    if (!isHarnessName(cell.harness)) return
    const why = bridgeRefusal(cell.harness)
    if (!why) return
    const at = locate ? `${locate(['cells', i, 'harness'])} ` : ''
    problems.push(`${at}cells[${i}].harness: ${why}`)
  })
  if (problems.length === 0) return
  throw new HwError(
    'bridge_unsupported',
    `the panel has ${bridge.length} tool-bridge task(s) (e.g. ${bridge[0]}) that ${problems.length === 1 ? 'a cell' : `${problems.length} cells`} cannot run`,
    {
      details: problems,
      help: 'bridge panels run on harnesses that load MCP servers headless (Claude Code, Codex, Gemini CLI, Qwen Code, OpenCode, Copilot, agentd) or Pi through its bridge extension; remove the other cells or use a coding panel',
    },
  )
}

/** The panel's multi-turn bridge tasks: bridge tasks with a hidden scenario (`user/scenario.md`). */
export async function dialogueInstances(panel: ResolvedPanel): Promise<string[]> {
  if (!panel.tasksDir) return []
  const out: string[] = []
  for (const id of await bridgeInstances(panel)) {
    const scenario = path.join(panel.tasksDir, id, 'user', 'scenario.md')
    if (
      await stat(scenario).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      out.push(id)
  }
  return out
}

/**
 * Refuse a manifest whose panel holds multi-turn bridge tasks (a simulated user) when it declares no
 * `user_model`, or when a cell's harness has no documented headless resume (harnesses/resume.ts).
 * Throws HwError `dialogue_unsupported` with each problem at its field (file:line when `locate` is
 * given: the `panel` field for a missing user_model, `cells[i].harness` for a harness).
 */
export async function assertDialogueReady(
  m: Manifest,
  panel: ResolvedPanel,
  locate?: (path: readonly PropertyKey[]) => string,
): Promise<void> {
  const multi = await dialogueInstances(panel)
  if (multi.length === 0) return
  const at = (p: PropertyKey[]) => (locate ? `${locate(p)} ` : '')
  const problems: string[] = []
  if (!m.user_model) {
    problems.push(
      `${at(['panel'])}user_model: missing; ${multi.length} task(s) of the panel (e.g. ${multi[0]}) talk with a simulated user (user/scenario.md)`,
    )
  }
  m.cells.forEach((cell, i) => {
    if (!isHarnessName(cell.harness) || RESUME_RECIPES[cell.harness]) return
    problems.push(
      `${at(['cells', i, 'harness'])}cells[${i}].harness: ${cell.harness} has no documented headless session resume, so it cannot hold a multi-turn dialogue`,
    )
  })
  if (problems.length === 0) return
  throw new HwError(
    'dialogue_unsupported',
    `the panel has ${multi.length} multi-turn bridge task(s) (e.g. ${multi[0]}) the manifest cannot run`,
    {
      details: problems,
      help: 'add a user_model route (e.g. user_model: {id: user-sim, provider: scripted}) and use harnesses that resume a session (Pi, OpenCode, Codex, Claude Code, Gemini CLI, Qwen Code, Copilot)',
    },
  )
}
