import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Decision } from '../../src/detect/schema.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { HwOctokit } from '../../src/github/octokit.js'
import { failureOf, planPublish, publish, publishLine, runUrl } from '../../src/github/publish.js'
import { BODY_BUDGET, prCommentBody, trackingIssueBody } from '../../src/github/render.js'
import { isHwError } from '../../src/util/errors.js'
import { strictJson } from '../../src/util/json.js'
import { makeComparison, rows } from '../detect/fixtures.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { breachingComparison, client, confirmedRun, ctx, firstRun, repo } from './support.js'

/** Write decision.json + the first run's comparison.json as the publish step finds them. */
async function onDisk(d: Decision): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hw-publish-'))
  const cdir = path.join(dir, 'confirm-1')
  await mkdir(cdir, { recursive: true })
  await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
  await writeFile(path.join(cdir, 'comparison.json'), strictJson(breachingComparison))
  await writeFile(path.join(cdir, 'decision.json'), strictJson(DecisionSchema.parse(d)))
  return path.join(cdir, 'comparison.json')
}

describe('publish', () => {
  let gh: FakeGitHub
  beforeEach(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterEach(async () => {
    await gh.close()
  })

  it('cron mode: a confirmed breach files one issue and fails the check per policy', async () => {
    const file = await onDisk(confirmedRun())
    const r = await publish({
      comparison: file,
      token: 't',
      repo,
      client: client(gh.url),
      reportUrl: 'https://example.test/run/1',
    })
    expect(r.issues.map((i) => [i.key, i.action, i.number])).toEqual([['exp/a-vs-b', 'created', 1]])
    expect(r.comment).toBeNull()
    expect(r.failure).toMatch(/^confirmed regression: b vs a −20\.0 pp/)
    expect(r.summary).toContain('tracking issue #1 created')
    expect(gh.problems()).toEqual([])
  })

  it('PR mode: one comment, no issue; an unconfirmed breach does not fail the check', async () => {
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const file = await onDisk(firstRun())
    const r = await publish({ comparison: file, token: 't', repo, pr: pr.number, client: client(gh.url) })
    expect(r.comment?.action).toBe('created')
    expect(gh.issues('acme', 'widgets')).toHaveLength(1) // only the PR itself
    expect(r.failure).toBeNull()
    expect(gh.comments('acme', 'widgets', pr.number)[0]!.body).toMatch(/Unconfirmed; rerun requested/)
  })

  it('fail_on_confirmed_regression: false keeps the check green; evaluation errors still fail it', () => {
    const d = confirmedRun()
    d.policy.reporting.fail_on_confirmed_regression = false
    expect(failureOf(d)).toBeNull()
    d.health.push({
      code: 'leg_missing',
      severity: 'error',
      key: null,
      cell: 'a',
      message: 'leg a-s1 failed',
      count: 1,
      instances: [],
    })
    expect(failureOf(d)).toBe('evaluation failed (not a harness result): leg a-s1 failed')
  })

  it('403 "Resource not accessible by integration" names the missing permission (issues: write)', async () => {
    gh.set({ readOnly: true })
    const file = await onDisk(confirmedRun())
    const err = await publish({ comparison: file, token: 't', repo, client: client(gh.url) }).catch((e) => e)
    expect(isHwError(err)).toBe(true)
    expect(err.code).toBe('github_permission')
    expect(err.message).toMatch(/permissions: issues: write/)
    expect(err.help).toMatch(/forks/)
  })

  it('403 on a PR comment names pull-requests: write', async () => {
    gh.set({ readOnly: true })
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const file = await onDisk(firstRun())
    const err = await publish({
      comparison: file,
      token: 't',
      repo,
      pr: pr.number,
      client: client(gh.url),
    }).catch((e) => e)
    expect(err.code).toBe('github_permission')
    expect(err.message).toMatch(/pull-requests: write/)
  })

  it('401 (no token sent) and 404 (no such PR) are explained', async () => {
    const pr404 = await publish({
      comparison: await onDisk(firstRun()),
      token: 't',
      repo,
      pr: 999,
      client: client(gh.url),
    }).catch((e) => e)
    expect(pr404.code).toBe('github_not_found')
    // A client that sends no Authorization header at all.
    const anon = new HwOctokit({
      baseUrl: gh.url,
      request: { retries: 0 },
      throttle: { enabled: false },
    } as never)
    const e401 = await publish({
      comparison: await onDisk(confirmedRun()),
      token: 'x',
      repo,
      client: anon,
    }).catch((e) => e)
    expect(e401.code).toBe('github_unauthorized')
  })

  it('F13: a 422 from GitHub is a visible failure with its message', async () => {
    const o = client(gh.url)
    const err = await import('../../src/github/octokit.js').then(({ call }) =>
      call('create the tracking issue', 'issues: write', () =>
        o.rest.issues.create({ ...repo, title: 't', body: 'x'.repeat(70_000) }),
      ).catch((e) => e),
    )
    expect(err.code).toBe('github_rejected')
    expect(err.details).toEqual(['body is too long (maximum is 65536 characters)'])
  })

  it('the run URL comes from the runner environment', () => {
    expect(
      runUrl({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'a/b', GITHUB_RUN_ID: '9' }),
    ).toBe('https://github.com/a/b/actions/runs/9')
    expect(runUrl({})).toBeNull()
  })
})

describe('F13: bodies stay under 65,536 characters', () => {
  // 3,000 instance rows with multibyte ids near any cut point: the per-instance table alone is far over.
  const big = makeComparison({
    cells: ['a', 'b'],
    B: 200,
    rows: rows(
      3000,
      (i) => (i % 5 === 0 ? { a: { o: 'r' }, b: { o: 'u' } } : { a: { o: 'r' }, b: { o: 'r' } }),
      'タスク✓-',
    ),
  })

  it('the tracking issue body keeps its markers and headline, drops sections from the bottom, links the report', async () => {
    const d = firstRun(big)
    const c = { decision: d, comparison: big, reportUrl: 'https://github.com/acme/widgets/actions/runs/7' }
    const body = trackingIssueBody(c, 'exp/a-vs-b', {
      clean_runs: 0,
      confirmed_breaches: 1,
      last_status: 'confirmed',
      last_run: 'r',
      recovered: false,
    })
    expect(body.length).toBeLessThanOrEqual(BODY_BUDGET)
    expect(body.split('\n')[0]).toBe('<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->')
    expect(body).toContain('Threshold crossings')
    expect(body).toMatch(/left out to stay within GitHub's 65,536-character limit\. Full report: \[https:/)
    // No lone surrogate: the body round-trips through UTF-8.
    expect(Buffer.from(body, 'utf8').toString('utf8')).toBe(body)
    expect((body.match(/<details>/g) ?? []).length).toBe((body.match(/<\/details>/g) ?? []).length)

    // The fake accepts it (and would answer 422 over the limit).
    const gh = await startFakeGitHub({ strictBodies: true })
    try {
      const { data } = await client(gh.url).rest.issues.create({ ...repo, title: 't', body })
      expect(data.body).toBe(body)
    } finally {
      await gh.close()
    }
  })

  it('the PR comment body too', () => {
    const body = prCommentBody({ decision: firstRun(big), comparison: big, reportUrl: null }, 'exp')
    expect(body.length).toBeLessThanOrEqual(BODY_BUDGET)
    expect(body).toMatch(/The full report is in the run artifacts/)
  })

  it('a small report is not shortened', () => {
    const body = trackingIssueBody(ctx(confirmedRun()), 'exp/a-vs-b', {
      clean_runs: 0,
      confirmed_breaches: 1,
      last_status: 'confirmed',
      last_run: 'r',
      recovered: false,
    })
    expect(body).not.toMatch(/left out/)
    expect(body).toContain('`inst-30`')
  })
})

describe('dry run: says what would be created, updated or skipped, with the body it would write', () => {
  const opts = { labels: ['harness-watch', 'nightly'], recoveredAfter: 2, closeOnRecovery: true }

  it('confirmed, no --pr: would create the tracking issue (title, labels) or update the one found; its body is shown', async () => {
    const file = await onDisk(confirmedRun())
    const r = await publish({ comparison: file, token: '', dryRun: true })
    expect(r.issues).toEqual([])
    expect(r.comment).toBeNull()
    // The experiment's evaluation-health notice is looked up too: health is clean, so none is opened.
    expect(r.planned.map((a) => [a.target, a.kind])).toEqual([
      ['exp/a-vs-b', 'create_or_update'],
      ['exp (evaluation health)', 'update_if_open'],
    ])
    expect(r.summary).toContain(
      '- `exp/a-vs-b`: would search the issues labelled `harness-watch` (open and closed) for the marker ' +
        '`<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->`, then create tracking issue ' +
        '“Harness Watch: b regressed vs a (exp)” with labels `harness-watch` when there is none, or update the one found',
    )
    const body = r.summary.split('#### Tracking issue body: `exp/a-vs-b`\n\n')[1]!
    expect(body.split('\n')[0]).toBe('<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->')
    expect(body).toContain('❌ **Confirmed regression: ')
    expect(r.summary).not.toContain('Harness Watch PR check')
    expect(r.summary.trimEnd().endsWith('Dry run: nothing was written to GitHub.')).toBe(true)
    expect(publishLine(r)).toBe(
      'confirmed: nothing written to GitHub; exp/a-vs-b: would search for the marker, then create or update the tracking issue' +
        '; exp (evaluation health): would open no notice (health clean); an open evaluation-health notice would be marked recovered',
    )
  })

  it('unconfirmed: would skip, no body', async () => {
    const r = await publish({ comparison: await onDisk(firstRun()), token: '', dryRun: true })
    expect(r.planned.slice(0, 1)).toEqual([
      {
        target: 'exp/a-vs-b',
        kind: 'skip',
        short: 'would skip: no confirmed breach',
        text: 'would skip: no confirmed breach (this breach is unconfirmed; the targeted rerun decides) — tracking issues open only on a confirmed breach or weekly evidence that crossed its bound',
        body: null,
      },
    ])
    expect(r.summary).toContain('_No body would be written._')
    expect(r.summary).not.toContain('kind=tracking')
    expect(r.summary).not.toContain('Harness Watch PR check')
    expect(publishLine(r)).toBe(
      `breach (unconfirmed): nothing written to GitHub; exp/a-vs-b: would skip: no confirmed breach; exp (evaluation health): would open no notice (health clean); an open evaluation-health notice would be marked recovered`,
    )
  })

  it('cleared: creates nothing; an open tracking issue would count a clean run (recovered after 2, then closed)', () => {
    const [a] = planPublish(ctx(confirmedRun(false)), { pr: null, ...opts })
    expect(a!.kind).toBe('update_if_open')
    expect(a!.body).toBeNull()
    expect(a!.text).toBe(
      'would create nothing: no confirmed breach — tracking issues open only on a confirmed breach or weekly evidence that crossed its bound; ' +
        'would search the issues labelled `harness-watch` and `nightly` (open and closed) for the marker ' +
        '`<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->` and, if an open tracking issue is found, ' +
        'count this clean run (after 2 in a row it is labelled `recovered`, then closed)',
    )
  })

  it('inconclusive: would skip (an evaluation failure is not evidence)', () => {
    const d = confirmedRun()
    d.comparisons = d.comparisons.map((v) => ({ ...v, status: 'inconclusive' as const }))
    const [a] = planPublish(ctx(d), { pr: null, ...opts })
    expect(a!.kind).toBe('skip')
    expect(a!.text).toMatch(/^would skip: the comparison is inconclusive \(the evaluation failed\)/)
  })

  it('all labels are named for a new issue; with --pr only the PR comment is planned, with its body', () => {
    const c = ctx(confirmedRun())
    expect(planPublish(c, { pr: null, ...opts })[0]!.text).toContain('with labels `harness-watch`, `nightly`')
    const [pr] = planPublish(c, { pr: 9, ...opts })
    expect(pr!.target).toBe('PR #9')
    expect(pr!.kind).toBe('pr_comment')
    expect(pr!.body).toBe(prCommentBody(c, 'exp'))
  })

  it('a first run whose confirmation round is decided points to that round', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-publish-'))
    await mkdir(path.join(dir, 'confirm-1'))
    await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
    await writeFile(path.join(dir, 'decision.json'), strictJson(DecisionSchema.parse(firstRun())))
    const confirmed = confirmedRun()
    confirmed.runs = confirmed.runs.map((x) =>
      x.round === 0 ? { ...x, comparison: '../comparison.json' } : { ...x, comparison: 'comparison.json' },
    )
    await writeFile(path.join(dir, 'confirm-1', 'decision.json'), strictJson(DecisionSchema.parse(confirmed)))
    const r = await publish({ comparison: path.join(dir, 'comparison.json'), token: '', dryRun: true })
    expect(r.summary).toContain(
      `Note: confirmation round 1 has been decided (confirmed) in \`${path.join(dir, 'confirm-1', 'decision.json')}\`; ` +
        `this first run is not the final decision. Publish that round: \`--comparison ${path.join(dir, 'confirm-1', 'comparison.json')}\`.`,
    )
    // Publishing it for real would post a superseded state: refused before any request.
    const calls: string[] = []
    const client = new Proxy({}, { get: (_t, k) => calls.push(String(k)) }) as never
    await expect(
      publish({
        comparison: path.join(dir, 'comparison.json'),
        token: 't',
        client,
        pr: 5,
        repo: { owner: 'o', repo: 'r' },
      }),
    ).rejects.toMatchObject({
      code: 'publish_superseded',
      message: expect.stringMatching(/^confirmation round 1 has been decided \(confirmed\)/),
    })
    expect(calls).toEqual([])
  })
})
