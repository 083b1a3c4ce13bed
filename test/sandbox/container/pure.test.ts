import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseManifestText } from '../../../src/manifest/load.js'
import { scheduledWorkflowsUsing } from '../../../src/manifest/scheduled.js'
import { loopbackPorts } from '../../../src/run/attempt.js'
import { phaseNetwork } from '../../../src/run/container-request.js'
import { mergeResources } from '../../../src/sandbox/container/backend.js'
import { baseKey, debLines } from '../../../src/sandbox/container/base-image.js'
import { ownerGone, rmArgs } from '../../../src/sandbox/container/cleanup.js'
import {
  agentIdentity,
  containerPath,
  DEFAULT_IMAGE_PATH,
  parseImageConfig,
} from '../../../src/sandbox/container/identity.js'
import { fromImages } from '../../../src/sandbox/container/image.js'
import {
  limitFlags,
  memoryCgroup,
  parseOomKills,
  parsePidsMax,
} from '../../../src/sandbox/container/limits.js'
import { mapCwd, mountFlags, mountsFor, NODE_IN } from '../../../src/sandbox/container/mounts.js'
import {
  adjustmentFor,
  parseHardLimits,
  parseInfo,
  ulimitSteps,
} from '../../../src/sandbox/container/probe.js'
import { containerWarnings } from '../../../src/sandbox/container/warnings.js'
import { isHwError } from '../../../src/util/errors.js'
import { parseImageRef } from '../../../src/util/image-ref.js'

describe('image references', () => {
  it.each([
    [
      'localhost/harness-watch-base:bookworm',
      { name: 'localhost/harness-watch-base', tag: 'bookworm', digest: null },
    ],
    [
      'docker.io/swebench/sweb.eval.x86_64.django_1776_django-11099:latest',
      { name: 'docker.io/swebench/sweb.eval.x86_64.django_1776_django-11099', tag: 'latest', digest: null },
    ],
    [`ubuntu@sha256:${'a'.repeat(64)}`, { name: 'ubuntu', tag: null, digest: `sha256:${'a'.repeat(64)}` }],
    ['registry:5000/x/y:1.0', { name: 'registry:5000/x/y', tag: '1.0', digest: null }],
  ])('%s parses', (ref, want) => expect(parseImageRef(ref)).toEqual(want))

  it.each(['Upper/Case', 'a b', 'x:', `x@sha256:${'a'.repeat(63)}`, 'x@md5:abc', '/abs', ''])(
    '%j is refused',
    (ref) => expect(parseImageRef(ref)).toBeNull(),
  )

  it('FROM lines give the bases, not the stage names', () => {
    expect(fromImages('FROM a/b:1 AS build\nRUN x\nFROM build\nfrom --platform=linux/amd64 c\n')).toEqual([
      'a/b:1',
      'c',
    ])
  })
})

describe('probe answers', () => {
  it('reads podman and docker info', () => {
    const podman = JSON.stringify({
      host: { cgroupVersion: 'v1', ociRuntime: { name: 'runc' }, security: { rootless: false } },
      version: { APIVersion: '4.3.1', Version: '4.3.1' },
    })
    expect(parseInfo('podman', podman)).toEqual({
      cgroup: 'v1',
      ociRuntime: 'runc',
      rootless: false,
      userns: false,
      engineVersion: '4.3.1',
    })
    const docker = JSON.stringify({
      CgroupVersion: '2',
      DefaultRuntime: 'runc',
      SecurityOptions: ['name=seccomp', 'name=rootless'],
    })
    expect(parseInfo('docker', docker)).toEqual({
      cgroup: 'v2',
      ociRuntime: 'runc',
      rootless: true,
      userns: false,
      engineVersion: null,
    })
    const remapped = JSON.stringify({
      CgroupVersion: '2',
      DefaultRuntime: 'runc',
      SecurityOptions: ['name=apparmor', 'name=seccomp,profile=builtin', 'name=userns'],
    })
    expect(parseInfo('docker', remapped)).toMatchObject({ rootless: false, userns: true })
    expect(parseInfo('docker', 'not json')).toBeNull()
  })

  it('knows the refusals it can answer', () => {
    expect(
      adjustmentFor(
        'error setting rlimits for ready process: error setting rlimit type 6: operation not permitted',
      ),
    ).toBe('ulimits')
    expect(
      adjustmentFor('crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2'),
    ).toBe('runc')
    expect(adjustmentFor('image not known')).toBeNull()
  })

  it('steps ulimits down under the hard limits, highest first, without repeats', () => {
    const limits =
      'Max processes             96555                96555                processes\nMax open files            20000                20000                files\n'
    const hard = parseHardLimits(limits)
    expect(hard).toEqual({ nofile: 20000, nproc: 96555 })
    expect(ulimitSteps(hard)).toEqual([
      ['nofile=20000:20000', 'nproc=96555:96555'],
      ['nofile=20000:20000', 'nproc=32768:32768'],
      ['nofile=20000:20000', 'nproc=20000:20000'],
      ['nofile=4096:4096', 'nproc=4096:4096'],
    ])
    expect(parseHardLimits('Max open files  unlimited  unlimited  files\n').nofile).toBeNull()
  })
})

