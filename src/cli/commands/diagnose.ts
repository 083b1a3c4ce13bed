import type { Command } from 'commander'
import { scriptedAnalyst } from '../../model/analyst-script.js'
import { harnessAnalystForRun } from '../../pipeline/analyst-harness.js'
import { diagnoseRun, finalRoundDir } from '../../pipeline/diagnose.js'
import { HwError } from '../../util/errors.js'

export function registerDiagnose(program: Command): void {
  program
    .command('diagnose')
    .description(
      'Write the diagnosis dossier of a compared run: the driving instances of each comparison (discordant ' +
        'first, then the largest resource residuals) with both cells’ timelines, behaviour measures, patches, ' +
        'verifier results and request curves → <round>/diagnosis/dossier.json and dossier.md',
    )
    .argument(
      '<run-dir>',
      'a run folder (comparison.json, artifacts/); its latest confirm-<n>/ round is used',
    )
    .option(
      '--artifacts <dir>',
      'the round’s artifacts folder (default: <round>/artifacts); for a compared Harbor job, the job folder (trajectories from <trial>/agent/trajectory.json)',
    )
    .option('--max-instances <n>', 'driving instances per comparison (default 10)')
    .option(
      '--analyst <route>',
      'also write diagnosis/proposal.json with this analyst: "harness" (read-only agent on the run’s model route, spend reported apart) or "scripted" (in process, offline)',
    )
    .action(async (dir: string, opts: { artifacts?: string; maxInstances?: string; analyst?: string }) => {
      if (opts.analyst !== undefined && opts.analyst !== 'scripted' && opts.analyst !== 'harness') {
        throw new HwError('usage', `--analyst must be "harness" or "scripted", got "${opts.analyst}"`, {
          help: 'harness: an agent through the run’s own harness and model route; scripted: offline, in process',
        })
      }
      let maxInstances: number | undefined
      if (opts.maxInstances !== undefined) {
        maxInstances = Number(opts.maxInstances)
        if (!Number.isInteger(maxInstances) || maxInstances < 1) {
          throw new HwError('usage', `--max-instances must be a whole number ≥ 1, got ${opts.maxInstances}`)
        }
      }
      const log = (l: string) => process.stdout.write(`${l}\n`)
      const harness =
        opts.analyst === 'harness' ? await harnessAnalystForRun(dir, await finalRoundDir(dir), { log }) : null
      let r: Awaited<ReturnType<typeof diagnoseRun>>
      try {
        r = await diagnoseRun({
          dir,
          artifacts: opts.artifacts,
          maxInstances,
          analyst: harness ?? (opts.analyst ? scriptedAnalyst : undefined),
          fallback: harness ? scriptedAnalyst : undefined,
          log,
        })
      } finally {
        await harness?.close()
      }
      process.stdout.write(`wrote ${r.dossierJson} and ${r.dossierMd}\n`)
    })
}
