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

/**
 * mini-swe-agent (`trajectory_format: mini-swe-agent-1…`; the attempt keeps its `messages`): assistant
 * messages carry `extra.actions[{command}]` (bash only), the next user message carries the result
 * (`extra.returncode`, `extra.raw_output`); `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` is the finish.
 * Times are `extra.timestamp` (epoch seconds).
 */
const SUBMIT = /COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT/

export const miniSweAgentMapper: EventMapper = {
  version: 1,
  map(raw, ref): TrajectoryEvent[] {
    const out: DraftEvent[] = []
    let pending: DraftEvent[] = []
    raw.forEach((m, i) => {
      const role = s(at(m, 'role'))
      const time = timeOf(at(m, 'extra', 'timestamp'))
      if (role === 'assistant') {
        const actions = Array.isArray(at(m, 'extra', 'actions'))
          ? (at(m, 'extra', 'actions') as unknown[])
          : []
        pending = []
        for (const a of actions) {
          const command = s(at(a, 'command')) ?? ''
          if (SUBMIT.test(command)) {
            out.push(messageEvent(textOf(at(m, 'content')), i, time, 'finish'))
            continue
          }
          const ev = toolEvent({ tool: 'bash', args: { command }, rawIndex: i, atMs: time })
          out.push(ev)
          pending.push(ev)
        }
        if (actions.length === 0) out.push(messageEvent(textOf(at(m, 'content')), i, time))
        return
      }
      if (
        role === 'user' &&
        pending.length > 0 &&
        (at(m, 'extra', 'returncode') !== undefined || at(m, 'extra', 'raw_output') !== undefined)
      ) {
        const rc = at(m, 'extra', 'returncode')
        for (const ev of pending)
          applyResult(ev, {
            output: s(at(m, 'extra', 'raw_output')) ?? textOf(at(m, 'content')),
            exitCode: typeof rc === 'number' ? rc : null,
          })
        pending = []
        return
      }
      if (role === 'user' || role === 'system') {
        out.push(messageEvent(textOf(at(m, 'content')), i, time))
        return
      }
      out.push(otherEvent(nativeType(m), i, time))
    })
    return finalize(out, ref, miniSweAgentMapper.version)
  },
}
