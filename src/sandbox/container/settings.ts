import type { ContainerNetwork, ContainerResources } from '../contract.js'
import type { RuntimeChoice } from './probe.js'

/** The manifest's `sandbox.container` section, validated (manifest/schema.ts). */
export interface ContainerSetting {
  runtime: RuntimeChoice
  image: string
  network: Exclude<ContainerNetwork, 'public'> | 'task'
  resources: ContainerResources
  /** The user the agent runs as inside the container (`0:0`, id-mapped to an unprivileged host id). */
  user: string
}
