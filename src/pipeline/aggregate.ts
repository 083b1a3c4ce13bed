import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { buildComparison } from '../compare/build.js'
import { checkResamples } from '../compare/options.js'
import { comparisonJson } from '../compare/serialize.js'
import { readLegArtifacts, readPlan } from '../ingest/artifacts.js'
import { readCapabilities } from '../ingest/capabilities.js'
import { CONFIG_DRIFT_SUFFIX, DUPLICATE_ROW, observationsFromArtifacts } from '../ingest/from-artifacts.js'
import type { ComparisonInput } from '../ingest/observations.js'
import { currentRunAttempt, currentWorkflowRun } from '../ingest/reupload.js'
import { startWorker } from '../ingest/worker.js'
import type { CapabilitiesSection } from '../records/capabilities.js'
import type { Comparison } from '../records/comparison.js'
import { type HistorySource, renderReportFiles, writeRenderedReports } from '../report/write.js'

export interface AggregateOptions {
  plan: string
  artifacts: string
  out: string
  /** Overrides manifest.reporting.bootstrap_resamples. */
  resamples?: number
  /** Overrides the bootstrap seed (default: the plan's seed). */
  seed?: number
  /** The workflow's run attempt (default: GITHUB_RUN_ATTEMPT; null: no upper bound on re-uploads). */
  runAttempt?: number | null
  /** The workflow run (default: GITHUB_RUN_ID; null: legs of any run are read). */
  workflowRun?: string | null
  /** The experiment's weekly history page, linked from both reports; absent: no history is named. */
  history?: HistorySource | null
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
 * listed in the outputs, never fatal (duplicate rows are written too; see aggregationFailure).
 * Throws HwError for an unreadable plan or artifacts folder, or resamples outside 200–100,000.
 */
export async function aggregate(opts: AggregateOptions): Promise<WrittenReports> {
  checkResamples(opts.resamples)
  startWorker()
  const { plan, sha256 } = await readPlan(opts.plan)
  const read = await readLegArtifacts(plan, opts.artifacts, {
    runAttempt: opts.runAttempt === undefined ? currentRunAttempt(process.env) : opts.runAttempt,
    workflowRun: opts.workflowRun === undefined ? currentWorkflowRun(process.env) : opts.workflowRun,
  })
  const input = observationsFromArtifacts(plan, read, {
    planFile: path.basename(opts.plan),
    planSha256: sha256,
    resamples: opts.resamples,
    seed: opts.seed,
  })
  const capabilities = await readCapabilities(
    read,
    opts.artifacts,
    input.cells.map((c) => c.id),
    input.baseline,
  )
  // ATIF links in the reports resolve from the report to the artifacts folder.
  const href = path.relative(opts.out, opts.artifacts).split(path.sep).join('/')
  return writeReports(input, opts.out, path.isAbsolute(href) ? undefined : href, capabilities, opts.history)
}

/** Build the comparison of `input` and write the three files into `out` (shared by aggregate and compare). */
export async function writeReports(
  input: ComparisonInput,
  out: string,
  artifactsHref?: string,
  capabilities?: CapabilitiesSection | null,
  history?: HistorySource | null,
): Promise<WrittenReports> {
  const comparison = buildComparison(input)
  if (capabilities) comparison.capabilities = capabilities
  // Kept in the comparison so that the reports detect and confirm write again link the same files.
  if (artifactsHref !== undefined && artifactsHref !== '.') comparison.artifacts_href = artifactsHref
  await mkdir(out, { recursive: true })
  const comparisonPath = path.join(out, 'comparison.json')
  // comparison.json is written while the reports are rendered; they are written once it is.
  const written = writeFile(comparisonPath, comparisonJson(comparison))
  written.catch(() => {}) // a failure is thrown by the await below (rendering throws only on a defect)
  const rendered = renderReportFiles(comparison, out, null, artifactsHref, history)
  await written
  const { reportPath, htmlPath, markdown } = await writeRenderedReports(rendered)
  return { comparison, comparisonPath, reportPath, htmlPath, markdown }
}

/**
 * Why an aggregation must fail although its outputs were written, or null:
 * - duplicate result rows: two rows for one (cell, instance, trial, attempt), or two final attempts
 *   of one trial. They are listed and never counted twice, but the run's data cannot be trusted as a
 *   whole. The message names every file and line (first 10, then a count).
 * - rows or files that could not be read or did not validate (not JSON, a schema error, an unknown
 *   instance, a missing leg.json): each named with file, line and message (first 10, then a count).
 * - legs were planned and not one attempt record was read (every leg artifact missing): there is
 *   nothing to compare, which is a failed evaluation, not a result.
 */
export function aggregationFailure(c: Comparison): string | null {
  const dups = c.input_errors.filter((e) => e.message.startsWith(DUPLICATE_ROW))
  if (dups.length > 0) {
    const shown = dups.slice(0, 10).map((e) => `${e.file}${e.line ? `:${e.line}` : ''}`)
    const more = dups.length > 10 ? `, … ${dups.length - 10} more` : ''
    return `${dups.length} duplicate result row(s) in ${shown.join(', ')}${more}: each (cell, instance, trial, attempt) must appear once; the report lists them and counts none twice`
  }
  // Rows that could not be read or did not validate were left out of the blocks they belong to:
  // listed in the report, and the aggregation fails so nobody takes the figures for the whole run.
  // (Config drift is not one of them: its blocks are incomplete by design and named in the header.)
  const unreadable = c.input_errors.filter((e) => !e.message.endsWith(CONFIG_DRIFT_SUFFIX))
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 10).map((e) => `${e.file}${e.line ? `:${e.line}` : ''}: ${e.message}`)
    const more =
      unreadable.length > 10
        ? `\n  … ${unreadable.length - 10} more (listed in comparison.json input_errors)`
        : ''
    return `${unreadable.length} input error(s); the rows or files named are not counted:\n  ${shown.join('\n  ')}${more}`
  }
  if (c.missing_legs.length > 0 && c.telemetry_coverage.attempts === 0) {
    const n = c.missing_legs.length
    return `no attempt records were read: ${n === 1 ? 'the planned leg is' : `all ${n} planned legs are`} missing (${c.missing_legs
      .slice(0, 5)
      .map((l) => l.artifact)
      .join(', ')}${n > 5 ? `, … ${n - 5} more` : ''})`
  }
  return null
}
