import { z } from 'zod'

export { comparisonKey, selfKey } from '../detect/keys.js'

/**
 * Hidden, versioned markers that let Harness Watch find its own issues and comments again.
 * The identity marker is always the FIRST line of a body we write:
 *   `<!-- harness-watch:v1 kind=tracking key=<experiment>/<baseline>-vs-<treatment> -->`
 *   `<!-- harness-watch:v1 kind=pr-report key=<experiment> -->`
 *   `<!-- harness-watch:v1 kind=health key=<experiment> -->` (the evaluation-health notice)
 * Only the first line is read, so a marker quoted further down a body (or forged in quoted text,
 * which escape.ts neutralises anyway) is never taken for ours. Keys are built from manifest ids
 * (letters, digits, `.`, `_`, `-`) and `/`, so they never contain spaces or `--`.
 *
 * Tracking issues and health notices also keep machine-readable state on the SECOND line:
 *   `<!-- harness-watch:v1 state=<base64url of JSON> -->`
 * (base64url so that no value can end the comment early).
 */
export const MARKER_VERSION = 'v1'
export type MarkerKind = 'tracking' | 'pr-report' | 'health'

const KEY = /^[A-Za-z0-9._/-]+$/
const IDENTITY = /^<!-- harness-watch:v1 kind=(tracking|pr-report|health) key=([A-Za-z0-9._/-]+) -->$/
const STATE = /^<!-- harness-watch:v1 state=([A-Za-z0-9_-]*) -->$/

/** The identity marker line. Throws on a key that could break the comment (not a manifest id path). */
export function identityMarker(kind: MarkerKind, key: string): string {
  if (!KEY.test(key) || key.includes('--')) throw new Error(`invalid marker key "${key}"`)
  return `<!-- harness-watch:${MARKER_VERSION} kind=${kind} key=${key} -->`
}

/** Parse the identity marker on the first line of a body; null when the body is not ours. */
export function parseIdentity(body: string | null | undefined): { kind: MarkerKind; key: string } | null {
  if (!body) return null
  const first = body.split('\n', 1)[0]?.replace(/\r$/, '') ?? ''
  const m = IDENTITY.exec(first)
  return m ? { kind: m[1] as MarkerKind, key: m[2] as string } : null
}

/** State of a tracking issue, kept in its body so that no other store is needed. */
export const TrackingStateSchema = z.object({
  /** Consecutive runs without a breach for this key since the last confirmed one. */
  clean_runs: z.number().int().nonnegative(),
  /** Confirmed breaches recorded on this issue. */
  confirmed_breaches: z.number().int().nonnegative(),
  last_status: z.string(),
  /** Run that last changed the issue (URL or id), for the reader. */
  last_run: z.string().nullable(),
  recovered: z.boolean(),
})
export type TrackingState = z.infer<typeof TrackingStateSchema>

/** State of an evaluation-health notice, kept in its body like a tracking issue's. */
export const NoticeStateSchema = z.object({
  /** Runs with evaluation-health errors recorded on this notice. */
  unhealthy_runs: z.number().int().nonnegative(),
  last_status: z.enum(['unhealthy', 'clean']),
  /** Run that last changed the notice (URL or id), for the reader. */
  last_run: z.string().nullable(),
  recovered: z.boolean(),
})
export type NoticeState = z.infer<typeof NoticeStateSchema>

/** The state marker line (second line of a tracking issue or health notice body). */
export function stateMarker(state: TrackingState | NoticeState): string {
  const b64 = Buffer.from(JSON.stringify(state), 'utf8').toString('base64url')
  return `<!-- harness-watch:${MARKER_VERSION} state=${b64} -->`
}

/** Read a tracking issue's state marker from the second line; null when absent or unreadable (treated as new). */
export function parseState(body: string | null | undefined): TrackingState | null {
  return readState(body, TrackingStateSchema)
}

/** Read a health notice's state marker from the second line; null when absent or unreadable. */
export function parseNoticeState(body: string | null | undefined): NoticeState | null {
  return readState(body, NoticeStateSchema)
}

function readState<T>(body: string | null | undefined, schema: z.ZodType<T>): T | null {
  if (!body) return null
  const second = body.split('\n', 2)[1]?.replace(/\r$/, '') ?? ''
  const m = STATE.exec(second)
  if (!m) return null
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(m[1] ?? '', 'base64url').toString('utf8')))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}
