import { isHarnessName } from '../manifest/harness-names.js'
import { finalize, nativeType, otherEvent } from './draft.js'
import { MAPPERS } from './registry.js'
import type { AttemptRef, TrajectoryEvent, TrajectoryIssue } from './schema.js'

/** A normalized trajectory with what could not be read about it. */
export interface NormalizedTrajectory {
  harness: string
  mapper_version: number | null
  /** Lines of trajectory.jsonl (every line, readable or not). */
  raw_count: number
  events: TrajectoryEvent[]
  issues: TrajectoryIssue[]
}

/** The raw line a mapper gets for a line that is not JSON: mapped to `other` like any unknown event. */
export const UNREADABLE = 'hw_unreadable_line'

/**
 * `trajectory.jsonl` bytes → normalized events. Never throws: `null` bytes is a missing trajectory;
 * bytes that are not UTF-8 are decoded with replacement characters and flagged `not_utf8`; a line
 * that is not JSON is kept as an `other` event and flagged (`truncated` for a last line cut without its
 * newline, `bad_line` otherwise); a harness without a mapper is read with the generic command mapper and
 * flagged `unknown_version`. Pure.
 */
export function normalizeTrajectory(
  bytes: Uint8Array | null,
  harness: string,
  ref: AttemptRef,
): NormalizedTrajectory {
  if (bytes === null) {
    return {
      harness,
      mapper_version: null,
      raw_count: 0,
      events: [],
      issues: [{ code: 'missing', detail: 'trajectory.jsonl is missing', line: null }],
    }
  }
  const issues: TrajectoryIssue[] = []
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    text = new TextDecoder('utf-8').decode(bytes)
    issues.push({
      code: 'not_utf8',
      detail: 'the file is not valid UTF-8: bad bytes read as U+FFFD',
      line: null,
    })
  }
  const lines = text.split('\n')
  const endsClean = lines.at(-1) === ''
  if (endsClean) lines.pop()
  const raw: unknown[] = []
  lines.forEach((line, i) => {
    if (line.trim() === '') {
      raw.push({ type: UNREADABLE, reason: 'blank line' })
      return
    }
    try {
      raw.push(JSON.parse(line))
    } catch {
      const last = i === lines.length - 1 && !endsClean
      issues.push({
        code: last ? 'truncated' : 'bad_line',
        detail: last ? 'the last line is cut off (no newline, not JSON)' : 'the line is not JSON',
        line: i + 1,
      })
      raw.push({ type: UNREADABLE, reason: last ? 'truncated' : 'not JSON' })
    }
  })
  if (raw.length === 0) issues.push({ code: 'empty', detail: 'trajectory.jsonl holds no events', line: null })
  let mapper = isHarnessName(harness) ? MAPPERS[harness] : null
  if (!mapper) {
    issues.push({
      code: 'unknown_version',
      detail: `no mapper for harness "${harness}": read generically`,
      line: null,
    })
    mapper = MAPPERS.command
  }
  let events: TrajectoryEvent[]
  try {
    issues.push(...(mapper.check?.(raw) ?? []))
    events = mapper.map(raw, ref)
  } catch (e) {
    issues.push({
      code: 'parse_error',
      detail: `mapper failed: ${String((e as Error)?.message ?? e).slice(0, 300)}`,
      line: null,
    })
    events = finalize(
      raw.map((r, i) => otherEvent(nativeType(r), i, null)),
      ref,
      mapper.version,
    )
  }
  return { harness, mapper_version: mapper.version, raw_count: raw.length, events, issues }
}
