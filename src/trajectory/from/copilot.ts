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
 * Copilot CLI `--output-format json`: `assistant.message` {content, toolRequests[{toolCallId, name,
 * arguments}]}, `tool.execution_start` / `tool.execution_complete` {toolCallId, success, result.content,
 * shellExecution.exitCode}, `user.message`. Events marked `ephemeral` (deltas, model-call progress) and
 * session bookkeeping are folded in.
 */
export const copilotMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    const calls = new Map<string, DraftEvent>()
    let lastText = -1
    const call = (id: string | null, name: string | null, args: unknown, i: number, time: number | null) => {
      if (id && calls.has(id)) return
      const ev = toolEvent({ tool: name ?? 'unknown', args, rawIndex: i, atMs: time })
      out.push(ev)
      if (id) calls.set(id, ev)
    }
    raw.forEach((e, i) => {
      const type = nativeType(e)
      const time = timeOf(at(e, 'timestamp'))
      const d = at(e, 'data')
      if (type === 'assistant.message') {
        const text = s(at(d, 'content'))
        if (text && text.trim() !== '') {
          out.push(messageEvent(text, i, time))
          lastText = out.length - 1
        }
        const reqs = Array.isArray(at(d, 'toolRequests')) ? (at(d, 'toolRequests') as unknown[]) : []
        for (const r of reqs) call(s(at(r, 'toolCallId')), s(at(r, 'name')), at(r, 'arguments'), i, time)
        return
      }
      if (type === 'tool.execution_start') {
        call(s(at(d, 'toolCallId')), s(at(d, 'toolName')), at(d, 'arguments'), i, time)
        return
      }
      if (type === 'tool.execution_complete') {
        const ev = calls.get(s(at(d, 'toolCallId')) ?? '')
        const exit = at(d, 'shellExecution', 'exitCode')
        const ok = at(d, 'success')
        if (ev)
          applyResult(ev, {
            output: textOf(at(d, 'result', 'content')) ?? s(at(d, 'error', 'message')),
            ok: typeof ok === 'boolean' ? ok : null,
            exitCode: typeof exit === 'number' ? exit : null,
          })
        return
      }
      if (type === 'user.message') {
        out.push(messageEvent(s(at(d, 'content')), i, time))
        return
      }
      if (/error/i.test(type)) {
        out.push(otherEvent(type, i, time))
        return
      }
      if (at(e, 'ephemeral') === true || /^(session|assistant|result|model|system)\b/.test(type)) return
      out.push(otherEvent(type, i, time))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, copilotMapper.version)
  },
}
