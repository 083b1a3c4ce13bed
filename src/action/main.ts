import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as core from '@actions/core'
import { groupedMessage, groupHealth } from '../detect/health.js'
import { publish, publishOutputs } from '../github/publish.js'
import { stopWorker } from '../ingest/worker.js'
import { loadManifest } from '../manifest/load.js'
import { assertScriptsExist } from '../manifest/scripts.js'
import { resolvePanel } from '../panel/resolve.js'
import { aggregate, aggregationFailure } from '../pipeline/aggregate.js'
import { detectStep } from '../pipeline/detect.js'
import { diagnoseRun, writeReportDiagnosis } from '../pipeline/diagnose.js'
import { historySource } from '../pipeline/history.js'
import { panelTasks, taskNetworkNotes } from '../pipeline/task-network.js'
import { buildPlan } from '../plan/plan.js'
import { legTimeoutMinutes, legTimeoutWarning } from '../plan/timeouts.js'
import { codeSpan, escapeMarkdown } from '../report/escape.js'
import { jobSummary } from '../report/summary.js'
import { runLegFromFiles } from '../run/entry.js'
import { handleInterrupts } from '../run/interrupt.js'
import { createProgressReporter } from '../run/progress.js'
import { HwError, messageOf } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { type ActionInputs, readInputs, required } from './inputs.js'
import {
  callerFile,
  envReadByManifest,
  FORK_SUMMARY,
  isForkPullRequest,
  misconfigurationLine,
  SECRET_OF_ENV,
  secretMismatches,
} from './misconfig.js'