describe('limits and cgroups', () => {
  it('flags, resources merge (the task wins), OOM and pids counters', () => {
    expect(limitFlags({ cpus: 1.5, memory_mb: 2048, pids: 512, storage_mb: null })).toEqual([
      '--memory',
      '2048m',
      '--memory-swap',
      '2048m',
      '--cpus',
      '1.5',
      '--pids-limit',
      '512',
    ])
    expect(
      mergeResources(
        { cpus: 2, memory_mb: 4096, pids: 1024, storage_mb: null },
        { cpus: 1, memory_mb: undefined },
      ),
    ).toEqual({
      cpus: 1,
      memory_mb: 4096,
      pids: 1024,
      storage_mb: null,
    })
    expect(parseOomKills('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n')).toBe(3)
    expect(parseOomKills('low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n')).toBe(1)
    expect(parsePidsMax('max 7\n')).toBe(7)
    const cg = '4:memory:/libpod_parent/libpod-abc\n8:pids:/libpod_parent/libpod-abc\n0::/x\n'
    expect(memoryCgroup(cg, 'v1')).toBe('/sys/fs/cgroup/memory/libpod_parent/libpod-abc')
    expect(memoryCgroup(cg, 'v1', 'pids')).toBe('/sys/fs/cgroup/pids/libpod_parent/libpod-abc')
    expect(memoryCgroup(cg, 'v2')).toBe('/sys/fs/cgroup/x')
  })
})

describe('mounts', () => {
  const mounts = mountsFor({
    workspace: '/w/ws',
    workdir: '/testbed',
    writable: ['/w/ws', '/w/home'],
    readOnly: ['/cache/pi@1', '/w/home/inside'],
    node: '/usr/bin/node',
    forwardDir: '/tmp/hwf-1',
    binds: [{ source: '/t/tests', target: '/tests', readOnly: true }],
  })

  it('the workspace at the workdir and at its own path; read-only inside writable left out', () => {
    expect(mounts).toEqual([
      { source: '/w/ws', target: '/testbed', readOnly: false },
      { source: '/t/tests', target: '/tests', readOnly: true },
      { source: '/w/ws', target: '/w/ws', readOnly: false },
      { source: '/w/home', target: '/w/home', readOnly: false },
      { source: '/cache/pi@1', target: '/cache/pi@1', readOnly: true },
      { source: '/usr/bin/node', target: NODE_IN, readOnly: true },
      { source: '/tmp/hwf-1', target: '/run/harness-watch/forward', readOnly: true },
    ])
    expect(mountFlags(mounts.slice(0, 1))).toEqual(['-v', '/w/ws:/testbed:rw'])
    expect(() => mountFlags([{ source: '/a,b', target: '/x', readOnly: true }])).toThrow(
      'cannot mount "/a,b"',
    )
    expect(mapCwd('/w/ws/src', '/w/ws', '/testbed')).toBe('/testbed/src')
    expect(mapCwd('/w/home', '/w/ws', '/testbed')).toBe('/w/home')
  })
})

