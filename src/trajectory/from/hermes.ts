import { at, finalize, messageEvent, nativeType, otherEvent, s } from '../draft.js'
import type { DraftEvent, EventMapper, TrajectoryEvent } from '../schema.js'

/**
 * Hermes: the attempt keeps its usage report (`type: "usage"`, kept as `other`) and its final answer
 * (`type: "final"` {text}); Hermes writes no per-tool events the run can read, so its timelines hold
 * only the finish.
 */
export const hermesMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = raw.map((e, i) =>
      nativeType(e) === 'final'
        ? messageEvent(s(at(e, 'text')), i, null, 'finish')
        : otherEvent(nativeType(e), i, null),
    )
    return finalize(out, ref, hermesMapper.version)
  },
}
