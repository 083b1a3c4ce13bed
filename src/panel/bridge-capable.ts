import path from 'node:path'
import { HwError } from '../errors.js'
import { bridgeRefusal } from '../harnesses/mcp.js'
import { isHarnessName } from '../harnesses/names.js'
import type { Manifest } from '../manifest/schema.js'
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
