import type { Command } from 'commander'
import { historyStep } from '../../pipeline/history.js'
import { HwError } from '../../util/errors.js'

export function registerHistory(program: Command): void {
  program
    .command('history')
    .description(
      "An experiment's weekly series from earlier runs' comparison.json files (and each decision.json beside " +
        'them): figures with intervals, decisions, confirmed breaches, change points and capability changes; ' +
        'writes history.html and history.json. Offline, files only',
    )
    .argument('<comparison...>', "each run's comparison.json (any order)")
    .option('--out <dir>', 'folder for history.html and history.json', 'history')
    .option('--cadence-days <days>', 'expected days between runs; a longer interval is marked as a gap', '7')
    .option('--json', 'print history.json to stdout as well')
    .action(async (files: string[], opts: { out: string; cadenceDays: string; json?: boolean }) => {
      const cadence = Number(opts.cadenceDays)
      if (opts.cadenceDays.trim() === '' || !Number.isFinite(cadence) || cadence <= 0)
        throw new HwError(
          'usage',
          `--cadence-days must be a positive number of days, got "${opts.cadenceDays}"`,
        )
      const r = await historyStep({ comparisons: files, out: opts.out, cadenceDays: cadence })
      const breaks = r.history.runs.filter((x) => x.break_before !== null).length
      if (opts.json) process.stdout.write(`${JSON.stringify(r.history)}\n`)
      else
        process.stdout.write(
          `${r.history.runs.length} run(s), ${r.history.segments.length} panel segment(s), ${breaks} break(s)\n` +
            `wrote ${r.htmlPath}\nwrote ${r.jsonPath}\n` +
            `link it from a run's reports: --history-url ${r.htmlPath} (aggregate, detect, confirm, local)\n`,
        )
    })
}
