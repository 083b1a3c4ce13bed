import type { Command } from 'commander'
import { parseResamplesOption } from '../../compare/options.js'
import { aggregate, aggregationFailure } from '../../pipeline/aggregate.js'
import { historySource } from '../../pipeline/history.js'
import type { Comparison } from '../../records/comparison.js'
import { fmtP, fmtPp } from '../../util/format.js'
import { printable } from '../../util/text.js'
import { parseSeedOption } from './plan.js'

export function registerAggregate(program: Command): void {
  program
    .command('aggregate')
    .description('Read every leg artifact of a plan and write comparison.json, report.md and report.html')
    .requiredOption(
      '--plan <file>',
      'plan.json written by `harness-watch plan` (a confirmation plan works too)',
    )
    .requiredOption(
      '--artifacts <dir>',
      'folder with one sub-folder per leg artifact (as download-artifact lays them out)',
    )
    .option('--out <dir>', 'folder to write into', 'hw-out')
    .option(
      '--resamples <n>',
      'bootstrap resamples, 200–100000 (default: manifest reporting.bootstrap_resamples)',
      parseResamplesOption,
    )
    .option('--seed <n>', 'bootstrap seed (default: the plan seed)', parseSeedOption)
    .option('--history-url <url-or-path>', HISTORY_URL_HELP)
    .action(
      async (opts: {
        plan: string
        artifacts: string
        out: string
        resamples?: number
        seed?: number
        historyUrl?: string
      }) => {
        const r = await aggregate({ ...opts, history: await historySource(opts.historyUrl) })
        process.stdout.write(
          `${aggregateSummaryLine(r.comparison)}\nwrote ${r.comparisonPath}, ${r.reportPath}, ${r.htmlPath}\n`,
        )
        // F09: the outputs are written (and list the duplicates), but the aggregation failed.
        const failure = aggregationFailure(r.comparison)
        if (failure) {
          process.stderr.write(printable(`aggregation failed: ${failure}\n`))
          process.exitCode = 1
        }
      },
    )
}

/** Help of `--history-url` (aggregate, detect, confirm, local). */
export const HISTORY_URL_HELP =
  'the weekly history page to link from report.md and report.html: an http(s) URL, or the path of the ' +
  'history.html `harness-watch history` writes (linked relative to each report); give it to every ' +
  'command that writes the reports (aggregate, detect, confirm). Absent: the reports name no history'

/** One line per comparison plus what is incomplete: what a person needs after `aggregate`. */
export function aggregateSummaryLine(c: Comparison): string {
  const b = c.blocks
  const problems = `${c.missing_legs.length} missing leg(s), ${c.input_errors.length} input error(s)`
  const lines = [
    c.cells.length === 0
      ? `no cells scheduled: ${b.planned} blocks planned, nothing was run or compared; ${problems}`
      : `${b.planned} blocks planned: ${b.outcome_complete} outcome-complete, ${b.complete} complete, ${b.incomplete.length} incomplete; ${problems}`,
  ]
  for (const x of c.comparisons) {
    const o = x.outcome
    const spend = x.metrics.spend_usd.ratio_of_means.estimate
    // With no outcome-complete block there is no W/L/T and no test, never "0/0/0" or "p 1".
    const outcome =
      o.n === 0
        ? 'no outcome-complete blocks (W/L/T —, McNemar p —)'
        : `W/L/T ${o.wins}/${o.losses}/${o.ties}, Δ ${fmtPp(o.diff_pp)}, McNemar p ${fmtP(o.mcnemar.p_two_sided)}`
    lines.push(
      `${x.baseline} → ${x.treatment}: ${outcome}, spend ratio ${spend === null ? '—' : `${spend.toFixed(3)}×`} (n ${x.metrics.spend_usd.n})`,
    )
  }
  return lines.join('\n')
}
