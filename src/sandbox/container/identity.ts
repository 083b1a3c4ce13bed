import { NODE_DIR } from './mounts.js'
import type { ContainerRuntime } from './runtime.js'

/** PATH when an image states none (the Debian/Ubuntu default). */
export const DEFAULT_IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** What the backend reads from an image's `Config` (`image inspect --format '{{json .Config}}'`). */
export interface ImageConfig {
  /** The image's working directory (`/app` when it states none or `/`). */
  workdir: string
  /** The image's own PATH (DEFAULT_IMAGE_PATH when it states none). */
  path: string
}

/** Parse an image's `{{json .Config}}` (pure); a missing or unreadable answer gives the defaults. */
export function parseImageConfig(json: string): ImageConfig {
  let c: { WorkingDir?: unknown; Env?: unknown } | null
  try {
    c = JSON.parse(json) as { WorkingDir?: unknown; Env?: unknown } | null
  } catch {
    c = null
  }
  const wd = typeof c?.WorkingDir === 'string' ? c.WorkingDir.trim() : ''
  const env = Array.isArray(c?.Env) ? c.Env.filter((e): e is string => typeof e === 'string') : []
  const p = env.find((e) => e.startsWith('PATH='))?.slice('PATH='.length) ?? ''
  return { workdir: wd && wd !== '/' ? wd : '/app', path: p || DEFAULT_IMAGE_PATH }
}

/**
 * PATH inside a container (pure): the folders of the given PATH that are mounted into the container
 * (a harness's own install, e.g. its virtualenv's bin), then the image's own PATH (a conda env, a
 * toolchain the image installed), then the mounted Node's folder. Host folders that are not mounted
 * (the host's Node folder, the host's system folders) never appear: they would shadow the image's.
 */
export function containerPath(given: string | undefined, imagePath: string, mounted: string[]): string {
  const inside = (d: string) => mounted.some((m) => d === m || d.startsWith(`${m}/`))
  const keep = (given ?? '').split(':').filter((d) => d.startsWith('/') && inside(d))
  const dirs = [...keep, ...imagePath.split(':').filter((d) => d !== ''), NODE_DIR]
  return [...new Set(dirs)].join(':')
}

/**
 * Who the agent runs as, and whether container ids are mapped to an unprivileged host range (pure).
 * - Root calling podman (rootful, `--uidmap` available): the configured user (container root) mapped
 *   to ID_BASE; the backend chowns the writable folders to the mapped ids and back.
 * - Rootless podman or rootless Docker: container root *is* the invoking user, who owns the workspace:
 *   the configured user, no mapping.
 * - Docker with `userns-remap`: the daemon maps ids itself; the configured user, no mapping (its remap
 *   range does not own the workspace: not yet supported for editing tasks).
 * - Otherwise (rootful Docker, e.g. a GitHub-hosted runner's, or rootful podman without mapping): no
 *   user namespace, so container root is host root with every capability dropped and cannot write a
 *   folder it does not own; the agent runs as the invoking user's uid:gid, who owns the workspace,
 *   HOME and the attempt's folders. A configured user other than `0:0` is kept as given.
 */
export function agentIdentity(
  rt: Pick<ContainerRuntime, 'idMap' | 'rootless' | 'userns'>,
  configured: string,
  me: { uid: number; gid: number },
): { user: string; mapIds: boolean } {
  if (rt.idMap && me.uid === 0) return { user: configured, mapIds: true }
  if (rt.rootless || rt.userns || configured !== '0:0') return { user: configured, mapIds: false }
  return { user: `${me.uid}:${me.gid}`, mapIds: false }
}
