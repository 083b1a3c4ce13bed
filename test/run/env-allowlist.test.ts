import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runProcessGroup, toolEnv } from '../../src/process/exec.js'
import { harnessEnv } from '../../src/run/env.js'

// Installs, setup scripts, verifiers and harnesses get an explicit allowlist, never the runner's
// environment (issue 11 point 1); the runner's job marker passes so its orphan cleanup still works.

const runner: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/runner',
  HTTPS_PROXY: 'http://proxy.internal:3128',
  RUNNER_TRACKING_ID: 'github_6f0c9f5e-1111-2222-3333-444455556666',
  GITHUB_TOKEN: 'ghs_sentinel_github',
  ACTIONS_RUNTIME_TOKEN: 'sentinel-runtime',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'sentinel-oidc',
  PROVIDER_API_KEY: 'sk-sentinel-provider',
  LITELLM_MASTER_KEY: 'sk-sentinel-litellm',
  INPUT_TOKEN: 'ghs_sentinel_input',
  RUNNER_TEMP: '/home/runner/work/_temp',
}
const secrets = [
  'ghs_sentinel_github',
  'sentinel-runtime',
  'sentinel-oidc',
  'sk-sentinel-provider',
  'sk-sentinel-litellm',
  'ghs_sentinel_input',
]

const dir = mkdtempSync(path.join(os.tmpdir(), 'hw-envlist-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('allowlisted environments', () => {
  it('toolEnv keeps PATH, HOME, proxy settings and the runner job marker, and no credential', () => {
    const env = toolEnv(runner, { HW_WORKSPACE: '/w' })
    expect(env).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/runner',
      HTTPS_PROXY: 'http://proxy.internal:3128',
      RUNNER_TRACKING_ID: 'github_6f0c9f5e-1111-2222-3333-444455556666',
      TERM: 'dumb',
      CI: '1',
      HW_WORKSPACE: '/w',
    })
  })

  it('a setup or verifier process started by runProcessGroup sees none of the runner secrets', async () => {
    const log = path.join(dir, 'env.log')
    const r = await runProcessGroup('env', [], { cwd: dir, baseEnv: runner, timeoutMs: 10_000, logFile: log })
    expect(r.exitCode).toBe(0)
    const dumped = readFileSync(log, 'utf8')
    expect(dumped).toContain('RUNNER_TRACKING_ID=github_6f0c9f5e')
    for (const s of secrets) expect(dumped).not.toContain(s)
    expect(dumped).not.toContain('RUNNER_TEMP=')
  })

  it('the harness environment passes the job marker but no runner secret', () => {
    const d = '/a/h'
    const { env } = harnessEnv({
      dirs: {
        home: d,
        tmp: `${d}/tmp`,
        xdgConfig: `${d}/.config`,
        xdgData: `${d}/.local/share`,
        xdgCache: `${d}/.cache`,
        xdgState: `${d}/.local/state`,
      },
      runnerEnv: runner,
      invocationEnv: { HW_API_KEY: 'sk-hw-attempt' },
      configEnv: {},
      passEnv: [],
    })
    expect(env.RUNNER_TRACKING_ID).toBe(runner.RUNNER_TRACKING_ID)
    expect(env.HW_API_KEY).toBe('sk-hw-attempt')
    const text = JSON.stringify(env)
    for (const s of secrets) expect(text).not.toContain(s)
    expect(Object.keys(env).filter((k) => /^(GITHUB_|ACTIONS_|INPUT_)/.test(k))).toEqual([])
  })
})
