/**
 * Size budgets for Markdown we publish (F13): GitHub rejects issue and comment bodies over 65,536
 * characters (422), and a job summary over 1 MiB is not shown. Bodies are built from sections; when
 * they do not fit, whole sections are dropped from the bottom (a table section may keep its first rows)
 * and a pointer to the full report takes their place. Tables and `<details>` are always closed, and a
 * cut never splits a character (lengths count UTF-16 code units, an upper bound of GitHub's count).
 */

/** GitHub's maximum issue / comment body (characters). */
export const GITHUB_BODY_LIMIT = 65_536
/** GitHub's maximum job summary per step (bytes). */
export const JOB_SUMMARY_LIMIT = 1024 * 1024

/** A block of Markdown. A `rows` section is a table (or list) that may be shortened to its first rows. */
export type Section =
  | { id: string; text: string; keep?: boolean }
  | {
      id: string
      /** Text before the rows (heading, `<details><summary>`, table header). */
      head: string
      rows: string[]
      /** Text after the rows (`</details>`), always written when any of the section is. */
      tail: string
      keep?: boolean
    }

export interface FitOptions {
  /** Maximum length in UTF-16 code units (default 65,536 minus `reserve`). */
  limit?: number
  /** Room left for what a publisher adds (a hidden marker, a footer). Default 0. */
  reserve?: number
  /** Line saying where the full report is, used when something is left out. */
  pointer: (omitted: string[]) => string
  /** Sections written after everything else, never dropped (e.g. the scope statement). */
  footer?: string
}

function sectionText(s: Section): string {
  return 'text' in s ? s.text : `${s.head}${s.rows.join('')}${s.tail}`
}

/**
 * Join sections into one body of at most `limit − reserve` UTF-16 code units. Sections are separated
 * by a blank line. `keep` sections are written even if that needs rows of other sections dropped;
 * rows of a table are cut at row boundaries with a "… N more rows" line after the closed table.
 * Returns the body and the ids of omitted or shortened sections.
 */
export function fitSections(sections: Section[], opts: FitOptions): { text: string; omitted: string[] } {
  const limit = (opts.limit ?? GITHUB_BODY_LIMIT) - (opts.reserve ?? 0)
  const footer = opts.footer ? `\n${opts.footer}` : ''
  const full = sections.map(sectionText)
  const whole = `${full.join('\n')}${footer}`
  if (whole.length <= limit) return { text: whole, omitted: [] }

  // Room for the pointer: measured with every section named, the worst case.
  const pointerRoom = opts.pointer(sections.map((s) => s.id)).length + 2
  let room = limit - footer.length - pointerRoom
  // Sections to keep whatever happens are paid for first.
  const kept = new Set<number>()
  sections.forEach((s, i) => {
    if (s.keep) {
      kept.add(i)
      room -= full[i]!.length + 1
    }
  })
  const parts: string[] = []
  const omitted: string[] = []
  let stopped = false
  sections.forEach((s, i) => {
    if (kept.has(i)) {
      parts.push(full[i]!)
      return
    }
    if (stopped) {
      omitted.push(s.id)
      return
    }
    const text = full[i]!
    if (text.length + 1 <= room) {
      parts.push(text)
      room -= text.length + 1
      return
    }
    stopped = true
    omitted.push(s.id)
    if ('rows' in s) {
      const partial = fitRows(s, room - 1)
      if (partial !== null) {
        parts.push(partial)
        room -= partial.length + 1
      }
    }
  })
  let text = `${parts.join('\n')}\n${opts.pointer(omitted)}\n${footer}`
  if (text.length > limit) text = truncateUtf16(text, limit)
  return { text, omitted }
}

/** A table section shortened to the rows that fit in `room`, with its tail and a count line; null if none fit. */
function fitRows(s: Extract<Section, { rows: string[] }>, room: number): string | null {
  const note = (left: number) => `\n… ${left} more row${left === 1 ? '' : 's'} in the full report.\n`
  let used = s.head.length + s.tail.length + note(s.rows.length).length
  if (used > room) return null
  let n = 0
  for (const row of s.rows) {
    if (used + row.length > room) break
    used += row.length
    n++
  }
  if (n === 0) return null
  // The tail closes the table / <details> before the count line, so nothing is left open.
  return `${s.head}${s.rows.slice(0, n).join('')}${s.tail}${note(s.rows.length - n)}`
}

/** The longest prefix of `s` with at most `max` UTF-16 code units that does not split a surrogate pair. */
export function truncateUtf16(s: string, max: number): string {
  if (s.length <= max) return s
  let end = Math.max(0, max)
  const code = s.charCodeAt(end - 1)
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--
  return s.slice(0, end)
}

/** UTF-8 byte length of `s`. */
export function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8')
}

/** The longest prefix of `s` whose UTF-8 encoding has at most `maxBytes` bytes (whole characters only). */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (utf8Length(s) <= maxBytes) return s
  let bytes = 0
  let i = 0
  for (const ch of s) {
    const b = utf8Length(ch)
    if (bytes + b > maxBytes) break
    bytes += b
    i += ch.length
  }
  return s.slice(0, i)
}
