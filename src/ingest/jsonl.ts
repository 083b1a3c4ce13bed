import type { z } from 'zod'
import { jsonErrorPosition, jsonErrorReason } from '../util/json-text.js'
import { sourceLocator } from '../util/source-locate.js'
import { issuesSummary } from '../util/zod-message.js'
import { fastCheck } from './fast-check.js'

/** A problem with one input file or one of its lines; `line` is 1-based, null for the whole file. */
export interface InputError {
  file: string
  line: number | null
  message: string
  /** The line's JSON when it parsed but did not match the schema (to attribute it to a block). */
  json?: unknown
}

/** A validated row and the line it came from. */
export interface Numbered<T> {
  value: T
  line: number
}

/**
 * Parse JSON Lines text and validate each non-blank line against `schema`. Never throws: a line that
 * is not JSON or does not match becomes an InputError `{file, line, message}` and is left out of
 * `rows`. `file` is only used in messages. A final line without a newline is read like any other.
 */
export function parseJsonl<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): { rows: Numbered<z.output<S>>[]; errors: InputError[] } {
  const rows: Numbered<z.output<S>>[] = []
  const errors = forEachJsonl(text, file, schema, (value, line) => {
    rows.push({ value, line })
  })
  return { rows, errors }
}

/**
 * parseJsonl without keeping the rows: `onRow(value, line)` for each valid row (for large files whose
 * rows are only counted). Returns the errors.
 */
export function forEachJsonl<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  onRow: (value: z.output<S>, line: number) => void,
): InputError[] {
  const errors: InputError[] = []
  const check = fastCheck(schema)
  let start = 0
  let line = 0
  while (start <= text.length) {
    let end = text.indexOf('\n', start)
    if (end === -1) end = text.length
    line++
    const raw = text.slice(start, end)
    start = end + 1
    if (raw.trim() === '') {
      if (end === text.length) break
      continue
    }
    let json: unknown
    try {
      json = JSON.parse(raw)
    } catch (e) {
      const at = jsonErrorPosition(raw, e)
      errors.push({ file, line, message: `not valid JSON at column ${at.col}: ${jsonErrorReason(e)}` })
      continue
    }
    // Rows the compiled check accepts are exactly what zod would return; zod judges the rest.
    if (check?.(json)) {
      onRow(json as z.output<S>, line)
      continue
    }
    const parsed = schema.safeParse(json)
    if (parsed.success) onRow(parsed.data, line)
    else errors.push({ file, line, message: zodMessage(parsed.error, json), json })
  }
  return errors
}

/** Parse one JSON document and validate it; errors as for parseJsonl, with line = null or the JSON error line. */
export function parseJsonFile<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
): { value: z.output<S> | null; errors: InputError[] } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    const at = jsonErrorPosition(text, e)
    return {
      value: null,
      errors: [{ file, line: at.line, message: `not valid JSON at column ${at.col}: ${jsonErrorReason(e)}` }],
    }
  }
  // A value the compiled check accepts is exactly what zod would return, as in forEachJsonl.
  if (fastCheck(schema)?.(json)) return { value: json as z.output<S>, errors: [] }
  const parsed = schema.safeParse(json)
  if (parsed.success) return { value: parsed.data, errors: [] }
  // The first problem's line in the text (a pretty-printed file has one field a line).
  const first = parsed.error.issues[0]
  const at = first ? sourceLocator(text)?.(first.path) : undefined
  return { value: null, errors: [{ file, line: at?.line ?? null, message: zodMessage(parsed.error, json) }] }
}

/**
 * The first few zod issues as `field.path: rule (got <excerpt>)`, joined; `json` is the value that
 * was validated (for the excerpts).
 */
export function zodMessage(error: z.ZodError, json?: unknown): string {
  return `does not match the schema: ${issuesSummary(error, json)}`
}
