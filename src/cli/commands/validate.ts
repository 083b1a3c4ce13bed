import type { Command } from 'commander'
import { thresholdWarnings } from '../../calibrate/warnings.js'
import { loadManifest } from '../../manifest/load.js'
import { sandboxPathWarnings } from '../../manifest/sandbox-paths.js'
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
    .action(async (file: string, opts: { json?: boolean }) => {
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
      for (const w of containerWarnings(loaded.manifest.sandbox)) process.stderr.write(`warning: ${w}\n`)
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
