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

/** Where a task's verifier runs: in the agent's own container, or a fresh one of the same image. */
export interface VerifierPlacement {
  isolation: 'shared' | 'fresh'
  /** Why a fresh container (null when shared). */
  reason: string | null
}

/**
 * Harbor's rule (pure): tests/test.sh runs in the agent's container once the agent has exited, unless
 * the manifest says `benchmark.verifier.isolation: fresh` or task.toml `[verifier] environment_mode =
 * "separate"`. It also needs a fresh one when the agent's container is gone (killed at its limit) or
 * when the verifier is to have a network the agent's container does not (`network: task` with a
 * public verifier and an offline agent): a network cannot be added to a running container.
 */
export function verifierPlacement(p: {
  manifest: 'task' | 'fresh'
  environmentMode: 'shared' | 'separate'
  agentAlive: boolean
  agentNetwork: ContainerNetwork
  verifierNetwork: ContainerNetwork
}): VerifierPlacement {
  if (p.manifest === 'fresh') return { isolation: 'fresh', reason: 'benchmark.verifier.isolation: fresh' }
  if (p.environmentMode === 'separate')
    return { isolation: 'fresh', reason: 'task.toml [verifier] environment_mode = "separate"' }
  if (!p.agentAlive) return { isolation: 'fresh', reason: "the agent's container had ended" }
  if (p.verifierNetwork === 'public' && p.agentNetwork !== 'public')
    return {
      isolation: 'fresh',
      reason: `the verifier's network (public) is not the agent container's (${p.agentNetwork})`,
    }
  return { isolation: 'shared', reason: null }
}

/**
 * The network the verifier has in the agent's container (pure): the agent's forwarder is gone, so
 * proxy-only leaves nothing; a public container stays public.
 */
export function sharedVerifierNetwork(agent: ContainerNetwork): ContainerNetwork {
  return agent === 'public' ? 'public' : 'none'
}
