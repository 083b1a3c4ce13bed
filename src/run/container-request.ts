import type { ContainerSettingValue } from '../manifest/schema.js'
import type { Task } from '../panel/task.js'
import type { ContainerNetwork, ContainerRequest, ImageSource } from '../sandbox/contract.js'

/** A task's container request without the phase and the forwarded ports (pure). */
export type TaskRequest = Omit<ContainerRequest, 'phase' | 'ports' | 'binds'>

/** Where a task's image comes from; absent = the manifest's image (pure). */
export function taskImage(task: Task | null): ImageSource | undefined {
  const c = task?.container
  if (!c) return undefined
  return c.kind === 'image' ? { ref: c.ref } : { build: c.context, name: task.id, timeoutS: c.buildTimeoutS }
}

/**
 * The network of a phase (pure). The manifest's `proxy-only` gives the agent only the forwarded proxy
 * and the verifier nothing; `none` gives both nothing; `task` follows the task's own network_mode
 * (`public` → the engine's network, `no-network` → none) and otherwise the proxy-only rule.
 */
export function phaseNetwork(
  setting: ContainerSettingValue['network'],
  phase: 'agent' | 'verifier',
  task: Task | null,
): ContainerNetwork {
  if (setting === 'none') return 'none'
  const fallback: ContainerNetwork = phase === 'agent' ? 'proxy-only' : 'none'
  if (setting !== 'task') return fallback
  const mode = phase === 'agent' ? task?.harbor.agentNetwork : task?.harbor.verifierNetwork
  if (mode === 'public') return 'public'
  if (mode === 'no-network') return 'none'
  return fallback
}

/** The request for one phase of a task's attempt (pure): image, the task's resources, the network rule. */
export function taskRequest(
  task: Task | null,
  setting: ContainerSettingValue,
  phase: 'agent' | 'verifier',
): TaskRequest {
  return {
    image: taskImage(task),
    resources: task?.harbor.resources ?? {},
    network: phaseNetwork(setting.network, phase, task),
  }
}
