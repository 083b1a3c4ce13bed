// The whole reusable workflow executed offline by scripts/simulate-workflow.ts (GitHub's own parser
// and expression engine): plan → matrix legs → aggregate → confirmation legs → confirm-aggregate →
// publish, each `uses: ./.harness-watch` step running the bundled action as the runner does
// (scripts/run-action.mjs), artifacts handed between fresh job workspaces, against the
// spec-validating fake GitHub. The experiment is the fixture of test/fixtures/workflow (two
// command-harness cells, scripted model): its 56-point regression is confirmed by the rerun, so
// the first run creates the tracking issue and the second updates it.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseIdentity, parseState } from '../../src/github/marker.js'
import { containerEnv } from '../support/container.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { actionCheckout, built, root, simulateWorkflow } from './support.js'

interface SimResult {
  conclusion: 'success' | 'failure'
  jobs: Record<string, { result: string; outputs: Record<string, string> }>
  steps: {
    job: string
    step: string
    result: string
    outputs?: Record<string, string>
    with?: Record<string, string>
  }[]
  summaries: string[]
}

// A container leg needs Docker or Podman that can run a container here (the base image is built
// from Debian's packages on first use); without one that case skips and says why.
const containers = await containerEnv()
if (!containers.runtime) console.warn(`skipping the container-leg simulation: ${containers.reason}`)

