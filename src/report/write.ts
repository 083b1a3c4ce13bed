import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Comparison } from '../records/comparison.js'
import type { DecisionView } from './decision.js'
import { encodePathSegments } from './escape.js'
import type { HistoryLink } from './history-link.js'
import { renderHtmlReport } from './html.js'
import { renderMarkdownReport } from './markdown.js'

export interface ReportFiles {
  reportPath: string
  htmlPath: string
  /** report.md's text (already size-budgeted). */
  markdown: string
}

/**
 * The experiment's weekly history page as given to a command: an http(s) URL (with, in the workflow,
 * the name of the artifact of that run the page is uploaded in), or a file path — absolute or from
 * the working directory — that each report links relative to its own folder.
 */
export interface HistorySource {
  target: string
  artifact?: string | null
}

/** The history link as seen from a report written into `out`. */
export function historyLinkFrom(source: HistorySource, out: string): HistoryLink {
  if (/^https?:\/\//i.test(source.target)) return { href: source.target, artifact: source.artifact ?? null }
  const file = path.resolve(source.target)
  const href = encodePathSegments(path.relative(path.resolve(out), file).split(path.sep))
  return { href, pending: !existsSync(file) }
}

/** report.md and report.html of a comparison, rendered and not yet written. */
export interface RenderedReports extends ReportFiles {
  html: string
}

/**
 * Render report.md and report.html for `c`, to be written into `out` (pure: nothing is written), with
 * the "Decision" section when a decision is given (the detection stage re-renders them once it has
 * decided), and the line linking the weekly history when one is given.
 */
export function renderReportFiles(
  c: Comparison,
  out: string,
  decision: DecisionView | null = null,
  artifactsHref?: string,
  history?: HistorySource | null,
): RenderedReports {
  const link = history ? historyLinkFrom(history, out) : null
  // A report written again (detect, confirm) links ATIF files as the first one did.
  artifactsHref ??= c.artifacts_href
  const markdown = renderMarkdownReport(c, {
    fullReport: 'report.html',
    decision,
    artifactsHref,
    history: link,
  })
  const html = renderHtmlReport(c, { decision, artifactsHref, history: link })
  return { reportPath: path.join(out, 'report.md'), htmlPath: path.join(out, 'report.html'), markdown, html }
}

/** Write rendered reports (their folder is created if needed). */
export async function writeRenderedReports(r: RenderedReports): Promise<ReportFiles> {
  await mkdir(path.dirname(r.reportPath), { recursive: true })
  await writeFile(r.reportPath, r.markdown)
  await writeFile(r.htmlPath, r.html)
  return { reportPath: r.reportPath, htmlPath: r.htmlPath, markdown: r.markdown }
}

/**
 * Write report.md and report.html for `c` into `out` (created if needed): renderReportFiles, then
 * writeRenderedReports.
 */
export async function writeReportFiles(
  c: Comparison,
  out: string,
  decision: DecisionView | null = null,
  artifactsHref?: string,
  history?: HistorySource | null,
): Promise<ReportFiles> {
  return writeRenderedReports(renderReportFiles(c, out, decision, artifactsHref, history))
}
