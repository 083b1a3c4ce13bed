import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { renderHtmlReport } from '../report/html.js'
import { renderMarkdownReport } from '../report/markdown.js'
import { readLegArtifacts, readPlan } from './artifacts.js'
import { buildComparison } from './build.js'
import { observationsFromArtifacts } from './from-artifacts.js'
import type { ComparisonInput } from './observations.js'
import type { Comparison } from './schema.js'
import { comparisonJson } from './serialize.js'

export interface AggregateOptions {
  plan: string
  artifacts: string
  out: string
  /** Overrides manifest.reporting.bootstrap_resamples. */
  resamples?: number
  /** Overrides the bootstrap seed (default: the plan's seed). */
  seed?: number
}

export interface WrittenReports {
  comparison: Comparison
  comparisonPath: string
  reportPath: string
  htmlPath: string
  /** report.md's text (already size-budgeted). */
  markdown: string
}

/**
 * The aggregate stage: read plan.json and every leg artifact under `artifacts`, build the comparison
 * and write comparison.json, report.md and report.html into `out`. Missing legs and broken rows are
 * listed in the outputs, never fatal. Throws HwError only for an unreadable plan or artifacts folder.
 */
export async function aggregate(opts: AggregateOptions): Promise<WrittenReports> {
  const { plan, sha256 } = await readPlan(opts.plan)
  const read = await readLegArtifacts(plan, opts.artifacts)
  const input = observationsFromArtifacts(plan, read, {
    planFile: path.basename(opts.plan),
    planSha256: sha256,
    resamples: opts.resamples,
    seed: opts.seed,
  })
  return writeReports(input, opts.out)
}

/** Build the comparison of `input` and write the three files into `out` (shared by aggregate and compare). */
export async function writeReports(input: ComparisonInput, out: string): Promise<WrittenReports> {
  const comparison = buildComparison(input)
  await mkdir(out, { recursive: true })
  const comparisonPath = path.join(out, 'comparison.json')
  const reportPath = path.join(out, 'report.md')
  const htmlPath = path.join(out, 'report.html')
  const markdown = renderMarkdownReport(comparison, { fullReport: 'report.html' })
  await writeFile(comparisonPath, comparisonJson(comparison))
  await writeFile(reportPath, markdown)
  await writeFile(htmlPath, renderHtmlReport(comparison))
  return { comparison, comparisonPath, reportPath, htmlPath, markdown }
}
