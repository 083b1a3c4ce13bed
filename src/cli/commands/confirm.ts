import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { detectStep } from '../../detect/step.js'
import { HwError } from '../../errors.js'
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
    .action(async (opts: { comparison: string; plan: string; out?: string; json?: boolean }) => {
      if (!(await isConfirmationPlan(opts.plan))) {
        throw new HwError('usage', `${opts.plan} is not a confirmation plan`, {
          help: 'pass the confirm-<round>/plan.json that `harness-watch detect` wrote on a breach',
        })
      }
      const r = await detectStep(opts)
      if (opts.json) process.stdout.write(`${JSON.stringify({ status: r.decision.status, ...r.outputs })}\n`)
      else process.stdout.write(describeDecision(r.decision, r.decisionPath, null))
      failOnNothingRun(r.decision)
    })
}

async function isConfirmationPlan(file: string): Promise<boolean> {
  try {
    return (JSON.parse(await readFile(file, 'utf8')) as { kind?: unknown }).kind === 'confirmation'
  } catch {
    return false
  }
}
