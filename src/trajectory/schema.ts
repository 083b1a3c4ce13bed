import { z } from 'zod'

/**
 * The normalized trajectory: one event list per attempt, the same shape for every harness.
 *
 * House rules: an event never disappears — a native event the mapper does not understand becomes
 * `kind: "other"` with its raw type in `tool`; the raw native event is kept beside the normalized one
 * (`raw_index` points into the attempt's `trajectory.jsonl`). `t_ms` is null when the harness wrote no
 * time for the event (never a guessed zero). `confidence` says how sure the mapping is: `high` for a
 * structured tool call with a known name, `medium` for a kind inferred from a command line, `low` for an
 * event kept as `other`. Versioning: an added optional field keeps `TRAJECTORY_SCHEMA_VERSION`; anything
 * else bumps it.
 */
export const TRAJECTORY_SCHEMA_VERSION = 1

export const EVENT_KINDS = [
  'read',
  'search',
  'edit',
  'test',
  'run',
  'browse',
  'delegate',
  'plan',
  'message',
  'finish',
  'other',
] as const
export const EventKindSchema = z.enum(EVENT_KINDS)
export type EventKind = z.infer<typeof EventKindSchema>

/** Which attempt an event belongs to; `key` is `<cell>/<instance>/<trial>-<attempt>`. */
export interface AttemptRef {
  cell: string
  instance: string
  trial: number
  attempt: number
  /** Attempt start (UTC ms since epoch) from the attempt record; null when unknown. */
  startedAtMs: number | null
}

export function attemptKey(at: Pick<AttemptRef, 'cell' | 'instance' | 'trial' | 'attempt'>): string {
  return `${at.cell}/${at.instance}/${at.trial}-${at.attempt}`
}

export const TrajectoryEventSchema = z.strictObject({
  event_id: z
    .string()
    .describe('<attempt key>#<index>, stable for a given trajectory.jsonl and mapper version'),
  index: z.number().int().nonnegative(),
  t_ms: z.number().nullable().describe('ms since the attempt started; null when the harness wrote no time'),
  kind: EventKindSchema,
  tool: z.string().nullable().describe('the tool (or native event type for `other`) as the harness named it'),
  paths: z.array(z.string()).describe('files the event touches, as the harness wrote them'),
  command: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  ok: z.boolean().nullable().describe('the tool reported success (true) or an error (false); null unknown'),
  output_bytes: z.number().int().nonnegative().nullable(),
  output_sha256: z.string().nullable().describe('sha256 of the tool output text; null when none was kept'),
  text: z.string().nullable().describe('a message or finish text, at most 500 characters'),
  raw_index: z
    .number()
    .int()
    .nonnegative()
    .describe('line of the native event in trajectory.jsonl (0-based)'),
  mapping_version: z.number().int().positive(),
  confidence: z.enum(['high', 'medium', 'low']),
})
export type TrajectoryEvent = z.infer<typeof TrajectoryEventSchema>

/** An event before ids, time offset and mapping version are stamped (what a mapper's helpers build). */
export type DraftEvent = Omit<TrajectoryEvent, 'event_id' | 'index' | 't_ms' | 'mapping_version'> & {
  /** Absolute time of the native event (UTC ms), when it carries one. */
  at_ms: number | null
}

/**
 * One pure mapper per harness: the raw events of `trajectory.jsonl` (in file order) → normalized
 * events. Never throws on odd input: what it cannot read becomes `other`.
 */
export interface EventMapper {
  /** Bumped whenever the mapping of an existing native event changes. */
  version: number
  map(raw: unknown[], at: AttemptRef): TrajectoryEvent[]
  /** Format problems the mapper can see (an unknown format version); the events are mapped anyway. */
  check?(raw: unknown[]): TrajectoryIssue[]
}

/** Why a trajectory could not be read as a whole (its readable events are still mapped). */
export const TrajectoryIssueSchema = z.strictObject({
  code: z.enum(['missing', 'not_utf8', 'truncated', 'bad_line', 'unknown_version', 'parse_error', 'empty']),
  detail: z.string(),
  line: z.number().int().positive().nullable(),
})
export type TrajectoryIssue = z.infer<typeof TrajectoryIssueSchema>