describe('network, ports, owners, warnings', () => {
  it('phase networks follow the manifest, then the task', () => {
    const task = { harbor: { agentNetwork: 'public', verifierNetwork: 'public' } } as never
    expect(phaseNetwork('proxy-only', 'agent', task)).toBe('proxy-only')
    expect(phaseNetwork('proxy-only', 'verifier', task)).toBe('none')
    expect(phaseNetwork('none', 'agent', task)).toBe('none')
    expect(phaseNetwork('task', 'agent', task)).toBe('public')
    expect(phaseNetwork('task', 'verifier', null)).toBe('none')
  })

  it('forwards only loopback endpoints', () => {
    expect(loopbackPorts('http://127.0.0.1:4123/v1')).toEqual([4123])
    expect(loopbackPorts('http://localhost:80')).toEqual([80])
    expect(loopbackPorts('https://api.example.com')).toEqual([])
    expect(loopbackPorts('not a url')).toEqual([])
  })

  it("removing a container: podman skips its stop grace with -t 0; docker's rm has no -t and would refuse it", () => {
    expect(rmArgs({ name: 'podman' }, ['a', 'b'])).toEqual(['rm', '-f', '-t', '0', 'a', 'b'])
    expect(rmArgs({ name: 'docker' }, ['a'])).toEqual(['rm', '-f', 'a'])
  })

  it('an owner is gone only when it is this host and its process is dead', () => {
    const host = (require('node:os') as typeof import('node:os')).hostname()
    expect(ownerGone(`${host}:123`, () => false)).toBe(true)
    expect(ownerGone(`${host}:123`, () => true)).toBe(false)
    expect(ownerGone('other-host:123', () => false)).toBe(false)
    expect(ownerGone(`${host}:abc`, () => false)).toBe(false)
  })

  it('validate warns on an unpinned image only for a scheduled manifest, never a pinned one or the Debian base', () => {
    const s = (image: string) =>
      ({ backend: 'container', allow_unisolated: false, read_only: [], container: { image } }) as never
    const weekly = ['.github/workflows/weekly.yml']
    expect(containerWarnings(s('docker.io/library/python:3.12'), weekly)).toEqual([
      'sandbox.container.image "docker.io/library/python:3.12" is not pinned by digest and .github/workflows/weekly.yml runs this manifest on a schedule: each run may get a different image (pin it as name@sha256:<digest>)',
    ])
    expect(containerWarnings(s('docker.io/library/python:3.12'), [])).toEqual([])
    expect(containerWarnings(s(`python@sha256:${'b'.repeat(64)}`), weekly)).toEqual([])
    expect(containerWarnings(s('localhost/harness-watch-base:bookworm'), weekly)).toEqual([])
  })

  it('finds the scheduled workflows that name a manifest, by whole path', () => {
    const wf = (on: string, manifest: string) =>
      `name: x\non:\n${on}\njobs:\n  a:\n    uses: o/r/.github/workflows/harness-watch.yml@v1\n    with:\n      manifest: ${manifest}\n`
    const files = [
      {
        file: '.github/workflows/weekly.yml',
        text: wf("  schedule:\n    - cron: '17 6 * * 1'", 'manifests/demo.yml'),
      },
      { file: '.github/workflows/pr.yml', text: wf('  pull_request:', 'manifests/demo.yml') },
      {
        file: '.github/workflows/other.yml',
        text: wf("  schedule:\n    - cron: '1 1 * * 1'", 'manifests/demo.yml.bak'),
      },
      {
        file: '.github/workflows/quoted.yml',
        text: wf("  schedule:\n    - cron: '1 1 * * 1'", "'./manifests/demo.yml'"),
      },
      { file: '.github/workflows/broken.yml', text: 'on: [schedule\n' },
    ]
    expect(scheduledWorkflowsUsing(files, 'manifests/demo.yml')).toEqual([
      '.github/workflows/quoted.yml',
      '.github/workflows/weekly.yml',
    ])
    expect(scheduledWorkflowsUsing(files, 'manifests/other.yml')).toEqual([])
  })
})

describe('the Debian base image key', () => {
  it('reads one-line and deb822 sources for the suite, skipping disabled and other suites', () => {
    const lines = debLines(
      [
        {
          name: 'debian.sources',
          text: 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://x/\nSuites: bookworm\nComponents: main\nEnabled: no\n',
        },
        {
          name: 'extra.list',
          text: 'deb [arch=amd64] http://deb.debian.org/debian-security bookworm-security main\ndeb http://y/ trixie main\n',
        },
        {
          name: 'nodesource.sources.disabled',
          text: 'Types: deb\nURIs: http://z/\nSuites: bookworm\nComponents: main\n',
        },
      ],
      'bookworm',
    )
    expect(lines).toEqual([
      'deb http://deb.debian.org/debian bookworm main',
      'deb http://deb.debian.org/debian bookworm-updates main',
      'deb http://deb.debian.org/debian-security bookworm-security main',
    ])
    const spec = { suite: 'bookworm', include: ['git', 'python3'] }
    expect(baseKey(spec, lines)).toBe(baseKey({ suite: 'bookworm', include: ['python3', 'git'] }, lines))
    expect(baseKey(spec, lines)).not.toBe(baseKey({ ...spec, include: ['git'] }, lines))
  })
})

