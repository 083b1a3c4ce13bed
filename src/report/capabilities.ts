import type { Comparison } from '../records/comparison.js'
import { escapeMarkdown } from './escape.js'

/** Most notes about capabilities.json files shown in a header (the rest are in comparison.json). */
const MAX_NOTES = 3

/**
 * The header rows of the capability differences, as [label, plain text] pairs: one per cell that
 * differs from the baseline, one per cell changed since the previous run, then notes on files that
 * were absent or ignored. The text comes from artifacts: the caller escapes it.
 */
export function capabilityRows(c: Comparison): Array<[string, string]> {
  const caps = c.capabilities
  if (!caps) return []
  const rows: Array<[string, string]> = []
  for (const d of caps.differences) rows.push(['Capabilities vs baseline', d])
  for (const d of caps.since_previous ?? []) rows.push(['Capabilities since the previous run', d])
  if (caps.cells.length > 0 && caps.differences.length === 0 && (caps.since_previous ?? []).length === 0)
    rows.push(['Capabilities', 'no difference seen between cells'])
  for (const n of caps.notes.slice(0, MAX_NOTES)) rows.push(['Capability note', n])
  if (caps.notes.length > MAX_NOTES)
    rows.push([
      'Capability note',
      `… ${caps.notes.length - MAX_NOTES} more in comparison.json capabilities.notes`,
    ])
  return rows
}

/** The same rows as Markdown table rows, every text through the one escaping function. */
export function capabilityMarkdownRows(c: Comparison): string[] {
  return capabilityRows(c).map(([k, v]) => `| ${k} | ${escapeMarkdown(v)} |`)
}
