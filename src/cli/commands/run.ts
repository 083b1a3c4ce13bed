import type { Command } from 'commander'
import { runLegFromFiles } from '../../run/entry.js'
import { handleInterrupts } from '../../run/interrupt.js'
import { createProgressReporter } from '../../run/progress.js'
import { EXIT } from '../../util/errors.js'

interface RunOptions {
  plan: string
  leg: string
  out?: string
  runId?: string
  fresh?: boolean
  cacheDir?: string
  workRoot?: string
  keepWorkspaces?: boolean
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('Run one leg of a plan (one cell on one shard) and write its artifact folder')
    .argument('<manifest>', 'manifest file (YAML or JSON) the plan was made from')
    .requiredOption('--plan <file>', 'plan.json written by `harness-watch plan`')
    .requiredOption('--leg <id>', 'the leg to run, e.g. pi-s0 (see plan.json legs[].leg)')
    .option(
      '--out <dir>',
      'leg folder: attempts.jsonl, ledger.jsonl, leg.json, logs/ (default: hw-out/<leg>)',
    )
    .option('--run-id <id>', 'run id stamped on every record (default: the Actions run, else a UTC stamp)')
    .option(
      '--fresh',
      'move an existing --out folder aside (to <tmp>/harness-watch-prev/) instead of resuming it',
    )
    .option(
      '--cache-dir <dir>',
      'harness install cache (default: $HW_CACHE_DIR or ~/.cache/harness-watch/harnesses)',
    )
    .option('--work-root <dir>', 'root of attempt workspaces and homes (default: <tmp>/hw)')
    .option('--keep-workspaces', 'keep each attempt workspace and home (debugging)')
    .addHelpText(
      'after',
      '\nRerunning into the same --out resumes: attempts already final in attempts.jsonl are skipped.\n' +
        'Exit code: 0 when the leg completed (infra errors included), 1 when it is partial or failed,\n' +
        '130 when stopped by SIGINT/SIGTERM (attempts in flight are killed and recorded as stopped;\n' +
        'a second signal kills everything at once).',
    )
    .action(async (manifest: string, opts: RunOptions) => {
      const controller = new AbortController()
      const release = handleInterrupts(
        controller,
        'stopping: killing the attempt in flight, recording it as stopped, writing leg.json…',
      )
      try {
        const r = await runLegFromFiles({
          manifestFile: manifest,
          planFile: opts.plan,
          leg: opts.leg,
          outDir: opts.out ?? `hw-out/${opts.leg}`,
          runId: opts.runId,
          fresh: opts.fresh,
          cacheDir: opts.cacheDir,
          workRoot: opts.workRoot,
          keepWorkspaces: opts.keepWorkspaces,
          progress: createProgressReporter({ stream: process.stderr }),
          log: (line) => process.stderr.write(`${line}\n`),
          signal: controller.signal,
        })
        process.stdout.write(`wrote ${r.dir} (artifact ${r.artifact}, leg ${r.leg.status})\n`)
        if (r.leg.status !== 'complete') process.exitCode = EXIT.failure
        if (controller.signal.aborted) process.exitCode = EXIT.interrupted
      } finally {
        release()
      }
    })
}
