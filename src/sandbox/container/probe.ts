import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type ContainerRuntime, cli, lastLines } from './runtime.js'

export type RuntimeChoice = 'auto' | 'docker' | 'podman'

/** One line saying how to install a container runtime (the fault "runtime missing"). */
export const INSTALL_HINT =
  'install Podman (Debian/Ubuntu: sudo apt-get install podman runc uidmap) or Docker (https://docs.docker.com/engine/install/), or point DOCKER_HOST / CONTAINER_HOST at an engine'

/** The engine's answer to `info`, in the fields the flags depend on. */
export interface EngineInfo {
  cgroup: 'v1' | 'v2'
  ociRuntime: string
  rootless: boolean
  /** Docker's user-namespace remapping (`userns-remap`): container root is a subordinate host id. */
  userns: boolean
  /** The engine's own version (docker: ServerVersion; podman: version.Version); null when not given. */
  engineVersion: string | null
}

/** Parse `<bin> info --format json` of docker or podman (pure). Null when it is not that shape. */
export function parseInfo(name: 'docker' | 'podman', json: string): EngineInfo | null {
  let v: Record<string, unknown>
  try {
    v = JSON.parse(json) as Record<string, unknown>
  } catch {
    return null
  }
  if (name === 'podman') {
    const host = v.host as Record<string, unknown> | undefined
    if (!host) return null
    const oci = host.ociRuntime as { name?: string } | undefined
    const sec = host.security as { rootless?: boolean } | undefined
    const ver = (v.version as { Version?: unknown } | undefined)?.Version
    return {
      cgroup: host.cgroupVersion === 'v1' ? 'v1' : 'v2',
      ociRuntime: oci?.name ?? 'unknown',
      rootless: sec?.rootless === true,
      userns: false,
      engineVersion: typeof ver === 'string' && ver !== '' ? ver : null,
    }
  }
  if (typeof v.CgroupVersion !== 'string' && typeof v.DefaultRuntime !== 'string') return null
  const opts = Array.isArray(v.SecurityOptions) ? (v.SecurityOptions as string[]) : []
  return {
    cgroup: v.CgroupVersion === '1' ? 'v1' : 'v2',
    ociRuntime: typeof v.DefaultRuntime === 'string' ? v.DefaultRuntime : 'unknown',
    rootless: opts.some((o) => o.includes('rootless')),
    userns: opts.some((o) => o.includes('name=userns')),
    engineVersion: typeof v.ServerVersion === 'string' && v.ServerVersion !== '' ? v.ServerVersion : null,
  }
}

/** Hard limits of this process (Linux /proc/self/limits) for open files and processes; null = unlimited/unknown. */
export function parseHardLimits(text: string): { nofile: number | null; nproc: number | null } {
  const hard = (label: string): number | null => {
    const line = text.split('\n').find((l) => l.startsWith(label))
    const m = line?.slice(label.length).trim().split(/\s+/)
    const v = m?.[1]
    return v && /^\d+$/.test(v) ? Number(v) : null
  }
  return { nofile: hard('Max open files'), nproc: hard('Max processes') }
}

/** What a failed trial run says, and the adjustment that answers it (pure). */
export function adjustmentFor(stderr: string): 'ulimits' | 'runc' | null {
  if (/rlimit|ulimit|RLIMIT/i.test(stderr)) return 'ulimits'
  if (/cgroups? in hybrid mode|crun: .*cgroup|cgroup.*not supported/i.test(stderr)) return 'runc'
  return null
}

/** Outcome of probing: a runtime ready to use, or why none is. */
export type ProbeOutcome = { ok: true; runtime: ContainerRuntime } | { ok: false; reason: string }

/** What probing one CLI settled on: ulimits under the host's hard limits, an OCI runtime that works here. */
export interface ProbeSettings {
  ulimits: string[]
  runtime: string | null
}

/** `run` flags for a probe's adjustments (pure): docker takes them per run; podman reads its containers.conf. */
export function probeRunFlags(name: 'docker' | 'podman', settings: ProbeSettings): string[] {
  if (name !== 'docker') return []
  return [
    ...settings.ulimits.flatMap((u) => ['--ulimit', u]),
    ...(settings.runtime ? ['--runtime', settings.runtime] : []),
  ]
}

/**
 * The runtime a probe yields (pure): from the engine's `info` answer and the adjustments its trial run
 * needed. Docker takes the adjustments as `run` flags; podman through its private containers.conf
 * (`env`). Only root calling rootful podman maps ids with `--uidmap`; a rootful Docker daemon (a
 * GitHub-hosted runner's) has no such flag, so the agent runs as the invoking user there.
 */
export function runtimeFromProbe(p: {
  name: 'docker' | 'podman'
  /** The CLI's own version (`<bin> version` client side). */
  version: string
  info: EngineInfo
  settings: ProbeSettings
  env: Record<string, string>
  tried: string[]
}): ContainerRuntime {
  const { name, info, settings } = p
  const runFlags = probeRunFlags(name, settings)
  const ociRuntime = settings.runtime ?? info.ociRuntime
  // The engine's version is what ran the containers (a remote or older daemon behind a newer client).
  const version = info.engineVersion ?? p.version
  const client = info.engineVersion && info.engineVersion !== p.version ? ` (client ${p.version})` : ''
  return {
    name,
    bin: name,
    version,
    env: p.env,
    runFlags,
    cgroup: info.cgroup,
    ociRuntime,
    rootless: info.rootless,
    userns: info.userns,
    idMap: name === 'podman' && !info.rootless,
    summary: `${name} ${version}${client}, cgroup ${info.cgroup}, ${ociRuntime}${info.rootless ? ', rootless' : ''}${p.tried.length ? ` (adjusted: ${p.tried.join('; ')})` : ''}`,
  }
}

