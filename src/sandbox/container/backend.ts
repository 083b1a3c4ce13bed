import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { statfsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { killGroup, runHarnessProcess } from '../../process/exec.js'
import { BASE_IMAGE_REF } from '../../util/image-ref.js'
import { pidAlive } from '../../util/pid.js'
import type {
  ContainerRequest,
  ContainerResources,
  ExecCommand,
  ExecLimits,
  ExecResult,
  ImageSource,
  ProbeResult,
  Sandbox,
  SandboxBackend,
  SandboxProvenance,
  SandboxSpec,
} from '../contract.js'
import { type HostForwards, openHostForwards, removeStaleForwardDirs } from '../forward/host.js'
import { FORWARDER_READY, loopbackForwarderArgs } from '../forward/loopback.js'
import { ensureBaseImage } from './base-image.js'
import { labelFlags, removeLeftovers, removeSync, rmArgs } from './cleanup.js'
import { agentIdentity, containerPath, type ImageConfig, parseImageConfig } from './identity.js'
import { buildTaskImage, ImageError, type ResolvedImage, resolveImage } from './image.js'
import { readOomKills, readPidsRefusals } from './limits.js'
import { FORWARD_DIR, mapCwd, mountsFor, NODE_IN } from './mounts.js'
import { INSTALL_HINT, type ProbeOutcome, probeRuntime } from './probe.js'
import { ID_BASE, runArgs } from './run-args.js'
import { type ContainerRuntime, cli, cliEnv, lastLines } from './runtime.js'
import type { ContainerSetting } from './settings.js'

export { ID_BASE } from './run-args.js'

/** A fault of the container environment that no harness caused (missing runtime, image, start failure). */
export class ContainerFault extends Error {
  constructor(
    readonly kind: 'runtime_missing' | 'runtime_unusable' | 'image' | 'start_failed',
    message: string,
    readonly tail = '',
  ) {
    super(tail ? `${message}: ${tail}` : message)
  }
}

/** Memo of promises by key (a failure is forgotten so a later call may retry). */
function memo<T>(m: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = m.get(key)
  if (!p) {
    p = make()
    m.set(key, p)
    p.catch(() => m.delete(key))
  }
  return p
}

/** The container backend, with what it resolved so far (for the leg's notes and tests). */
export interface ContainerBackend extends SandboxBackend {
  kind: 'container'
  /** The probed runtime (probing once, with the manifest's image as the trial). */
  runtime(): Promise<ContainerRuntime>
  /** Resolve (find, pull or build) an image once per process. */
  image(source: ImageSource | undefined, signal?: AbortSignal): Promise<ResolvedImage & ImageConfig>
  /** Containers removed at start because their run had crashed. */
  leftovers(): Promise<string[]>
}

/**
 * The container backend (sandbox.backend: container): each sandbox is one container of the task's
 * image, driven through the engine's CLI (docker or podman, probed). The container runs `--network
 * none` (proxy-only: the recording proxy's and tool-bridge's loopback ports are forwarded through unix
 * sockets), all capabilities dropped, no new privileges, memory/cpus/pids limits, container root mapped
 * to an unprivileged host id where the engine can (`--uidmap`); the workspace at the task's working
 * directory, the harness install and the host's Node read-only, the attempt's home writable. Commands
 * run with `exec`; close removes the container (labelled, so a crashed run's are removed at the next
 * start). A spec without `container` (installs, version probes, git on the workspace) runs through
 * `aux`, the backend for jobs beside the container.
 */
export function containerBackend(
  setting: ContainerSetting,
  aux: () => Promise<SandboxBackend>,
  host: HostIdentity = {},
): ContainerBackend {
  const images = new Map<string, Promise<ResolvedImage & ImageConfig>>()
  let runtimeP: Promise<ContainerRuntime> | null = null
  let leftoversP: Promise<string[]> | null = null
  let probed: ProbeOutcome | null = null
  let storageP: Promise<boolean> | null = null
  /**
   * Whether this engine can limit a container's writable layer (`--storage-opt size=`: overlay needs an
   * XFS backing file system with project quotas; ext4, as here and on GitHub's runners, refuses). Tried
   * once, with the first image that asks for a limit.
   */
  const storageLimit = (rt: ContainerRuntime, imageId: string): Promise<boolean> => {
    storageP ??= cli(
      rt.bin,
      [
        'run',
        '--rm',
        '--network',
        'none',
        ...rt.runFlags,
        '--storage-opt',
        'size=64m',
        '--entrypoint',
        'sh',
        imageId,
        '-c',
        ':',
      ],
      { env: rt.env, timeoutMs: 60_000 },
    ).then((r) => r.exitCode === 0)
    return storageP
  }

  const runtime = (): Promise<ContainerRuntime> => {
    runtimeP ??= (async () => {
      // The trial run needs an image that is here: the manifest's, when it is local already.
      const first = await probeRuntime(setting.runtime, null)
      if (!first.ok) throw runtimeFault(first.reason)
      const trial = await resolveImage(first.runtime, setting.image).catch(() => null)
      const base = trial ? null : await ensureBaseImage(first.runtime).catch(() => null)
      const out = await probeRuntime(setting.runtime, trial?.ref ?? base?.ref ?? null)
      probed = out
      if (!out.ok) throw runtimeFault(out.reason)
      return out.runtime
    })()
    runtimeP.catch(() => {
      runtimeP = null
    })
    return runtimeP
  }

  const image = async (source: ImageSource | undefined, signal?: AbortSignal) => {
    const rt = await runtime()
    const src = source ?? { ref: setting.image }
    const key = 'ref' in src ? `ref:${src.ref}` : `build:${src.build}`
    return memo(images, key, async () => {
      let r: ResolvedImage
      try {
        if ('ref' in src) {
          r = await resolveImage(rt, src.ref, signal).catch(async (e) => {
            if (src.ref !== BASE_IMAGE_REF || !(e instanceof ImageError) || e.kind !== 'pull_failed') throw e
            const b = await ensureBaseImage(rt)
            return { ref: b.ref, id: b.id, source: b.cached ? 'local' : 'built' } as ResolvedImage
          })
        } else {
          r = await buildTaskImage(rt, src.build, src.name, { timeoutMs: src.timeoutS * 1000, signal })
        }
      } catch (e) {
        if (e instanceof ImageError) throw new ContainerFault('image', e.message, e.tail)
        throw e
      }
      const config = await cli(rt.bin, ['image', 'inspect', '--format', '{{json .Config}}', r.id], {
        env: rt.env,
      })
      return { ...r, ...parseImageConfig(config.stdout) }
    })
  }

  const leftovers = (): Promise<string[]> => {
    // A crashed run's containers (by label) and its forward socket folders (by owner pid).
    leftoversP ??= runtime().then(async (rt) => {
      const [containers] = await Promise.all([removeLeftovers(rt), removeStaleForwardDirs()])
      return containers
    })
    return leftoversP
  }

  return {
    kind: 'container',
    capabilities: { hidesProcesses: true, separateUser: true, hidesFiles: true, readOnlySystem: false },
    runtime,
    image,
    leftovers,
    async probe(): Promise<ProbeResult> {
      if (probed)
        return probed.ok ? { ok: true, reason: probed.runtime.summary } : { ok: false, reason: probed.reason }
      const r = await probeRuntime(setting.runtime, null)
      return r.ok ? { ok: true, reason: r.runtime.summary } : { ok: false, reason: r.reason }
    },
    async exportWorkdir(source: ImageSource, dest: string, signal?: AbortSignal): Promise<string> {
      const rt = await runtime()
      const img = await image(source, signal)
      const name = `hw-export-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`
      const made = await cli(rt.bin, ['create', '--name', name, ...labelFlags('export'), img.id, 'true'], {
        env: rt.env,
      })
      if (made.exitCode !== 0)
        throw new ContainerFault(
          'start_failed',
          `cannot create a container of ${img.ref}`,
          lastLines(made.stderr, 3),
        )
      try {
        const cp = await cli(rt.bin, ['cp', `${name}:${img.workdir}/.`, dest], {
          env: rt.env,
          timeoutMs: 30 * 60_000,
        })
        if (cp.exitCode !== 0)
          throw new ContainerFault(
            'image',
            `cannot copy ${img.workdir} out of ${img.ref}`,
            lastLines(cp.stderr, 3),
          )
      } finally {
        await cli(rt.bin, ['rm', '-f', name], { env: rt.env })
      }
      return img.workdir
    },
    async open(spec: SandboxSpec): Promise<Sandbox> {
      if (!spec.container) return (await aux()).open(spec)
      const rt = await runtime()
      await leftovers()
      const rtSeen = host.idMap === undefined ? rt : { ...rt, idMap: host.idMap }
      const img = await image(spec.container.image)
      const wantsStorage = mergeResources(setting.resources, spec.container.resources).storage_mb !== null
      const storage = wantsStorage ? await storageLimit(rt, img.id) : false
      return openContainer(rtSeen, setting, spec, spec.container, img, host, storage)
    },
  }
}

function runtimeFault(reason: string): ContainerFault {
  const missing = reason.includes(INSTALL_HINT)
  return new ContainerFault(missing ? 'runtime_missing' : 'runtime_unusable', reason)
}

/** Resources: the task's values over the manifest's. */
export function mergeResources(
  base: ContainerResources,
  task: Partial<ContainerResources> | undefined,
): ContainerResources {
  return { ...base, ...Object.fromEntries(Object.entries(task ?? {}).filter(([, v]) => v !== undefined)) }
}

let counter = 0

/** The invoking user as the backend sees it (tests set these to take the path of an engine without id mapping). */
export interface HostIdentity {
  uid?: number
  gid?: number
  idMap?: boolean
}

async function openContainer(
  rt: ContainerRuntime,
  setting: ContainerSetting,
  spec: SandboxSpec,
  req: ContainerRequest,
  img: ResolvedImage & ImageConfig,
  host: HostIdentity,
  storage: boolean,
): Promise<Sandbox> {
  const workspace = spec.writable[0] ?? null
  const workdir = req.workdir ?? img.workdir
  const network = req.network ?? (setting.network === 'task' ? 'proxy-only' : setting.network)
  const resources = mergeResources(setting.resources, req.resources)
  const name = `hw-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}`
  const ports = network === 'none' ? [] : (req.ports ?? spec.loopbackPorts ?? [])
  const forwards: HostForwards | null = ports.length > 0 ? await openHostForwards(ports) : null
  const writable = [...spec.writable, ...(req.binds ?? []).filter((b) => !b.readOnly).map((b) => b.source)]
  const me = { uid: host.uid ?? process.getuid?.() ?? 0, gid: host.gid ?? process.getgid?.() ?? 0 }
  const { mapIds } = agentIdentity(rt, setting.user, me)
  const give = async (uid: number, gid: number) => {
    if (!mapIds || writable.length === 0) return
    await cli('chown', ['-R', `${uid}:${gid}`, ...writable], { timeoutMs: 120_000 })
  }
  let child: ChildProcess | null = null
  const envDir = await mkdtemp(path.join(os.tmpdir(), 'hw-cenv-'))
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await cli(rt.bin, rmArgs(rt, [name]), {
      env: rt.env,
      timeoutMs: 60_000,
    })
    child?.kill('SIGKILL')
    await forwards?.close()
    await rm(envDir, { recursive: true, force: true })
    await give(me.uid, me.gid)
  }
  try {
    await give(ID_BASE, ID_BASE)
    const mounts = mountsFor({
      workspace,
      workdir,
      writable,
      readOnly: spec.readOnly,
      node: process.execPath,
      forwardDir: forwards?.dir ?? null,
      binds: req.binds,
    })
    const { args: run } = runArgs({
      rt,
      me,
      configuredUser: setting.user,
      name,
      phase: req.phase,
      network,
      resources,
      storage,
      workdir,
      mounts,
    })
    const args = [
      ...run,
      '--entrypoint',
      'sh',
      img.id,
      // PID 1 is a small `sleep` (an out-of-memory kill picks the largest process, never the keep-alive);
      // the loopback forwarder runs beside it and prints its ready line on the container's stdout.
      '-c',
      '"$0" "$@" & exec sleep 2147483647',
      NODE_IN,
      ...loopbackForwarderArgs(FORWARD_DIR, forwards?.forwards.map((f) => f.port) ?? []),
    ]
    child = spawn(rt.bin, args, { env: cliEnv(rt.env), stdio: ['ignore', 'pipe', 'pipe'] })
    await waitReady(child, 60_000)
  } catch (e) {
    await close()
    if (e instanceof ContainerFault) throw e
    throw new ContainerFault(
      'start_failed',
      `the container for ${img.ref} would not start`,
      (e as Error).message,
    )
  }
  const provenance: SandboxProvenance = {
    runtime: rt.name,
    runtime_version: rt.version,
    image_ref: img.ref,
    image_id: img.id,
    workdir,
    network,
    resources,
    ...(resources.storage_mb !== null ? { storage_enforced: storage } : {}),
  }
  return {
    kind: 'container',
    root: workspace ?? workdir,
    // proxy-only and none: the container's own network namespace holds only `lo`.
    network: network === 'public' ? 'host' : 'proxy-only',
    provenance,
    exec: (cmd, limits) => {
      const mounted = [...writable, ...spec.readOnly]
      const env = { ...cmd.env, PATH: containerPath(cmd.env.PATH, img.path, mounted) }
      return execIn(rt, name, { ...cmd, env }, limits, { workspace, workdir, envDir, writable })
    },
    close,
    async settle() {
      if (closed) return false
      // kill(-1) reaches every process the caller may signal but itself and PID 1 (the keep-alive).
      const k = await cli(
        rt.bin,
        ['exec', name, 'sh', '-c', 'kill -KILL -1; sleep 0.2; kill -KILL -1; true'],
        {
          env: rt.env,
          timeoutMs: 30_000,
        },
      )
      await forwards?.close()
      return k.exitCode === 0 && (await running(rt, name))
    },
    async reclaim() {
      if (!closed) await give(ID_BASE, ID_BASE)
    },
    async copyIn(source, target) {
      const r = await cli(rt.bin, ['cp', source, `${name}:${target}`], {
        env: rt.env,
        timeoutMs: 10 * 60_000,
      })
      if (r.exitCode !== 0)
        throw new ContainerFault(
          'start_failed',
          `cannot copy ${target} into the container`,
          lastLines(r.stderr, 3),
        )
    },
    async copyOut(source, dest) {
      const r = await cli(rt.bin, ['cp', `${name}:${source}/.`, dest], {
        env: rt.env,
        timeoutMs: 10 * 60_000,
      })
      if (r.exitCode !== 0)
        throw new ContainerFault(
          'start_failed',
          `cannot copy ${source} out of the container`,
          lastLines(r.stderr, 3),
        )
    },
  }
}

