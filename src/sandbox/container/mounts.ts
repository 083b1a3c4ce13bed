import path from 'node:path'

/** Where the host's Node binary appears in every container (read-only): harness CLIs run with it. */
export const NODE_DIR = '/opt/harness-watch/node/bin'
export const NODE_IN = `${NODE_DIR}/node`
/** Where the host-forward socket folder appears (read-only). */
export const FORWARD_DIR = '/run/harness-watch/forward'

/** One bind mount. */
export interface Mount {
  source: string
  target: string
  readOnly: boolean
}

/**
 * The bind mounts of one container (pure): the workspace at the task's working directory and at its
 * own path (commands built on the host name it), other writable folders and read-only folders at their
 * own paths, the host's Node at NODE_DIR, and the forward sockets. Duplicates are dropped; a
 * read-only folder inside a writable one is left to the writable mount.
 */
export function mountsFor(opts: {
  workspace: string | null
  workdir: string
  writable: string[]
  readOnly: string[]
  node: string
  forwardDir: string | null
  binds?: Mount[]
}): Mount[] {
  const out: Mount[] = []
  const add = (m: Mount) => {
    if (!out.some((o) => o.target === m.target)) out.push(m)
  }
  if (opts.workspace) add({ source: opts.workspace, target: opts.workdir, readOnly: false })
  for (const b of opts.binds ?? []) add(b)
  for (const d of opts.writable) add({ source: d, target: d, readOnly: false })
  const inside = (d: string) => opts.writable.some((w) => d === w || d.startsWith(`${w}/`))
  for (const d of opts.readOnly) if (!inside(d)) add({ source: d, target: d, readOnly: true })
  add({ source: opts.node, target: NODE_IN, readOnly: true })
  if (opts.forwardDir) add({ source: opts.forwardDir, target: FORWARD_DIR, readOnly: true })
  return out
}

/** `-v` flags for mounts (pure); a path holding a comma or colon cannot be expressed and is refused. */
export function mountFlags(mounts: Mount[]): string[] {
  return mounts.flatMap((m) => {
    for (const p of [m.source, m.target]) {
      if (!path.isAbsolute(p) || /[,:\n\0]/.test(p))
        throw new Error(`cannot mount ${JSON.stringify(p)} into a container`)
    }
    return ['-v', `${m.source}:${m.target}:${m.readOnly ? 'ro' : 'rw'}`]
  })
}

/** A working directory on the host, as the container sees it (the workspace is also at its own path). */
export function mapCwd(cwd: string, workspace: string | null, workdir: string): string {
  if (workspace && (cwd === workspace || cwd.startsWith(`${workspace}/`)))
    return workdir + cwd.slice(workspace.length)
  return cwd
}
