import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { agentIdentity } from '../../../src/sandbox/container/identity.js'
import { type EngineInfo, parseInfo, runtimeFromProbe } from '../../../src/sandbox/container/probe.js'
import { ID_BASE, runArgs } from '../../../src/sandbox/container/run-args.js'

// From the engine's `info --format json` answer to the `run` flags, without an engine: the hosts the
// container tests cannot reach. The GitHub-hosted runner's answer (cgroup v2, systemd, overlay2, a
// rootful daemon the runner user reaches through the docker group) is a fixture in the shape of Docker's
// documented `docker info` JSON (the Engine API's SystemInfo); the others are the fields that decide.

const HERE = path.dirname(fileURLToPath(import.meta.url))
const githubInfo = readFileSync(path.join(HERE, 'fixtures', 'docker-info-github-runner.json'), 'utf8')
/** The hosted runner's user (uid 1001) and its primary group, as `id` prints them there. */
const runnerUser = { uid: 1001, gid: 118 }
const resources = { cpus: 2, memory_mb: 4096, pids: 1024, storage_mb: null }

function argsFor(
  info: EngineInfo,
  name: 'docker' | 'podman',
  me: { uid: number; gid: number },
  ulimits: string[] = [],
) {
  const rt = runtimeFromProbe({
    name,
    version: '28.0.4',
    info,
    settings: { ulimits, runtime: null },
    env: {},
    tried: ulimits.length > 0 ? [`ulimits ${ulimits.join(' ')}`] : [],
  })
  const r = runArgs({
    rt,
    me,
    configuredUser: '0:0',
    name: 'hw-1-1-abc',
    phase: 'agent',
    network: 'proxy-only',
    resources,
    storage: false,
    workdir: '/app',
    mounts: [{ source: '/tmp/hw/ws', target: '/app', readOnly: false }],
  })
  return { rt, ...r }
}

/** The value after a flag (`--user 1001:118` → `1001:118`); undefined when the flag is absent. */
const flagValue = (args: string[], flag: string) => {
  const i = args.indexOf(flag)
  return i < 0 ? undefined : args[i + 1]
}

describe('a GitHub-hosted runner: rootful Docker, cgroup v2, overlay2', () => {
  const info = parseInfo('docker', githubInfo)

  it('reads the answer: cgroup v2, runc, not rootless, no user-namespace remapping', () => {
    expect(info).toEqual({
      cgroup: 'v2',
      ociRuntime: 'runc',
      rootless: false,
      userns: false,
      engineVersion: '28.0.4',
    })
  })

  it('runs the agent as the runner user, with no id mapping, no adjustments, and every lock-down flag', () => {
    const { rt, args, user, mapIds } = argsFor(info as EngineInfo, 'docker', runnerUser)
    expect(rt).toMatchObject({ name: 'docker', runFlags: [], idMap: false, cgroup: 'v2' })
    expect(rt.summary).toBe('docker 28.0.4, cgroup v2, runc')
    expect({ user, mapIds }).toEqual({ user: '1001:118', mapIds: false })
    expect(flagValue(args, '--user')).toBe('1001:118')
    // Docker's CLI knows no --uidmap: it must never be asked for one.
    expect(args).not.toContain('--uidmap')
    expect(args).not.toContain('--gidmap')
    expect(args).not.toContain('--ulimit')
    // Docker spells it `--pull never`; podman's `--pull=never` form is the same flag there.
    expect(flagValue(args, '--pull')).toBe('never')
    expect(args).not.toContain('--pull=never')
    expect(flagValue(args, '--network')).toBe('none')
    expect(flagValue(args, '--cap-drop')).toBe('all')
    expect(flagValue(args, '--security-opt')).toBe('no-new-privileges')
    expect(flagValue(args, '--memory')).toBe('4096m')
    expect(flagValue(args, '--memory-swap')).toBe('4096m')
    expect(flagValue(args, '--cpus')).toBe('2')
    expect(flagValue(args, '--pids-limit')).toBe('1024')
    expect(flagValue(args, '-v')).toBe('/tmp/hw/ws:/app:rw')
    expect(args).not.toContain('--storage-opt')
  })

  it('a storage limit reaches the engine only where the trial run showed it can enforce one', () => {
    const rt = runtimeFromProbe({
      name: 'docker',
      version: '28.0.4',
      info: info as EngineInfo,
      settings: { ulimits: [], runtime: null },
      env: {},
      tried: [],
    })
    const base = {
      rt,
      me: runnerUser,
      configuredUser: '0:0',
      name: 'n',
      phase: 'agent',
      network: 'proxy-only' as const,
      resources: { ...resources, storage_mb: 2048 },
      workdir: '/app',
      mounts: [],
    }
    expect(flagValue(runArgs({ ...base, storage: true }).args, '--storage-opt')).toBe('size=2048m')
    expect(runArgs({ ...base, storage: false }).args).not.toContain('--storage-opt')
  })

  it('a task with the public network gets the default bridge: no --network none', () => {
    const rt = runtimeFromProbe({
      name: 'docker',
      version: '28.0.4',
      info: info as EngineInfo,
      settings: { ulimits: [], runtime: null },
      env: {},
      tried: [],
    })
    const r = runArgs({
      rt,
      me: runnerUser,
      configuredUser: '0:0',
      name: 'n',
      phase: 'verifier',
      network: 'public',
      resources,
      storage: false,
      workdir: '/app',
      mounts: [],
    })
    expect(r.args).not.toContain('--network')
  })
})