/** The action's one entry: dispatch on `command`. Never throws: failures become core.setFailed. */
export async function run(): Promise<void> {
  try {
    const inputs = readInputs()
    core.debug(`command=${inputs.command}`)
    switch (inputs.command) {
      case 'plan':
        return await plan(inputs)
      case 'run': {
        // A cancelled job gets SIGINT (then SIGTERM): the attempts in flight are killed and recorded
        // as stopped and leg.json is written, as for the CLI's `run` (one handler for both).
        const controller = new AbortController()
        const release = handleInterrupts(
          controller,
          'stopping: killing the attempt in flight, recording it as stopped, writing leg.json…',
          (line) => core.info(line),
        )
        await warnUnusedSecrets(required(inputs, 'manifest'))
        let r: Awaited<ReturnType<typeof runLegFromFiles>>
        try {
          r = await runLegFromFiles({
            manifestFile: required(inputs, 'manifest'),
            planFile: required(inputs, 'plan'),
            leg: required(inputs, 'leg'),
            outDir: inputs.out,
            progress: createProgressReporter({ stream: process.stdout as NodeJS.WriteStream, tty: false }),
            log: (line) => core.info(line),
            signal: controller.signal,
          })
        } catch (e) {
          if (isForkPullRequest()) await core.summary.addRaw(FORK_SUMMARY, true).write()
          throw e
        } finally {
          release()
        }
        const stopped = controller.signal.aborted ? String(controller.signal.reason) : null
        await core.summary.addRaw(legSummary(r, stopped), true).write()
        core.setOutput('artifact', r.artifact)
        core.setOutput('leg-dir', r.dir)
        if (stopped)
          core.setFailed(`leg ${r.leg.leg} stopped (${stopped}): ${r.leg.attempts} attempt(s) recorded`)
        else if (r.leg.status !== 'complete')
          core.setFailed(`leg ${r.leg.leg} is ${r.leg.status}: ${r.leg.error ?? 'incomplete'}`)
        return
      }
      case 'aggregate': {
        const plan = required(inputs, 'plan')
        // The weekly history, built after this step (the workflow's history job): linked from both
        // reports. An address that cannot be linked is a warning, never a failed aggregation.
        const history = await historySource(inputs['history-url'], inputs['history-artifact']).catch((e) => {
          core.warning(`history-url: not linked from the reports: ${messageOf(e)}`)
          return null
        })
        const r = await aggregate({
          plan,
          artifacts: required(inputs, 'artifacts'),
          out: inputs.out,
          history,
        })
        core.setOutput('comparison-path', r.comparisonPath)
        core.setOutput('report-path', r.reportPath)
        const { blocks, missing_legs: missing } = r.comparison
        core.info(
          `${blocks.planned} blocks: ${blocks.outcome_complete} outcome-complete, ` +
            `${blocks.incomplete.length} incomplete; wrote ${r.comparisonPath}`,
        )
        if (missing.length > 0) {
          core.warning(
            `${missing.length} leg artifact(s) missing: ${missing.map((l) => l.artifact).join(', ')}`,
          )
        }
        // Detection (and, on a breach, the confirmation plan; on a confirmation plan, the verdict);
        // it writes report.md again with the decision, which becomes the job summary.
        let d: Awaited<ReturnType<typeof detectStep>>
        try {
          d = await detectStep({
            comparison: r.comparisonPath,
            plan,
            previous: inputs.previous || undefined,
            history,
          })
        } catch (e) {
          await core.summary.addRaw(jobSummary(r.markdown), true).write()
          throw e
        }
        for (const [k, v] of Object.entries({ status: d.decision.status, ...d.outputs })) core.setOutput(k, v)
        core.setOutput(
          'confirm-timeout-minutes',
          d.confirmPlan ? String(legTimeoutMinutes(d.confirmPlan)) : '',
        )
        core.info(d.decision.summary)
        // A confirmed breach gets its dossier beside the report (a failure to write it is a warning).
        if (d.decision.status === 'confirmed') {
          try {
            const dx = await diagnoseRun({
              dir: path.dirname(r.comparisonPath),
              artifacts: required(inputs, 'artifacts'),
              log: (l) => core.info(l),
            })
            core.info(`diagnosis: ${dx.dossierMd}`)
          } catch (e) {
            core.warning(`diagnosis: the dossier could not be written: ${messageOf(e)}`)
            await writeReportDiagnosis(
              path.dirname(r.comparisonPath),
              null,
              `the dossier could not be written (${messageOf(e)})`,
            ).catch(() => undefined)
          }
        }
        const fork = isForkPullRequest() ? `${FORK_SUMMARY}\n\n` : ''
        // report.md as it now stands (with the diagnosis section when one was written).
        const reportPath = path.join(path.dirname(r.comparisonPath), 'report.md')
        const markdown = await readFile(reportPath, 'utf8').catch(() => d.reports.markdown)
        await core.summary.addRaw(fork + jobSummary(markdown), true).write()
        for (const g of groupHealth(d.decision.health).filter((x) => x.health.severity === 'error'))
          core.error(groupedMessage(g))
        const failures: string[] = []
        // F09: duplicate result rows fail the step (the outputs above still list them).
        const duplicates = aggregationFailure(r.comparison)
        if (duplicates) failures.push(`aggregation failed: ${duplicates}`)
        // F11: legs planned but none recorded is a failed run, never a green "no regression".
        const none = d.decision.health.find((h) => h.code === 'no_legs_executed')
        if (none) failures.push(none.message)
        if (failures.length > 0) core.setFailed(failures.join('; '))
        return
      }
      case 'publish': {
        const dryRun = inputs['dry-run'] === 'true'
        if (!dryRun && !inputs.token) {
          throw new HwError('github_token_missing', 'no GitHub token given')
        }
        const r = await publish({
          comparison: required(inputs, 'comparison'),
          token: inputs.token,
          pr: inputs['pr-number'] ? Number(inputs['pr-number']) : null,
          reportUrl: inputs['report-url'] || undefined,
          historyUrl: inputs['history-url'] || undefined,
          dryRun,
        })
        for (const [k, v] of Object.entries(publishOutputs(r))) core.setOutput(k, v)
        const fork = isForkPullRequest() ? `${FORK_SUMMARY}\n\n` : ''
        await core.summary.addRaw(fork + r.summary, true).write()
        if (r.failure) core.setFailed(r.failure)
        return
      }
      default:
        core.setFailed(`command "${inputs.command}" is not available in this version of harness-watch`)
    }
  } catch (e) {
    // A workflow misconfiguration is one line naming what to change and where; the full text follows.
    const line = misconfigurationLine(e)
    if (line) {
      core.info(messageOf(e))
      core.setFailed(line)
    } else core.setFailed(messageOf(e))
  } finally {
    await stopWorker()
  }
}

