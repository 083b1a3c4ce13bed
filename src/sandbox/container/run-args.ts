import type { ContainerNetwork } from '../contract.js'
import { labelFlags } from './cleanup.js'
import { agentIdentity } from './identity.js'
import { limitFlags, type Resources } from './limits.js'
import { type Mount, mountFlags } from './mounts.js'
import type { ContainerRuntime } from './runtime.js'

/** Host id range container ids map to (podman, as root): container root is host uid 200000. */
export const ID_BASE = 200000
export const ID_RANGE = 65536

/** One container's `run` arguments up to the image (pure): everything the engine is told about it. */
export function runArgs(p: {
  rt: Pick<ContainerRuntime, 'name' | 'runFlags' | 'idMap' | 'rootless' | 'userns'>
  /** The invoking user on the host. */
  me: { uid: number; gid: number }
  /** The manifest's `sandbox.container.user`. */
  configuredUser: string
  name: string
  phase: string
  network: ContainerNetwork
  resources: Resources
  /** Whether the engine can limit the writable layer (`--storage-opt size=`), tried once. */
  storage: boolean
  workdir: string
  mounts: Mount[]
}): { args: string[]; user: string; mapIds: boolean } {
  const { rt, resources } = p
  const { user, mapIds } = agentIdentity(rt, p.configuredUser, p.me)
  const args = [
    'run',
    '--rm',
    '--name',
    p.name,
    ...labelFlags(p.phase),
    ...(p.network === 'public' ? [] : ['--network', 'none']),
    '--cap-drop',
    'all',
    '--security-opt',
    'no-new-privileges',
    ...(mapIds ? ['--uidmap', `0:${ID_BASE}:${ID_RANGE}`, '--gidmap', `0:${ID_BASE}:${ID_RANGE}`] : []),
    '--user',
    user,
    ...limitFlags(resources),
    ...(p.storage && resources.storage_mb !== null ? ['--storage-opt', `size=${resources.storage_mb}m`] : []),
    ...rt.runFlags,
    ...(rt.name === 'podman' ? ['--pull=never'] : ['--pull', 'never']),
    '--workdir',
    p.workdir,
    ...mountFlags(p.mounts),
  ]
  return { args, user, mapIds }
}
