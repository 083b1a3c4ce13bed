import { timeOf } from '../classify.js'
import { at, finalize, messageEvent, nativeType, otherEvent, s, textOf, toolEvent } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'

/**
 * A command cell prints whatever JSON lines its program writes. Read generically: an object naming a
 * tool (`tool` / `tool_name` / `name` with `args` / `input` / `arguments` / `parameters`) is a tool call,
 * one with `role: "assistant"` or a `text` / `message` is a message, anything else is `other`.
 */
export const commandMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = raw.map((e, i) => {
      const time = timeOf(at(e, 'timestamp') ?? at(e, 'time'))
      const tool = s(at(e, 'tool')) ?? s(at(e, 'tool_name')) ?? s(at(e, 'name'))
      const args = at(e, 'args') ?? at(e, 'input') ?? at(e, 'arguments') ?? at(e, 'parameters')
      if (tool && args !== undefined) return toolEvent({ tool, args, rawIndex: i, atMs: time })
      const text = textOf(at(e, 'content')) ?? s(at(e, 'text')) ?? s(at(e, 'message'))
      if (text !== null && (s(at(e, 'role')) === 'assistant' || s(at(e, 'type')) === 'message'))
        return messageEvent(text, i, time)
      return otherEvent(nativeType(e), i, time)
    })
    return finalize(out, ref, commandMapper.version)
  },
}
