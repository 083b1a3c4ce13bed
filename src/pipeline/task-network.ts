import path from 'node:path'
import { defaultContainerSetting, type SandboxSetting } from '../manifest/schema.js'
import { loadTask, type Task } from '../panel/task.js'
import { phaseNetwork } from '../run/container-request.js'
import { quotePath } from '../util/paths.js'

/** The two phases of an attempt that run in a container. */
const PHASES = ['agent', 'verifier'] as const
type Phase = (typeof PHASES)[number]

/** What `validate` and `plan` say about the network the task containers get. */
export interface TaskNetworkNotes {
  /** One summary line (`network     …`) for a container-backend manifest; null for host backends. */
  summary: string | null
  /** One line per task whose task.toml asks for a public network the manifest does not give (capped). */
  warnings: string[]
}

/** Words for the network a phase gets (pure). */
function words(network: string): string {
  return network === 'proxy-only'
    ? 'only the proxy'
    : network === 'none'
      ? 'no network'
      : 'the public network'
}

/**
 * The network each task's agent and verifier containers get under the manifest's
 * `sandbox.container.network` (pure; the run applies the same rule, run/container-request.ts), and one
 * warning line per task whose task.toml says `network_mode = "public"` for a phase that the manifest
 * does not give it (only `network: task` does). At most `max` task lines; the rest are counted in one
 * last line. Host backends share the host's network: nothing to say.
 */
export function taskNetworkNotes(
  sandbox: SandboxSetting,
  tasks: readonly Task[],
  opts: { max?: number; cwd?: string } = {},
): TaskNetworkNotes {
  if (sandbox.backend !== 'container') return { summary: null, warnings: [] }
  const setting = sandbox.container ?? defaultContainerSetting()
  const max = opts.max ?? 10
  const cwd = opts.cwd ?? process.cwd()
  const counts: Record<Phase, Map<string, number>> = { agent: new Map(), verifier: new Map() }
  const refused: string[] = []
  for (const task of tasks) {
    const denied: { phase: Phase; gets: string }[] = []
    for (const phase of PHASES) {
      const gets = phaseNetwork(setting.network, phase, task)
      counts[phase].set(gets, (counts[phase].get(gets) ?? 0) + 1)
      const asks = phase === 'agent' ? task.harbor.agentNetwork : task.harbor.verifierNetwork
      if (asks === 'public' && gets !== 'public') denied.push({ phase, gets })
    }
    if (denied.length === 0) continue
    const file = quotePath(path.relative(cwd, path.join(task.dir, 'task.toml')) || 'task.toml')
    const phases = denied.map((d) => d.phase).join(' and ')
    const gets = denied.map((d) => `the ${d.phase} gets ${words(d.gets)}`).join(', ')
    refused.push(
      `task ${task.id} (${file}) asks for network_mode "public" for its ${phases}; ` +
        `sandbox.container.network is "${setting.network}", so ${gets} (only network: task gives it)`,
    )
  }
  const warnings = refused.slice(0, max)
  if (refused.length > max) {
    warnings.push(
      `${refused.length - max} more task(s) ask for a public network the manifest does not give (${refused.length} in all)`,
    )
  }
  const phaseLine = (phase: Phase) =>
    [...counts[phase]]
      .sort((a, b) => b[1] - a[1])
      .map(([n, c]) => `${n} ×${c}`)
      .join(', ')
  const summary =
    tasks.length === 0
      ? `network     ${setting.network} (sandbox.container.network)`
      : `network     ${setting.network} (sandbox.container.network): agent ${phaseLine('agent')}; verifier ${phaseLine('verifier')}`
  return { summary, warnings }
}

/** Load the task folders of a task-folder panel for taskNetworkNotes (bridge tasks included). */
export async function panelTasks(tasksDir: string | null, ids: readonly string[]): Promise<Task[]> {
  if (!tasksDir) return []
  const out: Task[] = []
  for (const id of ids) out.push(await loadTask(path.join(tasksDir, id)))
  return out
}
