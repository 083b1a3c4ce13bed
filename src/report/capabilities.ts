import type { Comparison } from '../records/comparison.js'
import { escapeHtml, escapeMarkdown } from './escape.js'

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

const show = (v: unknown): string =>
  v === null
    ? 'unknown'
    : Array.isArray(v)
      ? v.length === 0
        ? 'none'
        : v.join(', ')
      : typeof v === 'boolean'
        ? v
          ? 'on'
          : 'off'
        : String(v)

/**
 * report.html's "Capabilities" section: one column per cell, one row per capability with where it was
 * read (or why it is unknown), then the tools the proxy saw offered. Every text through `escapeHtml`.
 */
export function capabilityTableHtml(c: Comparison): string {
  const caps = c.capabilities
  if (!caps || caps.cells.length === 0) return ''
  const head = `<tr><th>Capability</th>${caps.cells.map((x) => `<th>${escapeHtml(`${x.cell_id} (${x.harness} ${x.harness_version ?? 'version unknown'})`)}</th>`).join('')}</tr>`
  const first = caps.cells[0]
  const names = first ? (Object.keys(first.configured) as (keyof typeof first.configured)[]) : []
  const rows = names.map(
    (name) =>
      `<tr><td>${escapeHtml(name.replace(/_/g, ' '))}</td>${caps.cells
        .map(
          (x) =>
            `<td>${escapeHtml(show(x.configured[name].value))}<br><small>${escapeHtml(x.configured[name].from)}</small></td>`,
        )
        .join('')}</tr>`,
  )
  const seen = (x: (typeof caps.cells)[number]) =>
    x.observed === null
      ? 'unknown (no proxy request recorded)'
      : `${x.observed.tools.map((t) => t.name).join(', ') || 'none'}${x.observed.tools_named ? '' : ' (not every request named its tools)'} — ${x.observed.requests_with_tools} of ${x.observed.requests} requests offered tools`
  rows.push(
    `<tr><td>tools the proxy saw</td>${caps.cells.map((x) => `<td>${escapeHtml(seen(x))}</td>`).join('')}</tr>`,
  )
  return `<section><h2>Capabilities</h2><table>${head}${rows.join('')}</table></section>`
}
