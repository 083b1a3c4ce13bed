import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Isolation } from '../../src/records/isolation.js'
import { BACKENDS } from '../../src/sandbox/select.js'
import { manifestAndPlan, readAttempts, readLegJson, useRunFixture, walk } from '../run/fixture.js'
import { sentinelHuntScript } from '../support/sentinel-hunt.js'

// The sentinel-secret conformance suite (issue 11 point 1, design/sandbox.md §1): a probe "harness"
// (a real `command` cell, run by the real `run` command in a child process whose environment holds
// the sentinels) reads every /proc/<pid>/environ and cmdline it can, its parent chain, a planted
// checkout `.git/config` with a token and a file in the action user's home. Isolating backends must
// show it none of them, in its output or in any file of the leg's artifact; `none` and `env-only`
// must leak (proof that the probe finds what it looks for).

const fx = useRunFixture()
const root = path.resolve(import.meta.dirname, '../..')
const tsx = path.join(root, 'node_modules', '.bin', 'tsx')
const entry = path.join(root, 'src', 'cli', 'entry.ts')

const sentinel = (name: string): string => `hwsentinel-${name}-${randomBytes(8).toString('hex')}`
const secrets = {
  PROVIDER_API_KEY: sentinel('provider'),
  LITELLM_MASTER_KEY: sentinel('litellm'),
  ACTIONS_RUNTIME_TOKEN: sentinel('runtime'),
  GITHUB_TOKEN: sentinel('github'),
}
const gitToken = sentinel('checkout')
const homeSecret = sentinel('home')
const homeFile = path.join(os.homedir(), `.hw-probe-${randomBytes(6).toString('hex')}`)
const all = [...Object.values(secrets), gitToken, homeSecret]

/** The probe, written into the attempt's home by the cell (config.files) and run with bash. */
function probeScript(checkout: string): string {
  return sentinelHuntScript('PROBE', { checkout, homeFile })
}

interface ProbeRun {
  exitCode: number | undefined
  stdout: string
  /** setup.log and verifier.log of the attempt (id-list runs: both hunt too). */
  setupLog: string
  verifierLog: string
  stderr: string
  artifactHits: string[]
  isolation: unknown
  canary: unknown
  legIsolation: unknown
}

/**
 * Run the probe harness through the real `run` command from a checkout holding a token. `idList`: an
 * id-list panel whose `benchmark.setup` and `benchmark.verifier.command` (scripts of the checkout,
 * named relative to it) run the same probe before and after the harness.
 */
async function runProbe(backend: Isolation, idList = false, hostCommands = false): Promise<ProbeRun> {
  const tag = `${backend.replace('+', '-')}${idList ? '-ids' : ''}${hostCommands ? '-host' : ''}`
  const checkout = path.join(fx.root, `checkout-${tag}`)
  mkdirSync(path.join(checkout, '.git'), { recursive: true })
  writeFileSync(path.join(checkout, 'hunt.sh'), probeScript(checkout))
  writeFileSync(
    path.join(checkout, 'setup.sh'),
    'bash ./hunt.sh\nprintf "hello\\n" > "$1/greet.txt"\nprintf "Greet.\\n" > "$2/instruction.md"\n',
  )
  writeFileSync(path.join(checkout, 'verify.sh'), 'bash ./hunt.sh\n')
  writeFileSync(
    path.join(checkout, '.git', 'config'),
    `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${gitToken}\n`,
  )
  const cell = {
    id: 'probe',
    harness: 'command',
    version: '1.0.0',
    config: { command: 'bash "$HOME/probe.sh"', files: { 'probe.sh': probeScript(checkout) } },
  }
  const panel = idList
    ? {
        panel: { source: 'inline', instances: ['probe-1'] },
        benchmark: {
          family: 'probe-ids',
          revision: 'r1',
          setup: 'bash setup.sh {workspace} {out}',
          verifier: { kind: 'command', command: 'bash verify.sh', timeout_s: 30 },
        },
      }
    : { panel: { source: 'tasks', path: './panel', instances: ['txt-greet'] } }
  const { file, plan } = await manifestAndPlan(
    fx,
    [cell],
    {
      ...panel,
      retries: { max: 0, on: ['infra'], backoff_s: 0 },
      sandbox: {
        backend,
        allow_unisolated: backend !== 'namespace+uid',
        ...(hostCommands ? { host_commands: true } : {}),
      },
    },
    `probe-${tag}.yml`,
  )
  const planFile = path.join(fx.root, `plan-${tag}.json`)
  writeFileSync(planFile, JSON.stringify(plan))
  const out = path.join(fx.root, 'out', `probe-${tag}`)
  const r = await execa(
    tsx,
    [entry, 'run', file, '--plan', planFile, '--leg', 'probe-s0', '--out', out, '--work-root', fx.work],
    {
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ...secrets },
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    },
  )
  expect(r.stderr).not.toMatch(/^error:/m)
  const [record] = readAttempts(out)
  const logs = path.join(out, record?.logs_dir ?? 'missing')
  const stdout = readFileSync(path.join(logs, 'stdout.txt'), 'utf8')
  const log = (name: string): string =>
    existsSync(path.join(logs, name)) ? readFileSync(path.join(logs, name), 'utf8') : ''
  const artifactHits: string[] = []
  for (const rel of walk(out)) {
    let text: string
    try {
      text = readFileSync(path.join(out, rel), 'utf8')
    } catch {
      continue // a folder
    }
    for (const s of all) if (text.includes(s)) artifactHits.push(`${rel}: ${s.split('-')[1]}`)
  }
  return {
    exitCode: r.exitCode,
    stdout,
    stderr: r.stderr,
    setupLog: log('setup.log'),
    verifierLog: log('verifier.log'),
    artifactHits,
    isolation: record?.isolation,
    canary: record?.canary,
    legIsolation: readLegJson(out).isolation,
  }
}

