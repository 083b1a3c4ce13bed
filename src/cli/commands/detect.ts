import path from 'node:path'
import type { Command } from 'commander'
import { formatEffect, formatRerunTest } from '../../detect/decide.js'
import { groupedMessage, groupHealth } from '../../detect/health.js'
import type { Decision } from '../../detect/schema.js'
import { detectStep } from '../../pipeline/detect.js'
import { historySource } from '../../pipeline/history.js'
import { HISTORY_URL_HELP } from './aggregate.js'

export function registerDetect(program: Command): void {
  program
    .command('detect')
    .description(
      'Decide on a comparison.json: thresholds, evaluation health, self-regression; writes decision.json ' +
        'and, on a breach, the targeted confirmation plan',
    )
    .requiredOption('--comparison <file>', 'comparison.json written by `harness-watch aggregate`')
    .requiredOption('--plan <file>', 'the plan.json the comparison was aggregated from')
    .option('--previous <file>', "an earlier run's comparison.json of the same experiment (self-regression)")
    .option('--out <dir>', 'folder for decision.json (default: beside the comparison)')
    .option('--json', 'print the step outputs (breach, confirm-matrix, confirm-plan-path, confirmed) as JSON')
    .option('--history-url <url-or-path>', HISTORY_URL_HELP)
    .action(
      async (opts: {
        comparison: string
        plan: string
        previous?: string
        out?: string
        json?: boolean
        historyUrl?: string
      }) => {
        const r = await detectStep({ ...opts, history: await historySource(opts.historyUrl) })
        if (opts.json)
          process.stdout.write(`${JSON.stringify({ status: r.decision.status, ...r.outputs })}\n`)
        else process.stdout.write(describeDecision(r.decision, r.decisionPath, r.confirmPlanPath))
        failOnNothingRun(r.decision)
      },
    )
}

/**
 * F11: a run where nothing was executed (no leg recorded an attempt, or no cell was scheduled) is a
 * failed evaluation, never a green result: say so on stderr and exit 1.
 */
export function failOnNothingRun(d: Decision): void {
  const none = d.health.find((h) => h.code === 'no_legs_executed')
  if (!none) return
  process.stderr.write(`evaluation failed: ${none.message}\n`)
  process.exitCode = 1
}

/** What a person needs after detect/confirm: the verdict, each signal with its interval, health, files. */
export function describeDecision(d: Decision, decisionPath: string, confirmPlanPath: string | null): string {
  const lines = [d.summary]
  for (const s of d.signals) {
    const who = s.kind === 'self' ? `${s.treatment} vs its previous run` : `${s.treatment} vs ${s.baseline}`
    const rerun = s.rerun ? `; ${formatRerunTest(s.rerun)}: ${s.rerun.reason}` : ''
    lines.push(`  ${s.state.padEnd(15)} ${who}: ${s.metric} ${formatEffect(s.effect)} — ${s.rule}${rerun}`)
  }
  for (const g of groupHealth(d.health)) {
    const h = g.health
    lines.push(`  ${h.severity === 'error' ? 'error  ' : 'warning'} ${h.code}: ${groupedMessage(g)}`)
  }
  lines.push(`wrote ${decisionPath} (report.md and report.html beside it now state the decision)`)
  if (confirmPlanPath && d.confirmation) {
    lines.push(
      `confirmation plan: ${confirmPlanPath} (${d.confirmation.legs} legs, ${d.confirmation.instances.length} blocks, ` +
        `cells ${d.confirmation.cells.join(', ')}); run it, aggregate it, then: harness-watch confirm --plan ${path.relative(process.cwd(), confirmPlanPath)} --comparison <rerun comparison.json>`,
    )
  }
  return `${lines.join('\n')}\n`
}
