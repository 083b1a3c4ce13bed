// The shipped caller workflows, as shipped, run end to end by the workflow simulator: plan → legs →
// aggregate → confirmation → publish, against the spec-validating fake GitHub. Their manifests need
// real providers (validate-only, test/workflows/permissions.test.ts and test/cli), so the calling
// repository holds, at the path the example names, the workflow fixture's offline experiment
// (command harness, scripted model; a 56-point regression the rerun confirms).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { parseIdentity, parseState } from '../../src/github/marker.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { actionCheckout, built, root } from './support.js'

interface SimResult {
  conclusion: string
  jobs: Record<string, { result: string; outputs: Record<string, string> }>
  steps: { job: string; step: string; result: string }[]
  summaries: string[]
}

const fixture = path.join(root, 'test', 'fixtures', 'workflow')

/** The manifest path an example's call names (`with: manifest:` of its harness-watch job). */
function manifestOf(example: string): string {
  const wf = parse(readFileSync(path.join(root, example), 'utf8')) as {
    jobs: Record<string, { with?: { manifest?: string } }>
  }
  const m = wf.jobs['harness-watch']?.with?.manifest
  if (!m) throw new Error(`${example} names no manifest`)
  return m
}

/** A calling repository holding the fixture experiment at `manifest`, its panel and harness beside it. */
function callerWith(manifest: string): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'hw-example-caller-'))
  const dir = path.dirname(manifest)
  mkdirSync(path.join(ws, dir), { recursive: true })
  cpSync(path.join(fixture, 'panel'), path.join(ws, dir, 'panel'), { recursive: true })
  cpSync(path.join(fixture, 'harness.mjs'), path.join(ws, dir, 'harness.mjs'))
  const text = readFileSync(path.join(fixture, 'canary.yml'), 'utf8').replaceAll(
    '$GITHUB_WORKSPACE/test/fixtures/workflow/',
    `$GITHUB_WORKSPACE/${dir}/`,
  )
  writeFileSync(path.join(ws, manifest), text)
  return ws
}

async function simulate(
  example: string,
  ws: string,
  actionRoot: string,
  env: string[],
  extra: string[],
): Promise<SimResult> {
  const envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-example-env-')), '.env')
  writeFileSync(envFile, env.join('\n'))
  const r = await execa(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'scripts', 'simulate-workflow.ts'),
      path.join(root, example),
      '--workspace',
      ws,
      '--action-root',
      actionRoot,
      '--env-file',
      envFile,
      '--artifacts',
      mkdtempSync(path.join(tmpdir(), 'hw-example-artifacts-')),
      '--json',
      ...extra,
    ],
    { cwd: root, reject: false },
  )
  const last = r.stdout.trim().split('\n').at(-1) ?? ''
  if (!last.startsWith('{')) throw new Error(`simulation crashed:\n${r.stderr.slice(-4000)}`)
  const out = JSON.parse(last) as SimResult
  if (out.conclusion !== 'success') console.error(r.stderr.slice(-6000))
  return out
}

describe.skipIf(!built)('examples/weekly.yml end to end', () => {
  let gh: FakeGitHub
  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterAll(() => gh.close())

  it('a scheduled run confirms the regression and opens one tracking issue; no PR comment', async () => {
    const manifest = manifestOf('examples/weekly.yml')
    const ws = callerWith(manifest)
    const r = await simulate(
      'examples/weekly.yml',
      ws,
      actionCheckout(),
      [
        `GITHUB_API_URL=${gh.url}`,
        'GITHUB_REPOSITORY=acme/widgets',
        'GITHUB_TOKEN=test-token',
        'SECRET_LITELLM_BASE_URL=http://127.0.0.1:9',
        'SECRET_LITELLM_MASTER_KEY=sk-master',
      ],
      // The previous-run lookup is the GitHub CLI (`gh run list`), not available offline: assumed to
      // find none, so this is the first run (previous-run-id empty).
      ['--event-name', 'schedule', '--assume-success', 'previous'],
    )
    expect(r.conclusion).toBe('success')
    const ran = (job: string) => r.steps.filter((s) => s.job === `harness-watch/${job}`)
    expect(r.jobs['harness-watch']?.result).toBe('success')
    expect(r.jobs['harness-watch']?.outputs).toMatchObject({
      status: 'confirmed',
      'issue-number': '1',
      'comment-id': '',
    })
    const legs = r.steps.filter((s) => s.step === 'run')
    expect(legs).toHaveLength(8)
    expect(legs.every((s) => s.result === 'success')).toBe(true)
    // The called workflow's publish jobs: the issue job ran, the PR-comment job was skipped.
    expect(ran('publish-issue').map((s) => `${s.step}:${s.result}`)).toContain('publish:success')
    expect(ran('publish-comment')).toEqual([])
    const issues = gh.issues('acme', 'widgets')
    expect(issues).toHaveLength(1)
    const issue = issues[0]!
    expect(issue.title).toBe('Harness Watch: head regressed vs base (canary)')
    expect(parseIdentity(issue.body)).toEqual({ kind: 'tracking', key: 'canary/base-vs-head' })
    expect(parseState(issue.body)).toMatchObject({ confirmed_breaches: 1 })
    expect(issue.body).toContain('Confirmed regression')
    expect(issue.body).toMatch(
      /`head` resolved fewer of the same 9 tasks than `base` \(−55\.6 points\) — confirmed on a rerun/,
    )
    expect(gh.writes()).toEqual(['POST /repos/acme/widgets/issues'])
    expect(gh.problems()).toEqual([])
  }, 900_000)
})