let nsProbe: { ok: boolean; reason: string | null } = { ok: false, reason: 'not probed' }
beforeAll(async () => {
  writeFileSync(homeFile, `${homeSecret}\n`, { mode: 0o644 })
  nsProbe = await BACKENDS['namespace+uid'].probe()
})
afterAll(() => rmSync(homeFile, { force: true }))

describe('probe harness: no secret reaches third-party code', () => {
  it('namespace+uid: the probe reads none of the sentinels, and no artifact holds one', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const r = await runProbe('namespace+uid')
    expect(r.exitCode).toBe(0)
    // The probe ran to its end, as another user, and could read its own processes' /proc files.
    expect(r.stdout).toContain('PROBE-END')
    expect(r.stdout).not.toContain('uid=0')
    expect(Number(/PROBE-READ (\d+)/.exec(r.stdout)?.[1])).toBeGreaterThanOrEqual(2)
    // Only its own namespace is visible: the parent chain ends at PID 1, the root shell.
    expect(r.stdout).not.toMatch(/PARENT (?!1\b)\d{3,}/)
    for (const s of all) expect(r.stdout).not.toContain(s)
    expect(r.artifactHits).toEqual([])
    // It holds its per-attempt key and the proxy address, nothing else of the kind.
    expect(r.stdout).toMatch(/^OWN HW_API_KEY=sk-hw-[0-9a-f]{32}$/m)
    expect(r.stdout).toMatch(/^OWN HW_BASE_URL=http:\/\/127\.0\.0\.1:\d+/m)
    expect(r.stdout).not.toMatch(/^(OWN )?(GITHUB_|ACTIONS_|RUNNER_|INPUT_|PROVIDER_)/m)
    expect(r).toMatchObject({ isolation: 'namespace+uid', canary: 'passed', legIsolation: 'namespace+uid' })
  }, 120_000)

  for (const backend of ['env-only', 'none'] as const) {
    it(`${backend}: the same probe finds the sentinels (the probe works; this backend is not isolation)`, async () => {
      const r = await runProbe(backend)
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toContain('PROBE-END')
      // Through /proc/<pid>/environ of the `run` process: every secret of its environment.
      for (const s of Object.values(secrets)) expect(r.stdout).toContain(s)
      expect(r.stdout).toContain(gitToken)
      expect(r.stdout).toContain(homeSecret)
      // Its own environment is still the allowlist: no secret is handed to it by name.
      expect(r.stdout).not.toMatch(/^OWN (PROVIDER_API_KEY|GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN)=/m)
      expect(r.isolation).toBe(backend)
      expect(r.canary).toBe(backend === 'none' ? 'skipped' : 'exposed')
    }, 120_000)
  }

  it('namespace+uid: an id-list setup and command verifier (scripts of the checkout) read none of the sentinels', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const r = await runProbe('namespace+uid', true)
    expect(r.exitCode).toBe(0)
    for (const [name, text] of [
      ['setup', r.setupLog],
      ['verifier', r.verifierLog],
      ['harness', r.stdout],
    ] as const) {
      expect(text, name).toContain('PROBE-END')
      expect(text, name).not.toContain('uid=0')
      expect(Number(/PROBE-READ (\d+)/.exec(text)?.[1]), name).toBeGreaterThanOrEqual(2)
      expect(text, name).not.toMatch(/PARENT (?!1\b)\d{3,}/)
      for (const s of all) expect(text, name).not.toContain(s)
    }
    // The setup ran from the checkout (its scripts named relative to it) and prepared the workspace.
    expect(r.stdout).toContain('PROBE-START')
    expect(r.artifactHits).toEqual([])
    expect(r).toMatchObject({ isolation: 'namespace+uid', legIsolation: 'namespace+uid' })
  }, 120_000)

  it('env-only: the same id-list setup and verifier find the sentinels (the probe works there)', async () => {
    const r = await runProbe('env-only', true)
    expect(r.exitCode).toBe(0)
    for (const [name, text] of [
      ['setup', r.setupLog],
      ['verifier', r.verifierLog],
    ] as const) {
      expect(text, name).toContain('PROBE-END')
      for (const s of Object.values(secrets)) expect(text, name).toContain(s)
      expect(text, name).toContain(gitToken)
      expect(text, name).toContain(homeSecret)
    }
  }, 120_000)

  it('namespace+uid with sandbox.host_commands: setup and verifier run as the action user (and say so); the harness stays isolated', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const r = await runProbe('namespace+uid', true, true)
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('warning: sandbox.host_commands')
    for (const text of [r.setupLog, r.verifierLog]) {
      expect(text).toContain(`uid=${process.getuid?.()}`)
      for (const s of Object.values(secrets)) expect(text).toContain(s)
    }
    expect(r.stdout).toContain('PROBE-END')
    for (const s of all) expect(r.stdout).not.toContain(s)
  }, 120_000)
})
