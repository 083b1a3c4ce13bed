import type { Command } from 'commander'
import { parseResamplesOption } from '../../compare/options.js'
import { comparePublished } from '../../pipeline/published.js'
import { HwError } from '../../util/errors.js'
import { stripControl } from '../../util/text.js'
import { aggregateSummaryLine } from './aggregate.js'
import { parseSeedOption } from './plan.js'

export function registerCompare(program: Command): void {
  program
    .command('compare')
    .description(
      'Compare two published systems from their per-instance result files (same statistics as aggregate)',
    )
    .requiredOption(
      '--baseline <file>',
      'per-instance results of the baseline system (<file> or <file>#<system>)',
    )
    .requiredOption(
      '--treatment <file>',
      'per-instance results of the treatment system (<file> or <file>#<system>)',
    )
    .option('--out <dir>', 'folder to write comparison.json, report.md and report.html into', 'hw-out')
    .option(
      '--instances <file>',
      'the panel: JSON array or one id per line (default: every id either file names; a resolved list with n_total needs it to count instances neither system resolved)',
    )
    .option(
      '--ignore-unknown-ids',
      'leave out ids a file names that are not in --instances (each is listed) instead of refusing resolved ones',
    )
    .option(
      '--ungraded <policy>',
      'a null grade in a file: "unresolved" (as published scores count it) or "exclude"',
      'unresolved',
    )
    .option('--resamples <n>', 'bootstrap resamples, 200–100000', parseResamplesOption, 10_000)
    .option('--seed <n>', 'bootstrap seed', parseSeedOption, 1)
    .action(
      async (opts: {
        baseline: string
        treatment: string
        out: string
        instances?: string
        ignoreUnknownIds?: boolean
        ungraded: string
        resamples: number
        seed: number
      }) => {
        if (opts.ungraded !== 'unresolved' && opts.ungraded !== 'exclude') {
          throw new HwError('usage', `--ungraded must be "unresolved" or "exclude", got "${opts.ungraded}"`)
        }
        const r = await comparePublished({ ...opts, ungraded: opts.ungraded })
        for (const w of r.warnings) process.stderr.write(`warning: ${stripControl(w)}\n`)
        process.stdout.write(
          `${aggregateSummaryLine(r.comparison)}\nwrote ${r.comparisonPath}, ${r.reportPath}, ${r.htmlPath}\n`,
        )
      },
    )
}