async function plan(inputs: ActionInputs): Promise<void> {
  const file = required(inputs, 'manifest')
  // Refuse here what a leg could not run, before any leg starts (or is billed).
  const loaded = await loadManifest(file, { runnable: true })
  assertScriptsExist(loaded.manifest, file, process.cwd(), loaded.locate)
  const panel = await resolvePanel(loaded.manifest, loaded.dir, file, loaded.locate)
  const cells = inputs.cells
    ? inputs.cells
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined
  // Default call key: stable across re-runs of the same call (same manifest and cells), so a re-run
  // finds its legs; two calls of one workflow with other manifests or cells never share artifacts.
  const callKey =
    inputs['call-key'] ||
    createHash('sha256').update(`${file}\u0000${inputs.cells}`).digest('hex').slice(0, 8)
  const p = buildPlan(loaded, panel, {
    seed: inputs.seed ? Number(inputs.seed) : undefined,
    cells,
    callKey,
  })
  await mkdir(inputs.out, { recursive: true })
  const planPath = path.join(inputs.out, 'plan.json')
  await writeFile(planPath, strictJson(p))
  core.setOutput('matrix', JSON.stringify(p.matrix))
  core.setOutput('has-work', p.legs.length > 0 ? 'true' : 'false')
  core.setOutput('plan-path', planPath)
  core.setOutput('legs', String(p.legs.length))
  core.setOutput('experiment', p.experiment_id)
  core.setOutput('call-key', p.call_key)
  core.setOutput('leg-timeout-minutes', String(legTimeoutMinutes(p)))
  if (p.shards.note) core.warning(p.shards.note)
  const timeout = legTimeoutWarning(p)
  if (timeout) core.warning(timeout)
  // A task's network_mode = "public" that the manifest does not give: one annotation per task.
  if (loaded.manifest.sandbox.backend === 'container') {
    const tasks = await panelTasks(panel.tasksDir, p.panel.instances)
    for (const w of taskNetworkNotes(loaded.manifest.sandbox, tasks).warnings) core.warning(w)
  }
  core.info(
    `planned ${p.legs.length} legs (${p.cells.length} cells × ${p.shards.count} shards); wrote ${planPath}`,
  )
  await core.summary
    .addHeading(`Harness Watch plan: ${p.experiment_id}`, 3)
    .addRaw(
      p.legs.length === 0
        ? 'No cells scheduled: nothing to run.'
        : `${p.legs.length} legs: ${p.cells.map((c) => `${c.id} (${c.harness}@${c.version})`).join(', ')} × ${p.shards.count} shard(s), ${p.panel.instances.length} instances, k=${p.trials}.`,
      true,
    )
    .write()
}

/**
 * A secret of the reusable workflow that reached this leg (its variable is set) while the manifest
 * never reads it: a warning naming it and the calling file (a key handed to the legs for nothing).
 * A variable read but empty fails later, where it is needed, with its own one line.
 */
async function warnUnusedSecrets(manifestFile: string): Promise<void> {
  const reads = envReadByManifest((await loadManifest(manifestFile)).manifest)
  const passed = Object.entries(SECRET_OF_ENV)
    .filter(([env]) => process.env[env])
    .map(([, secret]) => secret)
  const where = `the job that calls harness-watch.yml in ${callerFile()}`
  for (const line of secretMismatches(reads, passed, where)) {
    if (line.startsWith('unused secret')) core.warning(line)
  }
}

/** The job summary of one leg: its status (and the signal that stopped it), attempts and its artifact. */
function legSummary(r: Awaited<ReturnType<typeof runLegFromFiles>>, stopped: string | null): string {
  const leg = r.leg
  const lines = [
    `### Harness Watch leg ${codeSpan(leg.leg)}: ${leg.status}${stopped ? ` (stopped: ${stopped})` : ''}`,
    '',
    `Cell ${codeSpan(leg.cell_id)} (${codeSpan(`${leg.harness}@${leg.harness_version_declared}`)}), shard ${leg.shard}: ` +
      `${leg.attempts} attempt(s) on ${leg.planned_instances.length} planned instance(s); artifact ${codeSpan(r.artifact)}.`,
  ]
  if (leg.error) lines.push('', `Error: ${escapeMarkdown(leg.error)}`)
  return lines.join('\n')
}
