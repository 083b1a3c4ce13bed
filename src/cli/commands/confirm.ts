import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { detectStep } from '../../pipeline/detect.js'
import { diagnoseRun } from '../../pipeline/diagnose.js'
import { historySource } from '../../pipeline/history.js'
import { HwError } from '../../util/errors.js'
import { HISTORY_URL_HELP } from './aggregate.js'
import { describeDecision, failOnNothingRun } from './detect.js'

export function registerConfirm(program: Command): void {
  program
    .command('confirm')
    .description(
      'Decide a confirmation round on the rerun data only: the rerun comparison.json against the first run ' +
        "(found through the confirmation plan's confirmation.json); writes decision.json with both runs",
    )
    .requiredOption(
      '--comparison <file>',
      "the rerun's comparison.json (aggregated from the confirmation plan)",
    )
    .requiredOption('--plan <file>', 'the confirmation plan.json written by `harness-watch detect`')
    .option('--out <dir>', 'folder for decision.json (default: beside the comparison)')
    .option('--json', 'print the step outputs as JSON')
    .option(
      '--artifacts <dir>',
      'the rerun artifacts: on a confirmed breach, diagnosis/dossier.json is written',
    )
    .option('--history-url <url-or-path>', HISTORY_URL_HELP)
    .action(
      async (opts: {
        comparison: string
        plan: string
        out?: string
        json?: boolean
        artifacts?: string
        historyUrl?: string
      }) => {
        if (!(await isConfirmationPlan(opts.plan))) {
          throw new HwError('usage', `${opts.plan} is not a confirmation plan`, {
            help: 'pass the confirm-<round>/plan.json that `harness-watch detect` wrote on a breach',
          })
        }
        const r = await detectStep({ ...opts, history: await historySource(opts.historyUrl) })
        if (r.decision.status === 'confirmed')
          await writeDossier(path.dirname(r.decisionPath), opts.comparison, opts.artifacts)
        if (opts.json)
          process.stdout.write(`${JSON.stringify({ status: r.decision.status, ...r.outputs })}\n`)
        else process.stdout.write(describeDecision(r.decision, r.decisionPath, null))
        failOnNothingRun(r.decision)
      },
    )
}

/** On a confirmed breach, the dossier beside decision.json; a failure is a warning, never the verdict. */
async function writeDossier(dir: string, comparison: string, artifacts: string | undefined): Promise<void> {
  try {
    await diagnoseRun({ dir, comparison, artifacts, log: (l) => process.stderr.write(`${l}\n`) })
  } catch (e) {
    process.stderr.write(
      `diagnosis: the dossier could not be written: ${(e as Error).message.split('\n')[0]}\n`,
    )
  }
}

async function isConfirmationPlan(file: string): Promise<boolean> {
  try {
    return (JSON.parse(await readFile(file, 'utf8')) as { kind?: unknown }).kind === 'confirmation'
  } catch {
    return false
  }
}
