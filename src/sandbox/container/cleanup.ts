import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { pidAlive } from '../../util/pid.js'
import { type ContainerRuntime, cli, cliEnv } from './runtime.js'

/** Every container this tool starts carries this label… */
export const LABEL = 'io.harness-watch'
/** …and this one naming its owner, `<hostname>:<pid>`, so a later run knows whose it was. */
export const OWNER_LABEL = 'io.harness-watch.owner'

export function ownerTag(pid = process.pid): string {
  return `${os.hostname()}:${pid}`
}

/** Labels for `run`: ours, the owner, and what the container is for. */
export function labelFlags(purpose: string): string[] {
  return [
    '--label',
    `${LABEL}=1`,
    '--label',
    `${OWNER_LABEL}=${ownerTag()}`,
    '--label',
    `${LABEL}.purpose=${purpose}`,
  ]
}

/** Whether an owner tag names a process of this host that is gone (pure but for the liveness check). */
export function ownerGone(tag: string, alive: (pid: number) => boolean = pidAlive): boolean {
  const i = tag.lastIndexOf(':')
  const host = tag.slice(0, i)
  const pid = Number(tag.slice(i + 1))
  if (host !== os.hostname() || !Number.isInteger(pid) || pid <= 0) return false
  return !alive(pid)
}

/**
 * Remove containers a crashed run left behind: those labelled ours whose owner process on this host
 * is gone (a concurrent run's containers are left alone). Returns the names removed.
 */
export async function removeLeftovers(rt: ContainerRuntime): Promise<string[]> {
  const r = await cli(
    rt.bin,
    ['ps', '-a', '--filter', `label=${LABEL}=1`, '--format', `{{.Names}}\t{{.Labels}}`],
    {
      env: rt.env,
      timeoutMs: 30_000,
    },
  )
  if (r.exitCode !== 0) return []
  const gone: string[] = []
  for (const line of r.stdout.split('\n').filter(Boolean)) {
    const [name, labels = ''] = line.split('\t')
    const m = new RegExp(`${OWNER_LABEL.replace(/\./g, '\\.')}[=:]([^,\\s\\]}]+)`).exec(labels)
    if (name && m?.[1] && ownerGone(m[1])) gone.push(name)
  }
  if (gone.length > 0) await cli(rt.bin, rmArgs(rt, gone), { env: rt.env, timeoutMs: 60_000 })
  return gone
}

/**
 * `rm` of containers, stopping them at once (pure): `-f` kills them; podman's `-t 0` skips its stop
 * grace period (docker's `rm` has no `-t`, and refuses it).
 */
export function rmArgs(rt: Pick<ContainerRuntime, 'name'>, names: string[]): string[] {
  return ['rm', '-f', ...(rt.name === 'podman' ? ['-t', '0'] : []), ...names]
}

/** Remove one container now, synchronously (signal handlers, crash paths). Never throws. */
export function removeSync(rt: Pick<ContainerRuntime, 'bin' | 'env' | 'name'>, name: string): void {
  try {
    // The CLI's own environment (DOCKER_HOST, CONTAINER_HOST…): the container is on that engine.
    execFileSync(rt.bin, rmArgs(rt, [name]), { stdio: 'ignore', timeout: 30_000, env: cliEnv(rt.env) })
  } catch {
    // gone already, or the engine is unreachable: the next run's leftover sweep removes it
  }
}
