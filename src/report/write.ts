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

/**
 * Write report.md and report.html for `c` into `out` (created if needed), with the "Decision" section
 * when a decision is given (the detection stage re-renders them once it has decided), and the line
 * linking the weekly history when one is given.
 */
export async function writeReportFiles(
  c: Comparison,
  out: string,
  decision: DecisionView | null = null,
  artifactsHref?: string,
  history?: HistorySource | null,
): Promise<ReportFiles> {
  await mkdir(out, { recursive: true })
  const reportPath = path.join(out, 'report.md')
  const htmlPath = path.join(out, 'report.html')
  const link = history ? historyLinkFrom(history, out) : null
  // A report written again (detect, confirm) links ATIF files as the first one did.
  artifactsHref ??= c.artifacts_href
  const markdown = renderMarkdownReport(c, {
    fullReport: 'report.html',
    decision,
    artifactsHref,
    history: link,
  })
  await writeFile(reportPath, markdown)
  await writeFile(htmlPath, renderHtmlReport(c, { decision, artifactsHref, history: link }))
  return { reportPath, htmlPath, markdown }
}
