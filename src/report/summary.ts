import { JOB_SUMMARY_LIMIT, truncateUtf8, utf8Length } from './budget.js'

/**
 * The job summary: the budgeted report.md (≤ 65,536 characters, so ≤ 256 KiB), checked against the
 * 1 MiB step-summary limit in bytes with room for what the runner adds; cut at a character boundary
 * with a note in the unlikely case it is over.
 */
export function jobSummary(markdown: string, limitBytes = JOB_SUMMARY_LIMIT - 4096): string {
  if (utf8Length(markdown) <= limitBytes) return markdown
  const note = '\n\n> Job summary cut at the 1 MiB limit; see report.md in the artifact.\n'
  return `${truncateUtf8(markdown, limitBytes - utf8Length(note))}${note}`
}
