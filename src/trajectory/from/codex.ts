import { applyResult, at, finalize, messageEvent, nativeType, otherEvent, s, toolEvent } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'
import { closeWithFinish, KNOWN_SKIP } from './shared.js'

/**
 * Codex `exec --json`: `item.started` / `item.completed` events carry one item each, by `item.id`:
 * `command_execution` {command, aggregated_output, exit_code, status}, `agent_message` {text},
 * `file_change` {changes[{path, kind}]}, `mcp_tool_call` {server, tool, arguments}, `web_search`,
 * `todo_list`, `reasoning`, `error` (a warning item). The stream carries no times: `t_ms` stays null.
 */
const SKIP = KNOWN_SKIP(['thread.started', 'turn.started', 'turn.completed'])

export const codexMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    const byItem = new Map<string, DraftEvent>()
    let lastText = -1
    raw.forEach((e, i) => {
      const type = nativeType(e)
      if (type === 'item.started' || type === 'item.updated' || type === 'item.completed') {
        const item = at(e, 'item')
        const id = s(at(item, 'id')) ?? `#${i}`
        const itemType = s(at(item, 'type')) ?? 'unknown'
        let ev = byItem.get(id)
        if (!ev) {
          ev = itemEvent(item, itemType, i)
          byItem.set(id, ev)
          out.push(ev)
          if (itemType === 'agent_message') lastText = out.length - 1
        }
        if (itemType === 'command_execution' && type === 'item.completed') {
          const exit = at(item, 'exit_code')
          applyResult(ev, {
            output: s(at(item, 'aggregated_output')),
            exitCode: typeof exit === 'number' ? exit : null,
            ok: s(at(item, 'status')) === 'failed' ? false : null,
          })
        } else if (type === 'item.completed' && itemType === 'mcp_tool_call') {
          applyResult(ev, {
            output: JSON.stringify(at(item, 'result') ?? at(item, 'error') ?? null),
            ok: at(item, 'error') ? false : s(at(item, 'status')) === 'completed' ? true : null,
          })
        } else if (type === 'item.completed' && itemType === 'file_change') {
          ev.ok =
            s(at(item, 'status')) === 'completed' ? true : s(at(item, 'status')) === 'failed' ? false : null
        }
        return
      }
      if (SKIP.has(type)) return
      out.push(otherEvent(type, i, null))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, codexMapper.version)
  },
}

function itemEvent(item: unknown, itemType: string, i: number): DraftEvent {
  switch (itemType) {
    case 'command_execution':
      return toolEvent({
        tool: 'command_execution',
        args: {},
        command: s(at(item, 'command')) ?? '',
        rawIndex: i,
        atMs: null,
      })
    case 'agent_message':
      return messageEvent(s(at(item, 'text')), i, null)
    case 'reasoning':
      return { ...messageEvent(s(at(item, 'text')), i, null), kind: 'plan', tool: 'reasoning' }
    case 'file_change': {
      const changes = Array.isArray(at(item, 'changes')) ? (at(item, 'changes') as unknown[]) : []
      const ev = toolEvent({ tool: 'file_change', args: {}, rawIndex: i, atMs: null })
      ev.kind = 'edit'
      ev.confidence = 'high'
      ev.paths = changes.map((c) => s(at(c, 'path'))).filter((p): p is string => p !== null)
      return ev
    }
    case 'mcp_tool_call':
      return toolEvent({
        tool: `${s(at(item, 'server')) ?? 'mcp'}.${s(at(item, 'tool')) ?? 'unknown'}`,
        args: at(item, 'arguments'),
        rawIndex: i,
        atMs: null,
      })
    case 'web_search':
      return {
        ...toolEvent({ tool: 'web_search', args: {}, rawIndex: i, atMs: null }),
        kind: 'browse',
        confidence: 'high',
      }
    case 'todo_list':
      return {
        ...toolEvent({ tool: 'todo_list', args: {}, rawIndex: i, atMs: null }),
        kind: 'plan',
        confidence: 'high',
      }
    default:
      return otherEvent(`item:${itemType}`, i, null)
  }
}
