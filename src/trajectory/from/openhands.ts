import { timeOf } from '../classify.js'
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
import { closeWithFinish } from './shared.js'

/**
 * OpenHands, both documented formats:
 * - CLI ≥ 1 (`--headless --json`, SDK events): `ActionEvent` {tool_name, tool_call_id, action {kind,
 *   command | path | message}}, `ObservationEvent` {tool_call_id, observation {content, exit_code}},
 *   `MessageEvent` {source, llm_message.content}, `AgentErrorEvent`.
 * - 0.x saved trajectory: events with `action` (run, read, edit, write, browse, finish, message, think,
 *   delegate…) and `args`, or `observation` with `cause` (the id of the action it answers).
 */
const LEGACY_KIND: Record<string, DraftEvent['kind']> = {
  run: 'run',
  run_ipython: 'run',
  read: 'read',
  edit: 'edit',
  write: 'edit',
  browse: 'browse',
  browse_interactive: 'browse',
  think: 'plan',
  delegate: 'delegate',
  finish: 'finish',
}

export const openhandsMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    const calls = new Map<string, DraftEvent>()
    let lastText = -1
    raw.forEach((e, i) => {
      const time = timeOf(at(e, 'timestamp'))
      const kind = s(at(e, 'kind'))
      if (kind === 'ActionEvent') {
        const action = at(e, 'action')
        const ak = s(at(action, 'kind')) ?? 'unknown'
        if (ak === 'FinishAction') {
          out.push(messageEvent(s(at(action, 'message')), i, time, 'finish'))
          return
        }
        const ev = toolEvent({ tool: s(at(e, 'tool_name')) ?? ak, args: action, rawIndex: i, atMs: time })
        if (ak === 'ThinkAction' || ak === 'TaskTrackerAction') ev.kind = 'plan'
        if (ak === 'FileEditorAction' || ak === 'StrReplaceEditorAction') {
          ev.kind = s(at(action, 'command')) === 'view' ? 'read' : 'edit'
          ev.command = null
          ev.confidence = 'high'
        }
        out.push(ev)
        const id = s(at(e, 'tool_call_id'))
        if (id) calls.set(id, ev)
        return
      }
      if (kind === 'ObservationEvent') {
        const ev = calls.get(s(at(e, 'tool_call_id')) ?? '')
        const obs = at(e, 'observation')
        const exit = at(obs, 'exit_code')
        if (ev)
          applyResult(ev, {
            output: textOf(at(obs, 'content')),
            exitCode: typeof exit === 'number' ? exit : null,
            ok: at(obs, 'is_error') === true ? false : null,
          })
        return
      }
      if (kind === 'MessageEvent') {
        out.push(messageEvent(textOf(at(e, 'llm_message', 'content')), i, time))
        if (s(at(e, 'source')) === 'agent') lastText = out.length - 1
        return
      }
      // 0.x trajectory
      const action = s(at(e, 'action'))
      if (action !== null) {
        const args = at(e, 'args')
        if (action === 'message' || action === 'system') {
          out.push(messageEvent(s(at(args, 'content')) ?? s(at(e, 'message')), i, time))
          if (s(at(e, 'source')) === 'agent') lastText = out.length - 1
          return
        }
        if (action === 'finish') {
          out.push(messageEvent(s(at(args, 'final_thought')) ?? s(at(e, 'message')), i, time, 'finish'))
          return
        }
        const tool = s(at(e, 'tool_call_metadata', 'function_name')) ?? action
        const ev = toolEvent({ tool, args, rawIndex: i, atMs: time })
        const k = LEGACY_KIND[action]
        if (k && !(k === 'run' && ev.kind === 'test')) {
          if (!(k === 'run' && ev.command)) ev.kind = k
          ev.confidence = 'high'
        } else if (!k) {
          ev.kind = 'other'
          ev.confidence = 'low'
        }
        out.push(ev)
        const id = at(e, 'id')
        if (typeof id === 'number' || typeof id === 'string') calls.set(`legacy:${id}`, ev)
        return
      }
      if (s(at(e, 'observation')) !== null) {
        const ev = calls.get(`legacy:${String(at(e, 'cause'))}`)
        const exit = at(e, 'extras', 'metadata', 'exit_code')
        if (ev)
          applyResult(ev, { output: s(at(e, 'content')), exitCode: typeof exit === 'number' ? exit : null })
        return
      }
      out.push(otherEvent(kind ?? nativeType(e), i, time))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, openhandsMapper.version)
  },
}
