// Input verifier-setup of the reusable workflow, run by the workflow simulator on the fixture
// experiment: the caller's script runs on every leg before the run step (harnesses and verifier),
// with a cleared environment — none of the secrets the call passes, no token — and a script that is
// missing or fails stops the leg before anything runs.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { actionCheckout, built, root } from './support.js'

interface SimResult {
  conclusion: string
  jobs: Record<string, { result: string; outputs: Record<string, string> }>
  steps: { job: string; step: string; result: string }[]
}

describe.skipIf(!built)('harness-watch.yml: verifier-setup', () => {
  let gh: FakeGitHub
  let actionRoot: string
  let workspace: string
  let envFile: string
  let marks: string

  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
    actionRoot = actionCheckout()
    workspace = mkdtempSync(path.join(tmpdir(), 'hw-vs-caller-'))
    mkdirSync(path.join(workspace, 'test', 'fixtures'), { recursive: true })
    cpSync(
      path.join(root, 'test', 'fixtures', 'workflow'),
      path.join(workspace, 'test', 'fixtures', 'workflow'),
      {
        recursive: true,
      },
    )
    // The caller's script records its environment and the moment it ran, one file per leg.
    marks = mkdtempSync(path.join(tmpdir(), 'hw-vs-marks-'))
    mkdirSync(path.join(workspace, '.github', 'harness-watch'), { recursive: true })
    writeFileSync(
      path.join(workspace, '.github', 'harness-watch', 'verifier-tools.sh'),
      `f=${marks}/setup-$$\nenv | sort > "$f.env"\ndate +%s%3N > "$f.t"\n`,
    )
    envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-vs-env-')), '.env')
    writeFileSync(
      envFile,
      [
        `GITHUB_API_URL=${gh.url}`,
        'GITHUB_REPOSITORY=acme/widgets',
        'GITHUB_TOKEN=test-token-ghs',
        'SECRET_provider-api-key=sk-provider-secret',
        'SECRET_litellm-master-key=sk-litellm-master',
      ].join('\n'),
    )
  })
  afterAll(() => gh.close())

  async function simulate(runId: string, inputs: Record<string, string>): Promise<SimResult> {
    const r = await execa(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(root, 'scripts', 'simulate-workflow.ts'),
        '.github/workflows/harness-watch.yml',
        '--workspace',
        workspace,
        '--action-root',
        actionRoot,
        '--env-file',
        envFile,
        '--artifacts',
        mkdtempSync(path.join(tmpdir(), 'hw-vs-artifacts-')),
        '--run-id',
        runId,
        '--event-name',
        'schedule',
        '--json',
        ...Object.entries(inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
      ],
      { cwd: root, reject: false },
    )
    const last = r.stdout.trim().split('\n').at(-1) ?? ''
    if (!last.startsWith('{')) throw new Error(`simulation crashed:\n${r.stderr.slice(-4000)}`)
    return JSON.parse(last) as SimResult
  }

  it('runs on every leg before the run step, with no secret and no token in its environment', async () => {
    const r = await simulate('301', {
      manifest: 'test/fixtures/workflow/canary.yml',
      cells: 'base',
      'verifier-setup': '.github/harness-watch/verifier-tools.sh',
    })
    const legs = ['run (base-s0, base, 0, hw-canary-', 'run (base-s1, base, 1, hw-canary-']
    for (const leg of legs) {
      const steps = r.steps.filter((s) => s.job.startsWith(leg)).map((s) => `${s.step}:${s.result}`)
      expect(steps.indexOf('verifier-setup:success'), leg).toBeGreaterThanOrEqual(0)
      expect(steps.indexOf('run:success'), leg).toBeGreaterThan(steps.indexOf('verifier-setup:success'))
    }
    const envs = readdirSync(marks).filter((f) => f.endsWith('.env'))
    expect(envs).toHaveLength(2)
    for (const f of envs) {
      const text = readFileSync(path.join(marks, f), 'utf8')
      const names = text
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(0, l.indexOf('=')))
      // bash adds PWD, SHLVL and _ itself; nothing else but the five passed.
      expect(names.filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n)).sort()).toEqual([
        'CI',
        'GITHUB_WORKSPACE',
        'HOME',
        'PATH',
        'RUNNER_TEMP',
      ])
      expect(text).not.toMatch(/sk-provider-secret|sk-litellm-master|test-token-ghs/)
    }
    expect(r.jobs.run?.result).toBe('success')
  }, 900_000)

  it('a script that is missing stops each leg before the run step, with one error line naming it', async () => {
    const r = await simulate('302', {
      manifest: 'test/fixtures/workflow/canary.yml',
      cells: 'base',
      'verifier-setup': '.github/harness-watch/missing.sh',
    })
    const leg = r.steps.filter((s) => s.job.startsWith('run (base-s0'))
    expect(leg.map((s) => `${s.step}:${s.result}`)).toContain('verifier-setup:failure')
    expect(leg.map((s) => s.step)).not.toContain('run')
    expect(r.jobs.run?.result).toBe('failure')
  }, 900_000)

  it('a path outside the calling repository is refused', async () => {
    const r = await execa('bash', [path.join(root, 'scripts', 'verifier-setup.sh')], {
      cwd: workspace,
      env: { VERIFIER_SETUP: '../outside.sh' },
      reject: false,
    })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toBe(
      '::error::verifier-setup must be a path inside the calling repository, got ../outside.sh',
    )
  })
})
