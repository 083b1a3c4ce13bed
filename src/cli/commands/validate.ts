import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { thresholdWarnings } from '../../calibrate/warnings.js'
import { loadManifest } from '../../manifest/load.js'
import { sandboxPathWarnings } from '../../manifest/sandbox-paths.js'
import { scheduledWorkflowsUsing } from '../../manifest/scheduled.js'
import { assertScriptsExist } from '../../manifest/scripts.js'
import { assertBridgeCapable, assertDialogueReady } from '../../panel/bridge-capable.js'
import { checkBridgeTasks } from '../../panel/bridge-task.js'
import { resolvePanel } from '../../panel/resolve.js'
import { panelTasks, taskNetworkNotes } from '../../pipeline/task-network.js'
import { buildPlan } from '../../plan/plan.js'
import { summarizeManifest } from '../../plan/summary.js'
import { legTimeoutWarning } from '../../plan/timeouts.js'
import { containerWarnings } from '../../sandbox/container/warnings.js'
import { describeSandbox } from '../../sandbox/select.js'

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Validate a manifest; print a one-screen summary (exit 0) or every problem (exit 2)')
    .argument('<manifest>', 'manifest file (YAML or JSON)')
    .option('--json', 'print the resolved manifest as JSON instead of the summary')
    .option(
      '--scheduled',
      'the manifest runs on a schedule (warn as for a scheduled workflow); without it, .github/workflows of the repository holding the manifest is searched for an `on: schedule` workflow that names it',
    )
    .action(async (file: string, opts: { json?: boolean; scheduled?: boolean }) => {
      const loaded = await loadManifest(file, { runnable: true })
      assertScriptsExist(loaded.manifest, file, process.cwd(), loaded.locate)
      const panel = await resolvePanel(loaded.manifest, loaded.dir, file, loaded.locate)
      if (panel.tasksDir) await checkBridgeTasks(panel.tasksDir, panel.instances)
      await assertBridgeCapable(loaded.manifest, panel, loaded.locate)
      await assertDialogueReady(loaded.manifest, panel, loaded.locate)
      // Planning is part of validation: a matrix that cannot fit 256 jobs is a manifest problem.
      const plan = buildPlan(loaded, panel)
      const network = taskNetworkNotes(
        loaded.manifest.sandbox,
        loaded.manifest.sandbox.backend === 'container'
          ? await panelTasks(panel.tasksDir, panel.instances)
          : [],
      )
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ manifest: loaded.manifest, config_hashes: loaded.configHashes, panel }, null, 2)}\n`,
        )
      } else {
        process.stdout.write(`${summarizeManifest(loaded, panel, plan)}\n`)
        if (network.summary) process.stdout.write(`${network.summary}\n`)
      }
      // The sandbox's required capabilities, checked on this machine (a warning: the legs may run elsewhere).
      const sandbox = await describeSandbox(loaded.manifest.sandbox)
      process.stderr.write(`${sandbox.ok ? '' : 'warning: '}${sandbox.line}\n`)
      const scheduledBy = opts.scheduled ? ['--scheduled'] : await schedulingWorkflows(file)
      for (const w of containerWarnings(loaded.manifest.sandbox, scheduledBy)) {
        process.stderr.write(`warning: ${w}\n`)
      }
      for (const w of network.warnings) process.stderr.write(`warning: ${w}\n`)
      const quarantined = new Set(panel.quarantine)
      const blocks = panel.instances.filter((i) => !quarantined.has(i)).length
      for (const w of thresholdWarnings(loaded.manifest, blocks)) process.stderr.write(`warning: ${w}\n`)
      const timeout = legTimeoutWarning(plan)
      if (timeout) process.stderr.write(`warning: ${timeout}\n`)
      // $GITHUB_WORKSPACE in a command is the repository root on GitHub; here, the current folder.
      const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
      for (const w of sandboxPathWarnings(loaded.manifest, loaded.dir, workspace)) {
        process.stderr.write(`warning: ${w}\n`)
      }
    })
}

/**
 * The scheduled workflows of the repository holding `manifest` that name it (the nearest folder
 * upwards with a .git; none outside a repository). Unreadable files are skipped.
 */
async function schedulingWorkflows(manifest: string): Promise<string[]> {
  const abs = path.resolve(manifest)
  let root = path.dirname(abs)
  while (!existsSync(path.join(root, '.git'))) {
    const up = path.dirname(root)
    if (up === root) return []
    root = up
  }
  const dir = path.join(root, '.github', 'workflows')
  const names = await readdir(dir).catch(() => [] as string[])
  const files = []
  for (const n of names.filter((x) => /\.ya?ml$/.test(x)).sort()) {
    const text = await readFile(path.join(dir, n), 'utf8').catch(() => null)
    if (text !== null) files.push({ file: `.github/workflows/${n}`, text })
  }
  return scheduledWorkflowsUsing(files, path.relative(root, abs))
}
