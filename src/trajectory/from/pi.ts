import {
  applyResult,
  at,
  finalize,
  messageEvent,
  nativeType,
  otherEvent,
  s,
  textOf,
  toolEvent,
} from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'
import { closeWithFinish, KNOWN_SKIP } from './shared.js'

/**
 * Pi `--mode json` (session version 3): assistant `message_end` events carry `toolCall` parts
 * {id, name, arguments} and text parts; `tool_execution_end` {toolCallId, result.content, isError}
 * carries each result. Lifecycle events (turn/agent/message starts, tool updates, the toolResult
 * message that repeats the result) are folded in.
 */
const SKIP = KNOWN_SKIP([
  'session',
  'agent_start',
  'agent_end',
  'turn_start',
  'turn_end',
  'message_start',
  'message_update',
  'tool_execution_start',
  'tool_execution_update',
])

export const piMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    const calls = new Map<string, DraftEvent>()
    let lastText = -1
    raw.forEach((e, i) => {
      const type = nativeType(e)
      if (type === 'message_end') {
        const m = at(e, 'message')
        const role = s(at(m, 'role'))
        const time = typeof at(m, 'timestamp') === 'number' ? (at(m, 'timestamp') as number) : null
        if (role === 'toolResult') return
        const parts = Array.isArray(at(m, 'content')) ? (at(m, 'content') as unknown[]) : []
        for (const p of parts) {
          if (s(at(p, 'type')) === 'toolCall') {
            const ev = toolEvent({
              tool: s(at(p, 'name')) ?? 'unknown',
              args: at(p, 'arguments'),
              rawIndex: i,
              atMs: time,
            })
            out.push(ev)
            const id = s(at(p, 'id'))
            if (id) calls.set(id, ev)
          }
        }
        const text = textOf(parts.filter((p) => s(at(p, 'type')) === 'text'))
        if (text && text.trim() !== '') {
          out.push(messageEvent(text, i, time))
          if (role === 'assistant') lastText = out.length - 1
        }
        return
      }
      if (type === 'tool_execution_end') {
        const ev = calls.get(s(at(e, 'toolCallId')) ?? '')
        const isError = at(e, 'isError')
        if (ev)
          applyResult(ev, {
            output: textOf(at(e, 'result', 'content')),
            ok: typeof isError === 'boolean' ? !isError : null,
          })
        return
      }
      if (SKIP.has(type)) return
      out.push(otherEvent(type, i, null))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, piMapper.version)
  },
  check(raw) {
    const session = raw.find((e) => nativeType(e) === 'session')
    const v = at(session, 'version')
    return session && v !== 3
      ? [
          {
            code: 'unknown_version',
            detail: `Pi session version ${String(v)} (mapped as version 3)`,
            line: raw.indexOf(session) + 1,
          },
        ]
      : []
  },
}
