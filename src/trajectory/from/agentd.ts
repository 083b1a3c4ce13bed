import { timeOf } from '../classify.js'
import { at, finalize, messageEvent, nativeType, otherEvent, s, toolEvent } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'

/**
 * agentd: its JSON-lines telemetry from stderr (src/harnesses/agentd.ts keeps every event). An event
 * naming a tool (`tool` / `tool_name` / `name` with `args` / `arguments` / `input`) is a tool call;
 * `loop.final` is the finish, with its `answer` / `output` / `text`; everything else is `other` under its
 * event name (`event` / `type`). The event format follows agentd's documented command line, not a
 * recorded run (no agentd binary is published to a registry reached here).
 */
export const agentdMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = raw.map((e, i) => {
      const time = timeOf(at(e, 'timestamp') ?? at(e, 'ts') ?? at(e, 'time'))
      const name = s(at(e, 'event')) ?? nativeType(e)
      if (name === 'loop.final') {
        const text = s(at(e, 'answer')) ?? s(at(e, 'output')) ?? s(at(e, 'text'))
        return messageEvent(text, i, time, 'finish')
      }
      const tool = s(at(e, 'tool')) ?? s(at(e, 'tool_name'))
      const args = at(e, 'args') ?? at(e, 'arguments') ?? at(e, 'input')
      if (tool && args !== undefined) return toolEvent({ tool, args, rawIndex: i, atMs: time })
      return otherEvent(name, i, time)
    })
    return finalize(out, ref, agentdMapper.version)
  },
}
