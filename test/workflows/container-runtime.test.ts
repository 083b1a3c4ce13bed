// scripts/container-runtime.sh, the reusable workflow's step before a container leg, against the
// runner it is written for (a GitHub-hosted Ubuntu runner, which this machine is not): the engines,
// `df` and `sudo` are stand-ins on PATH that answer as their CLIs do and log every call. The real
// engine path is covered by the simulated container leg (simulate.test.ts).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { root } from './support.js'

const script = path.join(root, 'scripts', 'container-runtime.sh')

interface Runner {
  dir: string
  bin: string
  log: string
  plan: string
}

/** A runner: PATH holds the system tools the script uses and the given stand-ins (name → shell body). */
function runner(fakes: Record<string, string>, manifestSandbox: unknown, legSize = 3): Runner {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-ct-runtime-'))
  const bin = path.join(dir, 'bin')
  mkdirSync(bin)
  mkdirSync(path.join(dir, 'store'))
  for (const tool of ['jq', 'stat', 'awk', 'timeout', 'bash', 'sed', 'cat', 'mkdir', 'rm', 'dirname']) {
    symlinkSync(`/usr/bin/${tool}`, path.join(bin, tool))
  }
  const log = path.join(dir, 'calls.log')
  for (const [name, body] of Object.entries(fakes)) {
    const f = path.join(bin, name)
    writeFileSync(f, `#!/usr/bin/bash\necho "${name} $*" >> ${JSON.stringify(log)}\n${body}\n`)
    chmodSync(f, 0o755)
  }
  const plan = path.join(dir, 'plan.json')
  const instances = Array.from({ length: legSize }, (_, i) => `i-${i}`)
  writeFileSync(
    plan,
    JSON.stringify({
      manifest: { sandbox: manifestSandbox },
      legs: [{ leg: 'a-s0', cell: 'a', shard: 0, artifact: 'x', instances }],
    }),
  )
  return { dir, bin, log, plan }
}

async function run(r: Runner, env: Record<string, string>) {
  const out = path.join(r.dir, 'github_output')
  writeFileSync(out, '')
  const p = await execa('/usr/bin/bash', [script], {
    env: { PATH: r.bin, PLAN: r.plan, LEG: 'a-s0', GITHUB_OUTPUT: out, ...env },
    extendEnv: false,
    reject: false,
  })
  const outputs = Object.fromEntries(
    readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
  let calls: string[] = []
  try {
    calls = readFileSync(r.log, 'utf8').trim().split('\n')
  } catch {}
  return { code: p.exitCode, stdout: p.stdout, outputs, calls }
}

// A Podman that answers (as rootless Podman on a hosted runner would), and a `df` with 14 GB free.
const podman = `case "$1" in
  info) [ "$2" = --format ] && echo "$(cd "$(dirname "$0")/.." && pwd)/store"; exit 0;;
  --version) echo "podman version 4.9.3";;
  image) exit 0;;
esac`
const df = (freeGb: number) =>
  `echo "Filesystem 1073741824-blocks Used Available Capacity Mounted on"; echo "/dev/root 72G 58G ${freeGb}G 81% /"`
const dockerDown = 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock" >&2; exit 1'
const container = { backend: 'container', container: { runtime: 'auto' } }

describe('the container step before a leg', () => {
  it('another backend: says so and does nothing else', async () => {
    const r = runner({ podman, docker: dockerDown, df: df(14), sudo: '' }, { backend: 'auto' })
    const x = await run(r, { HOSTED: 'true', FREE_DISK: 'true' })
    expect(x.code).toBe(0)
    expect(x.outputs).toEqual({ backend: 'auto' })
    expect(x.stdout).toBe('sandbox.backend auto: no container runtime needed')
    expect(x.calls).toEqual([])
  })

  it('auto: the engine that answers (docker down → podman), cgroups, free disk, instances; hosted: unused images pruned', async () => {
    const r = runner({ podman, docker: dockerDown, df: df(14), sudo: '' }, container)
    const x = await run(r, { HOSTED: 'true', FREE_DISK: 'false' })
    expect(x.code).toBe(0)
    expect(x.outputs).toMatchObject({
      backend: 'container',
      runtime: 'podman',
      'disk-free-gb': '14',
      instances: '3',
    })
    expect(x.outputs.cgroup).toMatch(/^v[12]$/)
    expect(x.calls).toEqual([
      'docker info',
      'podman info',
      'podman --version',
      'podman image prune --all --force',
      'podman info --format {{.Store.GraphRoot}}',
      `df -P -BG ${r.dir}/store`,
    ])
    // 3 instances × 3 GB + 2 GB fits in 14 GB: no warning.
    expect(x.stdout).not.toContain('::warning')
  })

  it('self-hosted: images are left alone; free-disk removes toolchains only on hosted runners', async () => {
    const r = runner({ podman, docker: dockerDown, df: df(14), sudo: '' }, container)
    const self = await run(r, { HOSTED: 'false', FREE_DISK: 'true' })
    expect(self.calls.filter((c) => c.includes('prune') || c.startsWith('sudo'))).toEqual([])
    writeFileSync(r.log, '')
    const hosted = await run(r, { HOSTED: 'true', FREE_DISK: 'true' })
    expect(hosted.calls.filter((c) => c.startsWith('sudo'))).toEqual([
      'sudo rm -rf /usr/local/lib/android /usr/share/dotnet /opt/ghc /usr/local/.ghcup /opt/hostedtoolcache/CodeQL',
    ])
  })

  it('a leg whose instance images may not fit: one warning naming the leg, the count and the free disk', async () => {
    const r = runner({ podman, docker: dockerDown, df: df(10), sudo: '' }, container, 4)
    const x = await run(r, { HOSTED: 'true' })
    expect(x.code).toBe(0)
    expect(x.stdout.split('\n').filter((l) => l.startsWith('::warning'))).toEqual([
      `::warning title=Disk for task images::leg a-s0 runs 4 instance(s) and 10 GB is free at ${r.dir}/store: instance images of 1–3 GB each may not fit; raise shards.count (fewer instances per leg) or set free-disk: true`,
    ])
  })

  it('the runtime the manifest names, and no engine at all: one error line saying how to get one', async () => {
    const named = runner(
      { podman, docker: 'exit 0', df: df(14), sudo: '' },
      {
        backend: 'container',
        container: { runtime: 'podman' },
      },
    )
    const x = await run(named, {})
    expect(x.outputs.runtime).toBe('podman')
    expect(x.calls.some((c) => c.startsWith('docker'))).toBe(false)
    const none = runner({ df: df(14), sudo: '' }, container)
    const y = await run(none, {})
    expect(y.code).toBe(1)
    expect(y.stdout).toBe(
      '::error title=No container runtime::sandbox.container.runtime is auto but no engine answers on this runner: install Podman (sudo apt-get install podman) or Docker, or point DOCKER_HOST / CONTAINER_HOST at an engine',
    )
    expect(y.outputs).toEqual({ backend: 'container' })
  })
})