/** Wait for the forwarder's ready line; reject with what the runtime printed if it ends first. */
function waitReady(child: ChildProcess, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(
      () => reject(new Error(`no start within ${ms / 1000} s: ${lastLines(err, 3)}`)),
      ms,
    )
    child.stdout?.on('data', (c: Buffer) => {
      out += c
      if (out.includes(FORWARDER_READY)) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.stderr?.on('data', (c: Buffer) => {
      err += c
    })
    child.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`exited ${code}: ${lastLines(err || out, 3)}`))
    })
  })
}

async function execIn(
  rt: ContainerRuntime,
  name: string,
  cmd: ExecCommand,
  limits: ExecLimits,
  where: { workspace: string | null; workdir: string; envDir: string; writable: string[] },
): Promise<ExecResult> {
  const env = cmd.env
  // Values go through a private file, not the command line (other host users can read command lines).
  const file = path.join(where.envDir, `${randomBytes(4).toString('hex')}.env`)
  const plain = Object.entries(env).filter(([, v]) => !/[\n\0]/.test(v))
  await writeFile(file, plain.map(([k, v]) => `${k}=${v}`).join('\n'), { mode: 0o600 })
  const multi = Object.entries(env).filter(([, v]) => /\n/.test(v) && !v.includes('\0'))
  const command = cmd.command === process.execPath ? NODE_IN : cmd.command
  const args = [
    'exec',
    ...(cmd.stdin !== undefined ? ['-i'] : []),
    '--env-file',
    file,
    // A value with a line break cannot go in the file: it is named here and read by the runtime CLI
    // from its own environment (`-e NAME`), so no value is on the command line.
    ...multi.flatMap(([k]) => ['-e', k]),
    '--workdir',
    mapCwd(cmd.cwd, where.workspace, where.workdir),
    name,
    command,
    ...cmd.args,
  ]
  const pid = await initPid(rt, name)
  const before = { ooms: (await readOomKills(rt, pid)) ?? 0, pids: (await readPidsRefusals(rt, pid)) ?? 0 }
  const r: ExecResult = await runHarnessProcess(
    {
      command: rt.bin,
      args,
      cwd: '/',
      env: { ...cliEnv(rt.env), ...Object.fromEntries(multi) },
      stdin: cmd.stdin,
    },
    {
      ...limits,
      sweepHome: undefined,
      // Stopping a running exec stops the container: it is removed, and everything in it with it. The
      // group sweep after a command ended on its own (its client is gone) leaves the container be.
      kill: (leader, signal) => {
        if (pidAlive(leader)) removeSync(rt, name)
        else killGroup(leader, signal)
      },
    },
  )
  await rm(file, { force: true })
  if (r.timedOut || r.aborted || r.exitCode === 0) return r
  if (r.exitCode === 137) {
    const ooms = await readOomKills(rt, pid)
    if (ooms !== null && ooms > before.ooms) {
      return {
        ...r,
        fault: { kind: 'oom', detail: `killed for lack of memory (exit 137, cgroup oom_kill ${ooms})` },
      }
    }
    if (!(await running(rt, name))) {
      return {
        ...r,
        fault: { kind: 'container_exit', detail: 'the container ended during the command (exit 137)' },
      }
    }
  }
  const full = fullFolders(where.writable)
  if (full.length > 0) {
    return {
      ...r,
      fault: { kind: 'disk', detail: `no space left on the file system of ${full.join(', ')}` },
    }
  }
  const refused = await readPidsRefusals(rt, pid)
  if (refused !== null && refused > before.pids) {
    return {
      ...r,
      fault: { kind: 'pids', detail: `the pids limit refused ${refused - before.pids} process start(s)` },
    }
  }
  return r
}

/** Space under which a file system counts as exhausted (a command that failed there ran out of disk). */
const DISK_FULL_BYTES = 1024 * 1024

/** The writable folders whose file system is (nearly) full, read by the host: no harness can forge it. */
export function fullFolders(folders: string[]): string[] {
  return folders.filter((d) => {
    try {
      const s = statfsSync(d)
      return s.bavail * s.bsize < DISK_FULL_BYTES
    } catch {
      return false
    }
  })
}

async function running(rt: ContainerRuntime, name: string): Promise<boolean> {
  const r = await cli(rt.bin, ['inspect', '--format', '{{.State.Running}}', name], {
    env: rt.env,
    timeoutMs: 15_000,
  })
  return r.stdout.trim() === 'true'
}

async function initPid(rt: ContainerRuntime, name: string): Promise<number> {
  const r = await cli(rt.bin, ['inspect', '--format', '{{.State.Pid}}', name], {
    env: rt.env,
    timeoutMs: 15_000,
  })
  const n = Number(r.stdout.trim())
  return Number.isInteger(n) ? n : 0
}
