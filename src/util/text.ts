/**
 * Rendering untrusted text in messages (terminal, logs, error details). One rule for every message:
 * control characters (C0 but tab and newline, DEL, C1) and invisible format characters (zero-width
 * spaces and joiners, bidirectional overrides, BOM) are removed, and a value is quoted as a short
 * excerpt, never in full.
 */

/** C0 controls except \t and \n, DEL, C1 controls; zero-width, bidi-control and BOM characters. */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g

/** `s` without control and invisible format characters (tab and newline kept). */
export function stripControl(s: string): string {
  return s.replace(UNSAFE, '')
}

/** `s` on one line: `stripControl` and newlines/tabs turned into spaces. */
export function oneLine(s: string): string {
  return stripControl(s).replace(/[\t\n]/g, ' ')
}

/** Longest excerpt of a value quoted in a message, characters. */
export const EXCERPT_CHARS = 60

/**
 * A short, printable rendering of an input value for a message: strings and numbers as JSON (`"two"`,
 * `1e+308`, `NaN`), lists and mappings by kind; longer than `max` characters →
 * the first part and `… (N chars)`. Control characters are removed.
 */
export function excerpt(value: unknown, max = EXCERPT_CHARS): string {
  if (value === null) return 'null'
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return `a list of ${value.length}`
  if (typeof value === 'object') return 'a mapping'
  if (typeof value === 'number') return String(value)
  const text = oneLine(typeof value === 'string' ? JSON.stringify(value) : String(value))
  return clip(text, max)
}

/** `s` cut to at most `max` characters plus `… (N chars)` when longer. */
export function clip(s: string, max = EXCERPT_CHARS): string {
  if (s.length <= max) return s
  return `${s.slice(0, max)}… (${s.length} chars)`
}

/** Longest line of a printed message; longer lines are clipped. */
export const MESSAGE_LINE_CHARS = 400

/**
 * A message as printed to a terminal: control characters removed and each line clipped to
 * {@link MESSAGE_LINE_CHARS}. The CLI front door passes every error and warning through this.
 */
export function printable(message: string): string {
  return stripControl(message)
    .split('\n')
    .map((l) => clip(l, MESSAGE_LINE_CHARS))
    .join('\n')
}
