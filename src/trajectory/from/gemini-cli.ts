import { timeOf } from '../classify.js'
import { applyResult, at, finalize, messageEvent, nativeType, otherEvent, s, toolEvent } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'
import { closeWithFinish, KNOWN_SKIP } from './shared.js'

/**
 * Gemini CLI `--output-format stream-json`: `tool_use` {tool_name, tool_id, parameters}, `tool_result`
 * {tool_id, status, output}, `message` {role, content, delta} (consecutive assistant deltas are one
 * message), `init`, `result`.
 */
const SKIP = KNOWN_SKIP(['init', 'result'])

export const geminiCliMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    const calls = new Map<string, DraftEvent>()
    let lastText = -1
    let open: DraftEvent | null = null
    let openText = ''
    raw.forEach((e, i) => {
      const type = nativeType(e)
      const time = timeOf(at(e, 'timestamp'))
      if (type === 'message') {
        const text = s(at(e, 'content')) ?? ''
        if (s(at(e, 'role')) === 'assistant') {
          if (open && at(e, 'delta') === true) {
            openText += text
            open.text = messageEvent(openText, i, null).text
            return
          }
          open = messageEvent(text, i, time)
          openText = text
          out.push(open)
          lastText = out.length - 1
          return
        }
        open = null
        out.push(messageEvent(text, i, time))
        return
      }
      open = null
      if (type === 'tool_use') {
        const ev = toolEvent({
          tool: s(at(e, 'tool_name')) ?? 'unknown',
          args: at(e, 'parameters'),
          rawIndex: i,
          atMs: time,
        })
        out.push(ev)
        const id = s(at(e, 'tool_id'))
        if (id) calls.set(id, ev)
        return
      }
      if (type === 'tool_result') {
        const ev = calls.get(s(at(e, 'tool_id')) ?? '')
        const status = s(at(e, 'status'))
        const output = s(at(e, 'output')) ?? s(at(e, 'error', 'message'))
        const exit = /Exit Code: (-?\d+)/.exec(output ?? '')
        if (ev)
          applyResult(ev, {
            output,
            ok: status === 'success' ? true : status === 'error' ? false : null,
            exitCode: exit ? Number(exit[1]) : null,
          })
        return
      }
      if (SKIP.has(type)) return
      out.push(otherEvent(type, i, time))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, geminiCliMapper.version)
  },
}
