import type { Command } from 'commander'
import { aggregate } from '../../compare/aggregate.js'
import { parseIntOption } from './plan.js'

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
      'bootstrap resamples (default: manifest reporting.bootstrap_resamples)',
      parseIntOption,
    )
    .option('--seed <n>', 'bootstrap seed (default: the plan seed)', parseIntOption)
    .action(
      async (opts: { plan: string; artifacts: string; out: string; resamples?: number; seed?: number }) => {
        const r = await aggregate(opts)
        process.stdout.write(
          `${aggregateSummaryLine(r.comparison)}\nwrote ${r.comparisonPath}, ${r.reportPath}, ${r.htmlPath}\n`,
        )
      },
    )
}

/** One line per comparison plus what is incomplete: what a person needs after `aggregate`. */
export function aggregateSummaryLine(c: import('../../compare/schema.js').Comparison): string {
  const b = c.blocks
  const lines = [
    `${b.planned} blocks planned: ${b.outcome_complete} outcome-complete, ${b.complete} complete, ${b.incomplete.length} incomplete; ${c.missing_legs.length} missing leg(s), ${c.input_errors.length} input error(s)`,
  ]
  for (const x of c.comparisons) {
    const o = x.outcome
    const spend = x.metrics.spend_usd.ratio_of_means.estimate
    lines.push(
      `${x.baseline} → ${x.treatment}: W/L/T ${o.wins}/${o.losses}/${o.ties}, Δ ${o.diff_pp === null ? '—' : `${o.diff_pp.toFixed(1)} pp`}, McNemar p ${o.mcnemar.p_two_sided.toPrecision(3)}, spend ratio ${spend === null ? '—' : `${spend.toFixed(3)}×`} (n ${x.metrics.spend_usd.n})`,
    )
  }
  return lines.join('\n')
}
