import { readFile } from 'node:fs/promises'
import type { ContainerRuntime } from './runtime.js'

/** Resources applied to one container (manifest `sandbox.container.resources`, a task's task.toml wins). */
export interface Resources {
  cpus: number
  memory_mb: number
  pids: number
  /** Disk for the container's writable layer; null = not limited (most storage drivers cannot). */
  storage_mb: number | null
}

export const DEFAULT_RESOURCES: Resources = { cpus: 2, memory_mb: 4096, pids: 1024, storage_mb: null }

/** `run` flags for the limits: memory without swap, cpus, pids (pure). */
export function limitFlags(r: Resources): string[] {
  return [
    '--memory',
    `${r.memory_mb}m`,
    '--memory-swap',
    `${r.memory_mb}m`,
    '--cpus',
    String(r.cpus),
    '--pids-limit',
    String(r.pids),
  ]
}

/** The memory cgroup's OOM-kill count from cgroup v1 `memory.oom_control` or v2 `memory.events` text (pure). */
export function parseOomKills(text: string): number | null {
  const m = /^oom_kill\s+(\d+)$/m.exec(text)
  return m?.[1] ? Number(m[1]) : null
}

/** How often the pids limit refused a fork, from `pids.events` text (`max N`; pure). */
export function parsePidsMax(text: string): number | null {
  const m = /^max\s+(\d+)$/m.exec(text)
  return m?.[1] ? Number(m[1]) : null
}

/** Where a process's cgroup of `controller` is (from /proc/<pid>/cgroup text; pure). */
export function memoryCgroup(
  procCgroup: string,
  version: ContainerRuntime['cgroup'],
  controller: 'memory' | 'pids' = 'memory',
): string | null {
  for (const line of procCgroup.split('\n')) {
    const [, controllers, p] = line.split(':')
    if (p === undefined || controllers === undefined) continue
    if (version === 'v1' && controllers.split(',').includes(controller))
      return `/sys/fs/cgroup/${controller}${p}`
    if (version === 'v2' && controllers === '') return `/sys/fs/cgroup${p}`
  }
  return null
}

/**
 * A running container's OOM-kill counter (read it once before the container is removed). The runtime
 * may not report OOMKilled on cgroup v1, so the kernel's own count is read. Null when unreadable
 * (another host's engine, no permission).
 */
export async function readOomKills(rt: ContainerRuntime, initPid: number): Promise<number | null> {
  if (initPid <= 0) return null
  const cg = await readFile(`/proc/${initPid}/cgroup`, 'utf8').catch(() => null)
  const dir = cg ? memoryCgroup(cg, rt.cgroup) : null
  if (!dir) return null
  const text = await readFile(
    `${dir}/${rt.cgroup === 'v1' ? 'memory.oom_control' : 'memory.events'}`,
    'utf8',
  ).catch(() => null)
  return text === null ? null : parseOomKills(text)
}

/** The container's count of forks refused by its pids limit; null when unreadable. */
export async function readPidsRefusals(rt: ContainerRuntime, initPid: number): Promise<number | null> {
  if (initPid <= 0) return null
  const cg = await readFile(`/proc/${initPid}/cgroup`, 'utf8').catch(() => null)
  const dir = cg ? memoryCgroup(cg, rt.cgroup, 'pids') : null
  if (!dir) return null
  const text = await readFile(`${dir}/pids.events`, 'utf8').catch(() => null)
  return text === null ? null : parsePidsMax(text)
}