describe('the other engines the flags depend on', () => {
  it('rootless Docker: container root is the invoking user; no mapping, no --user change', () => {
    const info = parseInfo(
      'docker',
      JSON.stringify({
        CgroupVersion: '2',
        DefaultRuntime: 'runc',
        SecurityOptions: ['name=seccomp,profile=builtin', 'name=rootless', 'name=cgroupns'],
      }),
    )
    const { args, mapIds } = argsFor(info as EngineInfo, 'docker', runnerUser)
    expect(mapIds).toBe(false)
    expect(flagValue(args, '--user')).toBe('0:0')
  })

  it('Docker with userns-remap: the daemon maps ids; the configured user', () => {
    const info = parseInfo(
      'docker',
      JSON.stringify({
        CgroupVersion: '2',
        DefaultRuntime: 'runc',
        SecurityOptions: ['name=seccomp,profile=builtin', 'name=userns'],
      }),
    )
    const { args } = argsFor(info as EngineInfo, 'docker', runnerUser)
    expect(flagValue(args, '--user')).toBe('0:0')
    expect(args).not.toContain('--uidmap')
  })

  it('Docker 20.10 started by root on a hybrid cgroup v1 host, with ulimits the trial run asked for', () => {
    const info = parseInfo(
      'docker',
      JSON.stringify({
        CgroupVersion: '1',
        CgroupDriver: 'cgroupfs',
        DefaultRuntime: 'runc',
        Driver: 'overlay2',
        SecurityOptions: ['name=seccomp,profile=default'],
        ServerVersion: '20.10.24+dfsg1',
      }),
    )
    const ulimits = ['nofile=20000:20000', 'nproc=20000:20000']
    const { rt, args, user } = argsFor(info as EngineInfo, 'docker', { uid: 0, gid: 0 }, ulimits)
    // The daemon's version is what ran the containers; a newer client says so beside it.
    expect(rt.version).toBe('20.10.24+dfsg1')
    expect(rt.summary).toBe(
      'docker 20.10.24+dfsg1 (client 28.0.4), cgroup v1, runc (adjusted: ulimits nofile=20000:20000 nproc=20000:20000)',
    )
    expect(user).toBe('0:0')
    expect(args.filter((_a, i) => args[i - 1] === '--ulimit')).toEqual(ulimits)
  })

  it('root calling rootful podman: container root mapped to an unprivileged range; adjustments in containers.conf, not flags', () => {
    const info = parseInfo(
      'podman',
      JSON.stringify({
        host: { cgroupVersion: 'v1', ociRuntime: { name: 'runc' }, security: { rootless: false } },
      }),
    )
    const { rt, args, mapIds } = argsFor(info as EngineInfo, 'podman', { uid: 0, gid: 0 }, [
      'nofile=20000:20000',
    ])
    expect(rt.runFlags).toEqual([])
    expect(mapIds).toBe(true)
    expect(flagValue(args, '--uidmap')).toBe(`0:${ID_BASE}:65536`)
    expect(flagValue(args, '--gidmap')).toBe(`0:${ID_BASE}:65536`)
    expect(args).toContain('--pull=never')
    expect(args).not.toContain('--ulimit')
  })

  it('runArgs and agentIdentity agree on who the agent is', () => {
    const info = parseInfo('docker', githubInfo) as EngineInfo
    const { rt, user, mapIds } = argsFor(info, 'docker', runnerUser)
    expect(agentIdentity(rt, '0:0', runnerUser)).toEqual({ user, mapIds })
  })
})
