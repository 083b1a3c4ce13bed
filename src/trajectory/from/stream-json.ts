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
import type { AttemptRef, DraftEvent, TrajectoryEvent } from '../schema.js'
import { closeWithFinish, KNOWN_SKIP } from './shared.js'

/**
 * The `stream-json` format Claude Code writes and Qwen Code follows: `assistant` events whose
 * `message.content` holds `tool_use` {id, name, input} and `text` parts; `user` events whose content holds
 * `tool_result` {tool_use_id, content, is_error}; `system/init`; a final `result` {result}. Qwen adds
 * `stream_event` wrappers (folded) and writes its exit code into the result text ("Exit Code: 0").
 */
const SKIP = KNOWN_SKIP(['system', 'stream_event', 'result', 'rate_limit_event'])

export function mapStreamJson(raw: unknown[], ref: AttemptRef, version: number): TrajectoryEvent[] {
  const out: DraftEvent[] = []
  const calls = new Map<string, DraftEvent>()
  let lastText = -1
  raw.forEach((e, i) => {
    const type = nativeType(e)
    const time = timeOf(at(e, 'timestamp'))
    const parts = Array.isArray(at(e, 'message', 'content')) ? (at(e, 'message', 'content') as unknown[]) : []
    if (type === 'assistant') {
      for (const p of parts) {
        const pt = s(at(p, 'type'))
        if (pt === 'tool_use') {
          const ev = toolEvent({
            tool: s(at(p, 'name')) ?? 'unknown',
            args: at(p, 'input'),
            rawIndex: i,
            atMs: time,
          })
          out.push(ev)
          const id = s(at(p, 'id'))
          if (id) calls.set(id, ev)
        } else if (pt === 'text') {
          const text = s(at(p, 'text'))
          if (text && text.trim() !== '') {
            out.push(messageEvent(text, i, time))
            lastText = out.length - 1
          }
        }
      }
      return
    }
    if (type === 'user') {
      let folded = false
      for (const p of parts) {
        if (s(at(p, 'type')) !== 'tool_result') continue
        folded = true
        const ev = calls.get(s(at(p, 'tool_use_id')) ?? '')
        if (!ev) continue
        const text = textOf(at(p, 'content'))
        const exit = /Exit Code: (-?\d+)/.exec(text ?? '')
        const isError = at(p, 'is_error')
        applyResult(ev, {
          output: text,
          ok: typeof isError === 'boolean' ? !isError : null,
          exitCode: exit ? Number(exit[1]) : null,
        })
      }
      if (!folded) {
        const text =
          typeof at(e, 'message', 'content') === 'string' ? s(at(e, 'message', 'content')) : textOf(parts)
        out.push(messageEvent(text, i, time))
      }
      return
    }
    if (SKIP.has(type)) return
    out.push(otherEvent(type, i, time))
  })
  closeWithFinish(out, lastText)
  return finalize(out, ref, version)
}