describe.skipIf(!built)('harness-watch.yml simulated end to end', () => {
  let gh: FakeGitHub
  let actionRoot: string
  let workspace: string
  let envFile: string
  let artifacts: string

  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
    actionRoot = actionCheckout()
    // The calling repository: the fixture experiment at the same path as in this repository.
    workspace = mkdtempSync(path.join(tmpdir(), 'hw-sim-caller-'))
    mkdirSync(path.join(workspace, 'test', 'fixtures'), { recursive: true })
    cpSync(
      path.join(root, 'test', 'fixtures', 'workflow'),
      path.join(workspace, 'test', 'fixtures', 'workflow'),
      { recursive: true },
    )
    envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-sim-env-')), '.env')
    writeFileSync(
      envFile,
      [`GITHUB_API_URL=${gh.url}`, 'GITHUB_REPOSITORY=acme/widgets', 'GITHUB_TOKEN=test-token'].join('\n'),
    )
    artifacts = mkdtempSync(path.join(tmpdir(), 'hw-sim-artifacts-'))
  })
  afterAll(() => gh.close())

  async function simulate(
    runId: string,
    inputs: Record<string, string>,
    signal: AbortSignal,
  ): Promise<SimResult> {
    const r = await simulateWorkflow(
      [
        '.github/workflows/harness-watch.yml',
        '--workspace',
        workspace,
        '--action-root',
        actionRoot,
        '--env-file',
        envFile,
        '--artifacts',
        artifacts,
        '--run-id',
        runId,
        '--event-name',
        'schedule',
        '--json',
        ...Object.entries(inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
      ],
      signal,
    )
    const last = r.stdout.trim().split('\n').at(-1) ?? ''
    if (!last.startsWith('{')) throw new Error(`simulation crashed:\n${r.stderr.slice(-4000)}`)
    const out = JSON.parse(last) as SimResult
    if (out.conclusion !== 'success') console.error(r.stderr.slice(-6000))
    return out
  }

  it('run 1: plans 4 legs, confirms the regression on the rerun, creates the tracking issue', async ({
    signal,
  }) => {
    const r = await simulate(
      '101',
      { manifest: 'test/fixtures/workflow/canary.yml', 'max-parallel': '2' },
      signal,
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs.plan?.outputs).toMatchObject({ 'has-work': 'true', legs: '4' })
    const legs = r.steps.filter((s) => s.step === 'run').map((s) => s.job)
    expect(legs).toEqual([
      'run (base-s0, base, 0, hw-canary-c7cb7540-base-0)',
      'run (head-s0, head, 0, hw-canary-c7cb7540-head-0)',
      'run (base-s1, base, 1, hw-canary-c7cb7540-base-1)',
      'run (head-s1, head, 1, hw-canary-c7cb7540-head-1)',
      // The confirmation rerun (a seeded sample: here the whole panel), both cells, its own artifacts.
      'confirm-run (base-s0, base, 0, hw-canary-c7cb7540-confirm1-base-0)',
      'confirm-run (head-s0, head, 0, hw-canary-c7cb7540-confirm1-head-0)',
      'confirm-run (base-s1, base, 1, hw-canary-c7cb7540-confirm1-base-1)',
      'confirm-run (head-s1, head, 1, hw-canary-c7cb7540-confirm1-head-1)',
    ])
    expect(r.jobs.aggregate?.outputs).toMatchObject({
      status: 'breach',
      breach: 'true',
      'comparison-path': 'hw-out/comparison.json',
      'confirm-plan-path': 'hw-out/confirm-1/plan.json',
    })
    expect(JSON.parse(r.jobs.aggregate?.outputs['confirm-matrix'] ?? '{}').include).toHaveLength(4)
    expect(r.jobs['confirm-aggregate']?.outputs).toMatchObject({ status: 'confirmed', confirmed: 'true' })
    expect(r.jobs['publish-issue']?.result).toBe('success')
    expect(r.jobs['publish-comment']?.result).toBe('skipped')
    // The weekly history job runs on scheduled runs and never fails the run.
    expect(r.jobs.history?.result).toBe('success')

    const issues = gh.issues('acme', 'widgets')
    expect(issues).toHaveLength(1)
    const issue = issues[0]!
    expect(issue.title).toBe('Harness Watch: head regressed vs base (canary)')
    expect(issue.labels.map((l) => l.name)).toEqual(['harness-watch', 'canary'])
    expect(parseIdentity(issue.body)).toEqual({ kind: 'tracking', key: 'canary/base-vs-head' })
    expect(parseState(issue.body)).toMatchObject({ confirmed_breaches: 1, clean_runs: 0 })
    expect(issue.body).toContain('Confirmed regression')
    expect(issue.body).toMatch(/−55\.6 pp/)
    expect(r.jobs['publish-issue']?.outputs['issue-number']).toBe('1')
    // A host-backend manifest: the leg's container step has nothing to prepare.
    const container = r.steps.filter((s) => s.step === 'container')
    expect(container).toHaveLength(8)
    for (const s of container) expect(s).toMatchObject({ result: 'success', outputs: { backend: 'auto' } })
    expect(gh.problems()).toEqual([])
  }, 600_000)

  it('run 2: the same issue is updated (body and a new comment), never duplicated', async ({ signal }) => {
    const r = await simulate(
      '102',
      { manifest: 'test/fixtures/workflow/canary.yml', 'max-parallel': '2' },
      signal,
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs['confirm-aggregate']?.outputs.status).toBe('confirmed')
    const issues = gh.issues('acme', 'widgets')
    expect(issues).toHaveLength(1)
    expect(parseState(issues[0]!.body)).toMatchObject({ confirmed_breaches: 2 })
    const comments = gh.comments('acme', 'widgets', 1)
    expect(comments).toHaveLength(1)
    expect(comments[0]!.body).toMatch(/^The regression was confirmed again by run/)
    expect(gh.writes()).toEqual([
      'POST /repos/acme/widgets/issues',
      'PATCH /repos/acme/widgets/issues/1',
      'POST /repos/acme/widgets/issues/1/comments',
    ])
    expect(gh.problems()).toEqual([])
  }, 600_000)

  it('PR mode: one comment on the pull request (pull-requests job), no tracking issue change', async ({
    signal,
  }) => {
    const pr = gh.seedIssue('acme', 'widgets', { title: 'Improve head', pr: true })
    const before = gh.writes().length
    const r = await simulate(
      '103',
      {
        manifest: 'test/fixtures/workflow/canary.yml',
        'pr-number': String(pr.number),
        'max-parallel': '4',
      },
      signal,
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs['publish-issue']?.result).toBe('skipped')
    expect(r.jobs['publish-comment']?.result).toBe('success')
    // No weekly history for a pull request: the reports name none.
    expect(r.jobs.history?.result).toBe('skipped')
    expect(r.steps.find((x) => x.job === 'aggregate' && x.step === 'aggregate')?.with).toMatchObject({
      'history-url': '',
      'history-artifact': '',
    })
    const comments = gh.comments('acme', 'widgets', pr.number)
    expect(comments).toHaveLength(1)
    expect(parseIdentity(comments[0]!.body)).toEqual({ kind: 'pr-report', key: 'canary' })
    expect(comments[0]!.body).toContain('Confirmed regression')
    expect(r.jobs['publish-comment']?.outputs['comment-id']).toBe(String(comments[0]!.id))
    expect(gh.writes().slice(before)).toEqual([`POST /repos/acme/widgets/issues/${pr.number}/comments`])
    expect(gh.problems()).toEqual([])
  }, 600_000)

  it.skipIf(!containers.runtime)(
    'a container-backend leg: the runtime step names the engine, every attempt ran in the base image with only the proxy',
    async ({ signal }) => {
      const rt = containers.runtime?.name
      const r = await simulate(
        '105',
        {
          manifest: 'test/fixtures/workflow/container.yml',
          'max-parallel': '2',
        },
        signal,
      )
      expect(r.conclusion).toBe('success')
      expect(r.jobs.plan?.outputs).toMatchObject({ 'has-work': 'true', legs: '2' })
      const key = r.jobs.plan?.outputs['call-key']
      expect(key).toMatch(/^[0-9a-f]{8}$/)
      const prep = r.steps.filter((s) => s.step === 'container')
      expect(prep.map((s) => s.job)).toEqual([
        `run (base-s0, base, 0, hw-canary-container-${key}-base-0)`,
        `run (head-s0, head, 0, hw-canary-container-${key}-head-0)`,
      ])
      for (const s of prep) {
        expect(s.result).toBe('success')
        expect(s.outputs).toMatchObject({ backend: 'container', runtime: rt, instances: '9' })
        expect(s.outputs?.cgroup).toMatch(/^v[12]$/)
        expect(Number(s.outputs?.['disk-free-gb'])).toBeGreaterThan(0)
      }
      // The leg artifacts: every attempt ran in a container of the base image, only the proxy reachable.
      for (const cell of ['base', 'head']) {
        const dir = path.join(artifacts, '105', `hw-canary-container-${key}-${cell}-0-a1`)
        const attempts = readFileSync(path.join(dir, 'attempts.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
        expect(attempts).toHaveLength(9)
        for (const a of attempts) {
          expect(a).toMatchObject({ isolation: 'container', canary: 'passed', network: 'proxy-only' })
          expect(a.environment).toMatchObject({
            runtime: rt,
            image_ref: 'localhost/harness-watch-base:bookworm',
            network: { agent: 'proxy-only', verifier: 'none' },
          })
          expect(a.environment.image_id).toMatch(/^sha256:[0-9a-f]{64}$/)
        }
      }
      // The same nine blocks as the host fixture: head skips the five b* tasks.
      expect(r.jobs.aggregate?.outputs).toMatchObject({ status: 'breach', breach: 'true' })
      expect(gh.problems()).toEqual([])
    },
    600_000,
  )

  it('F11: an empty cell selection plans nothing; the fan-out is guarded and nothing is published', async ({
    signal,
  }) => {
    const before = gh.writes().length
    const r = await simulate('104', { manifest: 'test/fixtures/workflow/canary.yml', cells: ',' }, signal)
    expect(r.conclusion).toBe('success')
    expect(r.jobs.plan?.outputs).toMatchObject({ 'has-work': 'false', legs: '0' })
    for (const j of [
      'run',
      'aggregate',
      'confirm-run',
      'confirm-aggregate',
      'publish-issue',
      'publish-comment',
    ]) {
      expect(r.jobs[j]?.result, j).toBe('skipped')
    }
    expect(r.summaries.join('\n')).toContain('No cells scheduled')
    expect(gh.writes().length).toBe(before)
  }, 600_000)
})
