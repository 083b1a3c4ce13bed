import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Comparison } from '../records/comparison.js'
import type { DecisionView } from './decision.js'
import { renderHtmlReport } from './html.js'
import { renderMarkdownReport } from './markdown.js'

export interface ReportFiles {
  reportPath: string
  htmlPath: string
  /** report.md's text (already size-budgeted). */
  markdown: string
}

/**
 * Write report.md and report.html for `c` into `out` (created if needed), with the "Decision" section
 * when a decision is given (the detection stage re-renders them once it has decided).
 */
export async function writeReportFiles(
  c: Comparison,
  out: string,
  decision: DecisionView | null = null,
  artifactsHref?: string,
): Promise<ReportFiles> {
  await mkdir(out, { recursive: true })
  const reportPath = path.join(out, 'report.md')
  const htmlPath = path.join(out, 'report.html')
  const markdown = renderMarkdownReport(c, { fullReport: 'report.html', decision, artifactsHref })
  await writeFile(reportPath, markdown)
  await writeFile(htmlPath, renderHtmlReport(c, { decision, artifactsHref }))
  return { reportPath, htmlPath, markdown }
}
