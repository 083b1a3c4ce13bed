import { AtifTrajectorySchema } from '../atif-schema.js'
import { applyResult, finalize, messageEvent, otherEvent, toolEvent } from '../draft.js'
import type { NormalizedTrajectory } from '../read.js'
import type { AttemptRef, DraftEvent, TrajectoryIssue } from '../schema.js'

export const ATIF_MAPPING_VERSION = 1

/**
 * An ATIF document (Harbor's `agent/trajectory.json`) → normalized events: every tool call of an agent
 * step is a tool event (its observation fills the result), an agent message a message event, system
 * and user steps are kept as `other`. A document that breaks ATIF's field rules is still read as far
 * as its steps go, with the problem listed. Never throws.
 */
export function normalizeAtif(text: string | null, harness: string, ref: AttemptRef): NormalizedTrajectory {
  const base = { harness, mapper_version: ATIF_MAPPING_VERSION, raw_count: 0 }
  if (text === null)
    return {
      ...base,
      mapper_version: null,
      events: [],
      issues: [issue('missing', 'trajectory.json is missing')],
    }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return { ...base, events: [], issues: [issue('truncated', `not valid JSON: ${(e as Error).message}`)] }
  }
  const issues: TrajectoryIssue[] = []
  const parsed = AtifTrajectorySchema.safeParse(json)
  if (!parsed.success) {
    const i = parsed.error.issues[0]
    issues.push(issue('parse_error', `not valid ATIF v1.7: ${i?.path.join('.') || '(root)'}: ${i?.message}`))
  }
  const steps = Array.isArray((json as { steps?: unknown })?.steps)
    ? ((json as { steps: unknown[] }).steps ?? [])
    : []
  const drafts: DraftEvent[] = []
  steps.forEach((raw, i) => {
    const s = (raw ?? {}) as Record<string, unknown>
    const at =
      typeof s.timestamp === 'string' && Number.isFinite(Date.parse(s.timestamp))
        ? Date.parse(s.timestamp)
        : null
    if (s.source !== 'agent') {
      drafts.push(otherEvent(`atif_${String(s.source ?? 'step')}`, i, at))
      return
    }
    const msg = typeof s.message === 'string' ? s.message : null
    if (msg && msg.trim() !== '') drafts.push(messageEvent(msg, i, at))
    const results = new Map<string, unknown>()
    const obs = (s.observation as { results?: unknown[] } | undefined)?.results ?? []
    for (const r of obs) {
      const o = (r ?? {}) as { source_call_id?: unknown; content?: unknown }
      if (typeof o.source_call_id === 'string') results.set(o.source_call_id, o.content)
    }
    for (const c of Array.isArray(s.tool_calls) ? s.tool_calls : []) {
      const call = (c ?? {}) as { tool_call_id?: unknown; function_name?: unknown; arguments?: unknown }
      const e = toolEvent({
        tool: String(call.function_name ?? 'unknown'),
        args: call.arguments ?? {},
        rawIndex: i,
        atMs: at,
      })
      const id = typeof call.tool_call_id === 'string' ? call.tool_call_id : null
      if (id !== null && results.has(id)) {
        const content = results.get(id)
        applyResult(e, {
          output: typeof content === 'string' ? content : content == null ? null : JSON.stringify(content),
        })
      }
      drafts.push(e)
    }
  })
  if (steps.length === 0) issues.push(issue('empty', 'the trajectory holds no steps'))
  return { ...base, raw_count: steps.length, events: finalize(drafts, ref, ATIF_MAPPING_VERSION), issues }
}

function issue(code: TrajectoryIssue['code'], detail: string): TrajectoryIssue {
  return { code, detail, line: null }
}
