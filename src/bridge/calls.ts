import { appendFileSync, readFileSync } from 'node:fs'
import { z } from 'zod'
import { canonicalJson, sha256 } from '../util/json.js'

/**
 * One row of calls.jsonl. Argument bodies are never written (they may hold anything a harness sent);
 * `args_sha256` is the sha256 of their canonical JSON, enough to tell identical calls apart.
 */
export const CallRowSchema = z.strictObject({
  /** ISO time the call was answered. */
  at: z.string(),
  tool: z.string(),
  args_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  status: z.enum(['ok', 'error', 'invalid_arguments']),
  /** Reason of a non-ok call (unknown_tool, invalid_arguments, missing_path, timeout, refused…). */
  code: z.string().optional(),
  duration_ms: z.number().nonnegative(),
})
export type CallRow = z.output<typeof CallRowSchema>

/** Longest tool name written: a name a harness made up is cut, never written whole. */
const MAX_NAME = 64

/** The canonical-JSON hash of a call's arguments; a value with no JSON form hashes as its type. */
export function argsHash(args: unknown): string {
  try {
    return sha256(canonicalJson(args ?? null))
  } catch {
    return sha256(`<${typeof args}>`)
  }
}

/** Build a row; `tool` is cut to 64 characters and stripped of control characters. */
export function callRow(
  tool: string,
  args: unknown,
  status: CallRow['status'],
  code: string | undefined,
  durationMs: number,
): CallRow {
  const row: CallRow = {
    at: new Date().toISOString(),
    tool: tool.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, MAX_NAME),
    args_sha256: argsHash(args),
    status,
    duration_ms: Math.round(durationMs * 1000) / 1000,
  }
  if (code !== undefined) row.code = code
  return row
}

/** Appends rows to a calls.jsonl file synchronously (a row is on disk before the reply is sent). */
export class CallLog {
  constructor(readonly file: string) {}
  append(row: CallRow): void {
    appendFileSync(this.file, `${JSON.stringify(row)}\n`)
  }
}

/** Per-status counts of a calls.jsonl file, the `tools` field of an attempt record. */
export interface CallSummary {
  calls: number
  ok: number
  error: number
  invalid_arguments: number
  /** Lines that are not a valid row (counted, never dropped silently). */
  unreadable: number
}

/** Sum a calls.jsonl file; a missing file is zero calls. */
export function summarizeCalls(file: string): CallSummary {
  const out: CallSummary = { calls: 0, ok: 0, error: 0, invalid_arguments: 0, unreadable: 0 }
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out
    throw e
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    let row: ReturnType<typeof CallRowSchema.safeParse>
    try {
      row = CallRowSchema.safeParse(JSON.parse(line))
    } catch {
      out.unreadable++
      continue
    }
    if (!row.success) {
      out.unreadable++
      continue
    }
    out.calls++
    out[row.data.status]++
  }
  return out
}

/**
 * The private record of calls with their arguments, for grading only (`tool_calls` needs the values).
 * It lives in the attempt's scratch state folder, which never leaves the run; calls.jsonl is what the
 * artifact keeps.
 */
export interface TracedCall {
  tool: string
  arguments: unknown
  /**
   * The arguments as the JSON text the harness sent, number literals as written (`5.0` stays `5.0`,
   * which parsed JSON cannot tell from `5`); absent when the transport gave no text.
   */
  arguments_text?: string
  status: CallRow['status']
  code?: string
}

export class TraceLog {
  constructor(readonly file: string) {}
  append(call: TracedCall): void {
    appendFileSync(this.file, `${JSON.stringify(call)}\n`)
  }
}

/** Read a trace file; a missing file is no calls, an unreadable line is skipped and counted. */
export function readTrace(file: string): { calls: TracedCall[]; unreadable: number } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { calls: [], unreadable: 0 }
    throw e
  }
  const calls: TracedCall[] = []
  let unreadable = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const v = JSON.parse(line) as TracedCall
      if (typeof v.tool === 'string' && typeof v.status === 'string') calls.push(v)
      else unreadable++
    } catch {
      unreadable++
    }
  }
  return { calls, unreadable }
}
