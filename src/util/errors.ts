import { ZodError } from 'zod'
import { quotePath } from './paths.js'
import { issuesSummary } from './zod-message.js'

/**
 * The one error type for mistakes a person can fix (bad manifest, missing file, wrong flag).
 * `code` is stable and machine-readable; `where` points at the file (and line:column when known);
 * `help` says what to do. Front doors (CLI, action) print `format()` and never a stack trace for these.
 */
export class HwError extends Error {
  readonly code: string
  readonly where: string | undefined
  readonly help: string | undefined
  readonly details: string[]

  constructor(
    code: string,
    message: string,
    opts: { where?: string; help?: string; details?: string[]; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause })
    this.name = 'HwError'
    this.code = code
    this.where = opts.where
    this.help = opts.help
    this.details = opts.details ?? []
  }

  /** Human-readable, multi-line: `<where> <message>`, then one line per detail, then the help. */
  format(): string {
    // A location with white space (a path like "/tmp/my runs/x.yml") is quoted, so it reads as one.
    const where =
      this.where && /\s/.test(this.where) && !this.where.startsWith('"') ? quotePath(this.where) : this.where
    const head = where ? `${where} ${this.message}` : this.message
    const lines = [head, ...this.details.map((d) => `  ${d}`)]
    if (this.help) lines.push(`  help: ${this.help}`)
    return lines.join('\n')
  }
}

/** Exit codes shared by the CLI commands. */
export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const

export function isHwError(e: unknown): e is HwError {
  return e instanceof HwError
}

/**
 * Message of any thrown value, for the few places that must not throw. A schema failure (zod) reads as
 * a sentence naming the fields and rules, never its JSON dump.
 */
export function messageOf(e: unknown): string {
  if (e instanceof HwError) return e.format()
  if (e instanceof ZodError) return `a record does not match its schema: ${issuesSummary(e, undefined)}`
  if (e instanceof Error) return e.message
  return String(e)
}
