import path from 'node:path'
import type { Command } from 'commander'
import { historySource } from '../../pipeline/history.js'
import { runLocal } from '../../pipeline/local.js'
import { handleInterrupts } from '../../run/interrupt.js'
import { createProgressReporter } from '../../run/progress.js'
import { EXIT } from '../../util/errors.js'
import { aggregateSummaryLine } from './aggregate.js'
import { parseIntOption } from './plan.js'

interface LocalCliOptions {
  out: string
  cacheDir?: string
  workRoot?: string
  concurrency?: number
  confirm: boolean
  fresh?: boolean
  instances?: string
  limit?: number
  historyUrl?: string
}

export function registerLocal(program: Command): void {
  program
    .command('local')
    .description(
      'Run the whole pipeline on this machine: install harnesses, start the scripted model and proxy, run every leg, aggregate, detect',
    )
    .argument('[manifest]', 'manifest file (YAML or JSON)', 'manifests/demo.yml')
    .option(
      '--out <dir>',
      'output folder (plan.json, artifacts/, comparison.json, report.md, report.html)',
      'hw-out/local',
    )
    .option(
      '--cache-dir <dir>',
      'harness install cache (default: $HW_CACHE_DIR or ~/.cache/harness-watch/harnesses)',
    )
    .option('--work-root <dir>', 'root of attempt workspaces and homes (default: <tmp>/hw)')
    .option('--concurrency <n>', 'legs at once (default: the manifest concurrency)', parseIntOption)
    .option('--no-confirm', 'skip the targeted confirmation round on a breach')
    .option('--fresh', 'move an existing --out aside (to <out>.prev-<stamp>) instead of resuming it')
    .option('--instances <ids>', 'a short run: only these comma-separated instances of the panel')
    .option(
      '--limit <n>',
      'a short run: only the first n instances of the panel, in its order',
      parseIntOption,
    )
    .option(
      '--history-url <url-or-path>',
      "the weekly history page to link from every round's report.md and report.html: an http(s) URL, or " +
        'the path of the history.html `harness-watch history` writes (linked relative to each report). ' +
        'Absent: the reports name no history',
    )
    .addHelpText(
      'after',
      '\nCtrl-C stops every attempt and process started here. Rerunning into the same --out resumes.\n' +
        'Exit code: 0 when the report is written (whatever it says), 1 when a leg failed or was partial,\n' +
        '130 when stopped by SIGINT/SIGTERM (the report is not written).',
    )
    .action(async (manifest: string, opts: LocalCliOptions) => {
      const controller = new AbortController()
      const release = handleInterrupts(
        controller,
        'stopping: killing attempts in flight, recording them as stopped and closing the proxy…',
      )
      const log = (line: string): void => {
        process.stderr.write(`${line}\n`)
      }
      try {
        const history = await historySource(opts.historyUrl)
        const r = await runLocal({
          history,
          manifestFile: manifest,
          out: opts.out,
          cacheDir: opts.cacheDir,
          workRoot: opts.workRoot,
          concurrency: opts.concurrency,
          confirm: opts.confirm,
          fresh: opts.fresh,
          instances:
            opts.instances === undefined
              ? undefined
              : opts.instances
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean),
          limit: opts.limit,
          progress: createProgressReporter({ stream: process.stderr }),
          log,
          signal: controller.signal,
        })
        const lines: string[] = []
        for (const round of r.rounds) {
          const label = round.round === 0 ? 'run' : `confirmation round ${round.round}`
          lines.push(`\n${label}:`, aggregateSummaryLine(round.reports.comparison))
          lines.push(`decision: ${round.detection.decision.status} — ${round.detection.decision.summary}`)
        }
        // The report printed is the deciding round's: it states the final decision and links the first
        // run's report (whose own figures are labelled as the first run's).
        const first = r.rounds[0]
        const last = r.rounds.at(-1)
        if (first && last) {
          lines.push(
            '',
            `report:     ${path.resolve(last.reports.reportPath)}`,
            `html:       ${path.resolve(last.reports.htmlPath)}`,
            `comparison: ${path.resolve(last.reports.comparisonPath)}`,
            `decision:   ${path.resolve(r.final.decisionPath)} (${r.final.decision.status})`,
          )
          if (r.diagnosis) lines.push(`diagnosis:  ${path.resolve(r.diagnosis)}`)
          if (last !== first) lines.push(`first run:  ${path.resolve(first.reports.reportPath)}`)
        }
        lines.push(`finished in ${r.wallS.toFixed(1)}s`)
        process.stdout.write(`${lines.join('\n')}\n`)
        const failedLegs = r.rounds.flatMap((x) => x.legs).filter((l) => l.status !== 'complete')
        if (failedLegs.length > 0) process.exitCode = 1
        if (controller.signal.aborted) process.exitCode = EXIT.interrupted
      } finally {
        release()
      }
    })
}