describe('manifest: sandbox.container', () => {
  const base = readFileSync('manifests/container-demo.yml', 'utf8')

  it('the container demo validates with its runtime, image, network and resources', () => {
    const m = parseManifestText(base, 'container-demo.yml')
    expect(m.sandbox.backend).toBe('container')
    expect(m.sandbox.container).toEqual({
      runtime: 'auto',
      image: 'localhost/harness-watch-base:bookworm',
      network: 'proxy-only',
      resources: { cpus: 2, memory_mb: 2048, pids: 1024, storage_mb: null },
      user: '0:0',
    })
  })

  it.each([
    ['    image: localhost/harness-watch-base:bookworm', '    image: Not/A Ref', 'sandbox.container.image'],
    ['    network: proxy-only', '    network: internet', 'sandbox.container.network'],
    ['    runtime: auto', '    runtime: lxc', 'sandbox.container.runtime'],
  ])('%s → %s is a located error', (from, to, field) => {
    expect(base).toContain(from)
    let err: unknown
    try {
      parseManifestText(base.replace(from, to), 'container-demo.yml')
    } catch (e) {
      err = e
    }
    expect(isHwError(err)).toBe(true)
    expect(isHwError(err) && err.format()).toContain(field)
  })
})

describe('who the agent runs as, per engine kind', () => {
  const runner = { uid: 1001, gid: 118 }
  const root = { uid: 0, gid: 0 }
  const engine = (over: { idMap?: boolean; rootless?: boolean; userns?: boolean }) => ({
    idMap: false,
    rootless: false,
    userns: false,
    ...over,
  })

  it('rootful docker (a GitHub-hosted runner): the invoking uid:gid, which owns the workspace', () => {
    expect(agentIdentity(engine({}), '0:0', runner)).toEqual({ user: '1001:118', mapIds: false })
    // root calling rootful docker owns the workspace as container root
    expect(agentIdentity(engine({}), '0:0', root)).toEqual({ user: '0:0', mapIds: false })
  })

  it('rootless docker and rootless podman: container root is the invoking user', () => {
    expect(agentIdentity(engine({ rootless: true }), '0:0', runner)).toEqual({ user: '0:0', mapIds: false })
    expect(agentIdentity(engine({ rootless: true }), '0:0', runner)).toEqual({ user: '0:0', mapIds: false })
  })

  it('docker with userns-remap: the daemon maps ids, the configured user', () => {
    expect(agentIdentity(engine({ userns: true }), '0:0', runner)).toEqual({ user: '0:0', mapIds: false })
  })

  it('root calling podman: container root mapped to the unprivileged range', () => {
    expect(agentIdentity(engine({ idMap: true }), '0:0', root)).toEqual({ user: '0:0', mapIds: true })
    // rootful podman without --uidmap: like rootful docker
    expect(agentIdentity(engine({ idMap: false }), '0:0', { uid: 1001, gid: 1001 })).toEqual({
      user: '1001:1001',
      mapIds: false,
    })
  })

  it('a configured user other than 0:0 is kept', () => {
    expect(agentIdentity(engine({}), '1000:1000', runner)).toEqual({ user: '1000:1000', mapIds: false })
  })
})

describe('PATH inside a container', () => {
  it("reads the image's working directory and PATH once from its Config", () => {
    const cfg = JSON.stringify({
      Env: ['LANG=C.UTF-8', 'PATH=/opt/miniconda3/envs/testbed/bin:/usr/local/go/bin:/usr/bin:/bin'],
      WorkingDir: '/testbed',
    })
    expect(parseImageConfig(cfg)).toEqual({
      workdir: '/testbed',
      path: '/opt/miniconda3/envs/testbed/bin:/usr/local/go/bin:/usr/bin:/bin',
    })
    expect(parseImageConfig(JSON.stringify({ Env: null, WorkingDir: '/' }))).toEqual({
      workdir: '/app',
      path: DEFAULT_IMAGE_PATH,
    })
    expect(parseImageConfig('null')).toEqual({ workdir: '/app', path: DEFAULT_IMAGE_PATH })
    expect(parseImageConfig('')).toEqual({ workdir: '/app', path: DEFAULT_IMAGE_PATH })
  })

  it("is the image's PATH with the mounted Node last; host folders that are not mounted are dropped", () => {
    const host = '/cache/oh/venv/bin:/usr/local/lib/nodejs/bin:/usr/local/sbin:/usr/local/bin:/usr/bin'
    expect(containerPath(host, '/opt/tools/bin:/usr/bin:/bin', ['/cache/oh', '/tmp/ws'])).toBe(
      `/cache/oh/venv/bin:/opt/tools/bin:/usr/bin:/bin:${NODE_IN.slice(0, -'/node'.length)}`,
    )
    expect(containerPath(undefined, DEFAULT_IMAGE_PATH, [])).toBe(
      `${DEFAULT_IMAGE_PATH}:${NODE_IN.slice(0, -'/node'.length)}`,
    )
  })
})
