import {
  clip,
  commandOfArgs,
  kindOfCommand,
  kindOfToolName,
  outputDigest,
  pathsOfArgs,
  pathsOfCommand,
} from './classify.js'
import { type AttemptRef, attemptKey, type DraftEvent, type TrajectoryEvent } from './schema.js'

/**
 * Building blocks shared by the mappers: a tool call becomes one event (kind from its name, refined by
 * its command for shell tools), its result fills in the output, exit status and success of that same
 * event (matched by the harness's call id). Everything here is pure.
 */
export interface ToolCall {
  tool: string
  args: unknown
  rawIndex: number
  atMs: number | null
  /** A command the harness gives apart from the arguments (Codex `command_execution`). */
  command?: string | null
}

export function toolEvent(c: ToolCall): DraftEvent {
  const command = c.command ?? commandOfArgs(c.args)
  const byName = kindOfToolName(c.tool)
  let kind = byName ?? 'other'
  let confidence: DraftEvent['confidence'] = byName ? 'high' : 'low'
  const paths = pathsOfArgs(c.args)
  if (command !== null && (byName === 'run' || byName === null)) {
    kind = kindOfCommand(command)
    confidence = byName === 'run' && kind === 'run' ? 'high' : 'medium'
    if (kind === 'read' || kind === 'edit') paths.push(...pathsOfCommand(command))
  }
  return {
    kind,
    tool: c.tool,
    paths: [...new Set(paths)],
    command,
    exit_code: null,
    ok: null,
    output_bytes: null,
    output_sha256: null,
    text: null,
    raw_index: c.rawIndex,
    confidence,
    at_ms: c.atMs,
  }
}

export interface ToolResult {
  output: string | null
  ok?: boolean | null
  exitCode?: number | null
}

/** Fill a tool event's result fields; an exit code ≠ 0 makes `ok` false when the harness said nothing. */
export function applyResult(e: DraftEvent, r: ToolResult): void {
  const d = outputDigest(r.output)
  e.output_bytes = d.bytes
  e.output_sha256 = d.sha
  if (typeof r.exitCode === 'number' && Number.isInteger(r.exitCode)) e.exit_code = r.exitCode
  e.ok = r.ok ?? (e.exit_code !== null ? e.exit_code === 0 : null)
}

export function messageEvent(
  text: string | null,
  rawIndex: number,
  atMs: number | null,
  kind: 'message' | 'finish' = 'message',
): DraftEvent {
  return {
    kind,
    tool: null,
    paths: [],
    command: null,
    exit_code: null,
    ok: null,
    output_bytes: null,
    output_sha256: null,
    text: clip(text),
    raw_index: rawIndex,
    confidence: 'high',
    at_ms: atMs,
  }
}

/** A native event the mapper keeps without reading it: `other`, named by its native type. */
export function otherEvent(type: string, rawIndex: number, atMs: number | null): DraftEvent {
  return { ...messageEvent(null, rawIndex, atMs), kind: 'other', tool: type.slice(0, 200), confidence: 'low' }
}

/**
 * Stamp ids, index, time since attempt start and the mapping version. An event without its own time
 * keeps `t_ms: null`. Times before the attempt start (clock skew) are kept as negative offsets.
 */
export function finalize(drafts: DraftEvent[], at: AttemptRef, version: number): TrajectoryEvent[] {
  const key = attemptKey(at)
  return drafts.map((d, i) => {
    const { at_ms, ...rest } = d
    return {
      ...rest,
      event_id: `${key}#${i}`,
      index: i,
      t_ms: at_ms !== null && at.startedAtMs !== null ? Math.round(at_ms - at.startedAtMs) : null,
      mapping_version: version,
    }
  })
}

/** A record's string field, or null. */
export function s(v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

/** `obj[k1][k2]…` when each step is an object, else undefined. */
export function at(obj: unknown, ...keys: (string | number)[]): unknown {
  let cur: unknown = obj
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined
    cur = (cur as Record<string | number, unknown>)[k]
  }
  return cur
}

/** Text of a content value: a string, or the `text` of its parts. */
export function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    const parts = content.map((p) => (typeof p === 'string' ? p : s(at(p, 'text')))).filter((x) => x !== null)
    return parts.length > 0 ? parts.join('\n') : null
  }
  return null
}

export function nativeType(e: unknown): string {
  return s(at(e, 'type')) ?? s(at(e, 'kind')) ?? s(at(e, 'role')) ?? (Array.isArray(e) ? 'array' : typeof e)
}