describe.skipIf(!built)('examples/pr-check.yml end to end', () => {
  let gh: FakeGitHub
  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterAll(() => gh.close())

  /**
   * The repository of a harness developed under review, cloned as actions/checkout leaves it for a
   * pull request: main holds bin/agent.js (solves every task), the pull request's head a version that
   * skips the b* tasks; the workspace is at the head with origin/main fetched. The canary manifest of
   * the example at the path it names, with the example's cells and sandbox, on the fixture's panel
   * and scripted model.
   */
  async function prRepository(manifest: string): Promise<string> {
    const git = (cwd: string, ...a: string[]) =>
      execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd })
    const origin = mkdtempSync(path.join(tmpdir(), 'hw-pr-origin-'))
    await git(origin, 'init', '-q', '-b', 'main')
    mkdirSync(path.join(origin, 'bin'))
    const agent = readFileSync(path.join(fixture, 'harness.mjs'), 'utf8')
    writeFileSync(
      path.join(origin, 'bin', 'agent.js'),
      agent.replace("process.argv.includes('--skip')", 'false'),
    )
    const dir = path.dirname(manifest)
    mkdirSync(path.join(origin, dir), { recursive: true })
    cpSync(path.join(fixture, 'panel'), path.join(origin, dir, 'panel'), { recursive: true })
    const shipped = parse(readFileSync(path.join(root, 'examples', 'manifests', 'pr-canary.yml'), 'utf8'))
    const canary = parse(readFileSync(path.join(fixture, 'canary.yml'), 'utf8'))
    const m = {
      ...shipped,
      model: canary.model,
      benchmark: canary.benchmark,
      panel: canary.panel,
      budgets: canary.budgets,
      thresholds: canary.thresholds,
      seed: canary.seed,
      reporting: { ...shipped.reporting, fail_on_confirmed_regression: false },
    }
    writeFileSync(path.join(origin, manifest), JSON.stringify(m, null, 2))
    await git(origin, 'add', '.')
    await git(origin, 'commit', '-qm', 'base')
    await git(origin, 'checkout', '-qb', 'feature')
    writeFileSync(
      path.join(origin, 'bin', 'agent.js'),
      agent.replace(
        "process.argv.includes('--skip') ? process.argv[process.argv.indexOf('--skip') + 1] : null",
        "'b'",
      ),
    )
    await git(origin, 'commit', '-qam', 'skip the b tasks')
    await git(origin, 'checkout', '-q', 'main')
    const ws = mkdtempSync(path.join(tmpdir(), 'hw-pr-ws-'))
    await git(ws, 'clone', '-q', origin, '.')
    await git(ws, 'checkout', '-q', 'origin/feature')
    return ws
  }

  it('a pull request: base and head as two cells, the regression confirmed, one PR comment and no issue', async () => {
    const pr = gh.seedIssue('acme', 'widgets', { title: 'Speed up the agent', pr: true })
    const ws = await prRepository(manifestOf('examples/pr-check.yml'))
    const eventDir = mkdtempSync(path.join(tmpdir(), 'hw-pr-event-'))
    writeFileSync(
      path.join(eventDir, 'event.json'),
      JSON.stringify({ pull_request: { number: pr.number, head: { repo: { fork: false } } } }),
    )
    const r = await simulate(
      'examples/pr-check.yml',
      ws,
      actionCheckout(),
      [
        `GITHUB_API_URL=${gh.url}`,
        'GITHUB_REPOSITORY=acme/widgets',
        'GITHUB_TOKEN=test-token',
        'GITHUB_BASE_REF=main',
        'GITHUB_HEAD_REF=feature',
        'SECRET_OPENAI_API_KEY=sk-unused',
      ],
      ['--event-name', 'pull_request', '--event', path.join(eventDir, 'event.json')],
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs['harness-watch']?.outputs).toMatchObject({ status: 'confirmed', 'issue-number': '' })
    const ran = (job: string) => r.steps.filter((s) => s.job === `harness-watch/${job}`)
    expect(ran('publish-issue')).toEqual([])
    expect(ran('publish-comment').map((s) => `${s.step}:${s.result}`)).toContain('publish:success')
    expect(gh.issues('acme', 'widgets').filter((i) => !('pull_request' in i))).toEqual([])
    const comments = gh.comments('acme', 'widgets', pr.number)
    expect(comments).toHaveLength(1)
    expect(parseIdentity(comments[0]!.body)).toEqual({ kind: 'pr-report', key: 'pr-canary' })
    expect(comments[0]!.body).toContain('Confirmed regression')
    expect(r.jobs['harness-watch']?.outputs['comment-id']).toBe(String(comments[0]!.id))
    // The companion's artifact: the PR number.
    expect(r.jobs['pr-number']?.result).toBe('success')
    expect(gh.problems()).toEqual([])
  }, 900_000)
})