/** The private containers.conf (podman) holding the chosen settings; null when none is needed. */
function containersConf(s: ProbeSettings): string | null {
  if (s.ulimits.length === 0 && !s.runtime) return null
  const lines: string[] = []
  if (s.ulimits.length > 0)
    lines.push('[containers]', `default_ulimits = [${s.ulimits.map((u) => JSON.stringify(u)).join(', ')}]`)
  if (s.runtime) lines.push('[engine]', `runtime = ${JSON.stringify(s.runtime)}`)
  return `${lines.join('\n')}\n`
}

/**
 * Ulimit sets to try, highest first (pure): the host's hard limits, then lower steps. A process on the
 * runtime's path (conmon, the OCI runtime) may have lower hard limits than this one, and root without
 * CAP_SYS_RESOURCE cannot raise them: the first set the trial run accepts wins.
 */
export function ulimitSteps(hard: { nofile: number | null; nproc: number | null }): string[][] {
  const steps: [number, number][] = [
    [1048576, 4194304],
    [65536, 32768],
    [20000, 20000],
    [4096, 4096],
  ]
  const sets = steps.map(([f, p]) => {
    const nf = Math.min(f, hard.nofile ?? f)
    const np = Math.min(p, hard.nproc ?? p)
    return [`nofile=${nf}:${nf}`, `nproc=${np}:${np}`]
  })
  return sets.filter((s, i) => sets.findIndex((o) => o.join() === s.join()) === i)
}

async function hostUlimitSteps(): Promise<string[][]> {
  return ulimitSteps(parseHardLimits(await readFile('/proc/self/limits', 'utf8').catch(() => '')))
}

/**
 * Probe one CLI: `version`, `info` (the engine answers; cgroup version, OCI runtime, rootless), then,
 * when `trialImage` is given, one `run --rm --network none <image> true`; a refusal it knows is
 * answered once each (ulimits at the host's hard limits; runc where crun refuses hybrid cgroups),
 * through a private containers.conf for podman, run flags for docker. The settings are this host's
 * answers, never assumed.
 */
export async function probeOne(
  name: 'docker' | 'podman',
  trialImage: string | null,
  confDir?: string,
): Promise<ProbeOutcome> {
  const ver = await cli(name, ['version', '--format', '{{.Client.Version}}'], { timeoutMs: 15_000 })
  if (ver.missing) return { ok: false, reason: `${name} is not installed` }
  const settings: ProbeSettings = { ulimits: [], runtime: null }
  let env: Record<string, string> = {}
  const apply = async (): Promise<void> => {
    const conf = containersConf(settings)
    if (name !== 'podman' || !conf) return
    const dir = confDir ?? (await mkdtemp(path.join(os.tmpdir(), 'hw-containers-')))
    const file = path.join(dir, 'containers.conf')
    await writeFile(file, conf)
    env = { CONTAINERS_CONF: file }
  }
  const runFlags = (): string[] => probeRunFlags(name, settings)
  const infoRun = await cli(name, ['info', '--format', 'json'], { timeoutMs: 30_000 })
  if (infoRun.exitCode !== 0) {
    return {
      ok: false,
      reason: `${name} is installed but its engine does not answer: ${lastLines(infoRun.stderr || infoRun.stdout, 2)}`,
    }
  }
  const info = parseInfo(name, infoRun.stdout)
  if (!info) return { ok: false, reason: `${name} info gave an answer this version cannot read` }
  const tried: string[] = []
  if (trialImage) {
    const steps = await hostUlimitSteps()
    let stepped = false
    for (let i = 0; i < 8; i++) {
      const r = await cli(name, ['run', '--rm', '--network', 'none', ...runFlags(), trialImage, 'true'], {
        env,
        timeoutMs: 60_000,
      })
      if (r.exitCode === 0) break
      const fix = adjustmentFor(r.stderr)
      const already =
        fix === 'ulimits' ? stepped && steps.length === 0 : fix === 'runc' ? settings.runtime !== null : true
      if (!fix || already) {
        return {
          ok: false,
          reason: `${name} cannot start a container here: ${lastLines(r.stderr || r.stdout, 2)} (tried: ${tried.join(', ') || 'defaults'}; try sandbox.container.runtime: ${name === 'podman' ? 'docker' : 'podman'})`,
        }
      }
      if (fix === 'ulimits') {
        settings.ulimits = steps.shift() ?? []
        stepped = true
      } else settings.runtime = 'runc'
      tried.push(fix === 'ulimits' ? `ulimits ${settings.ulimits.join(' ')}` : 'runtime runc')
      await apply()
    }
  }
  const version = ver.stdout.trim() || 'unknown'
  return { ok: true, runtime: runtimeFromProbe({ name, version, info, settings, env, tried }) }
}

/**
 * Probe the runtime the manifest asks for (`auto`: docker when its engine answers and can run the
 * trial, else podman). Never throws; a failure names what failed for each runtime tried.
 */
export async function probeRuntime(choice: RuntimeChoice, trialImage: string | null): Promise<ProbeOutcome> {
  const order: ('docker' | 'podman')[] = choice === 'auto' ? ['docker', 'podman'] : [choice]
  const reasons: string[] = []
  for (const name of order) {
    const r = await probeOne(name, trialImage)
    if (r.ok) return r
    reasons.push(r.reason)
  }
  const missing = reasons.every((r) => r.endsWith('is not installed'))
  return { ok: false, reason: `${reasons.join('; ')}${missing ? `: ${INSTALL_HINT}` : ''}` }
}
