// Workflow misconfigurations become one line naming what to grant or pass and the calling file.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  callerFile,
  envReadByManifest,
  isForkPullRequest,
  misconfigurationLine,
  secretMismatches,
} from '../../src/action/misconfig.js'
import { explainGitHubError } from '../../src/github/octokit.js'
import { HwError } from '../../src/util/errors.js'

const caller = { GITHUB_WORKFLOW_REF: 'acme/widgets/.github/workflows/weekly.yml@refs/heads/main' }

function forkEnv(fork: boolean): NodeJS.ProcessEnv {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'hw-event-')), 'event.json')
  writeFileSync(file, JSON.stringify({ pull_request: { number: 7, head: { repo: { fork } } } }))
  return { ...caller, GITHUB_EVENT_NAME: 'pull_request', GITHUB_EVENT_PATH: file }
}

const missingKey = new HwError(
  'model_route_invalid',
  'PROVIDER_API_KEY is not set: the model route has no API key',
  {
    where: 'model.api_key_env',
  },
)
const forbidden = explainGitHubError(
  { status: 403, message: 'x', response: { data: { message: 'Resource not accessible by integration' } } },
  'create the tracking issue',
  'issues: write',
)

describe('misconfiguration lines', () => {
  it('names the calling workflow file from GITHUB_WORKFLOW_REF', () => {
    expect(callerFile(caller)).toBe('.github/workflows/weekly.yml')
    expect(callerFile({})).toBe('the calling workflow')
  })

  it('a missing secret: the secret to pass and the file, on one line', () => {
    const line = misconfigurationLine(missingKey, caller)
    expect(line).toBe(
      'missing secret: PROVIDER_API_KEY is empty; pass the secret "provider-api-key" under secrets: of the job that calls harness-watch.yml in .github/workflows/weekly.yml',
    )
    expect(line).not.toContain('\n')
  })

  it('a missing permission: the permission to grant and the file', () => {
    expect(misconfigurationLine(forbidden, caller)).toBe(
      'missing permission: grant "issues: write" under permissions: of the job that calls harness-watch.yml in .github/workflows/weekly.yml',
    )
  })

  it('names the publish job when the runner says which job it is', () => {
    expect(misconfigurationLine(forbidden, { ...caller, GITHUB_JOB: 'publish-issue' })).toBe(
      'missing permission: job "publish-issue" needs "issues: write": grant "issues: write" under permissions: of the job that calls harness-watch.yml in .github/workflows/weekly.yml',
    )
  })

  it('secrets that do not line up: read but not passed, passed but never read', () => {
    const reads = envReadByManifest({
      model: { api_key_env: 'LITELLM_MASTER_KEY', base_url_env: 'LITELLM_BASE_URL' },
      telemetry: { source: 'litellm' },
      cells: [{ config: { pass_env: ['GITHUB_WORKSPACE'] } }],
    })
    expect([...reads].sort()).toEqual(['GITHUB_WORKSPACE', 'LITELLM_BASE_URL', 'LITELLM_MASTER_KEY'])
    expect(
      secretMismatches(
        reads,
        ['provider-api-key', 'litellm-master-key'],
        'job "hw" in .github/workflows/weekly.yml',
      ),
    ).toEqual([
      'unused secret: "provider-api-key" is passed by job "hw" in .github/workflows/weekly.yml but the manifest never reads PROVIDER_API_KEY; remove it, or name PROVIDER_API_KEY in the manifest',
      'missing secret: the manifest reads LITELLM_BASE_URL; pass the secret "litellm-base-url" under secrets: of job "hw" in .github/workflows/weekly.yml',
    ])
    expect(secretMismatches(reads, ['litellm-base-url', 'litellm-master-key'], 'x')).toEqual([])
  })

  it('a fork pull request: why there is no secret and no write, not a change to make', () => {
    const env = forkEnv(true)
    expect(isForkPullRequest(env)).toBe(true)
    expect(isForkPullRequest(forkEnv(false))).toBe(false)
    expect(misconfigurationLine(missingKey, env)).toMatch(
      /^fork pull request: PROVIDER_API_KEY is empty because GitHub passes no secrets .* this run is inconclusive/,
    )
    expect(misconfigurationLine(forbidden, env)).toMatch(/^fork pull request: the token is read-only/)
  })

  it('an empty token; anything else is not a misconfiguration', () => {
    expect(
      misconfigurationLine(new HwError('github_token_missing', 'no GitHub token given'), caller),
    ).toMatch(
      /^the token input is empty: pass token: \$\{\{ github\.token \}\} .*; change \.github\/workflows\/weekly\.yml$/,
    )
    expect(misconfigurationLine(new HwError('plan_invalid', 'x'), caller)).toBeNull()
    expect(misconfigurationLine(new Error('boom'), caller)).toBeNull()
  })
})
