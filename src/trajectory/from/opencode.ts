import { applyResult, at, finalize, messageEvent, nativeType, otherEvent, s, toolEvent } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'
import { closeWithFinish, KNOWN_SKIP } from './shared.js'

/**
 * OpenCode `run --format json`: `tool_use` events carry the whole call in `part` {tool, state {status,
 * input, output, metadata.exit, time.start}}; `text` events carry the assistant's text; `step_start` /
 * `step_finish` frame each model request.
 */
const SKIP = KNOWN_SKIP(['step_start', 'step_finish', 'reasoning'])

export const opencodeMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    let lastText = -1
    raw.forEach((e, i) => {
      const type = nativeType(e)
      const time = typeof at(e, 'timestamp') === 'number' ? (at(e, 'timestamp') as number) : null
      if (type === 'tool_use') {
        const state = at(e, 'part', 'state')
        const start = at(state, 'time', 'start')
        const ev = toolEvent({
          tool: s(at(e, 'part', 'tool')) ?? 'unknown',
          args: at(state, 'input'),
          rawIndex: i,
          atMs: typeof start === 'number' ? start : time,
        })
        const status = s(at(state, 'status'))
        const exit = at(state, 'metadata', 'exit')
        applyResult(ev, {
          output: s(at(state, 'output')) ?? s(at(state, 'error')),
          ok:
            status === 'completed'
              ? typeof exit === 'number'
                ? exit === 0
                : true
              : status === 'error'
                ? false
                : null,
          exitCode: typeof exit === 'number' ? exit : null,
        })
        out.push(ev)
        return
      }
      if (type === 'text') {
        const text = s(at(e, 'part', 'text'))
        if (text && text.trim() !== '') {
          out.push(messageEvent(text, i, time))
          lastText = out.length - 1
        }
        return
      }
      if (SKIP.has(type)) return
      out.push(otherEvent(type, i, time))
    })
    closeWithFinish(out, lastText)
    return finalize(out, ref, opencodeMapper.version)
  },
}
