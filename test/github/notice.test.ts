// The evaluation-health notice: infrastructure-only problems (health errors, no confirmed breach) go
// out as ONE notice per experiment with its own label, found again by its hidden marker, reopened and
// marked recovered — never as a regression issue. Against the spec-validating fake GitHub.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Decision, DecisionSchema, type Health } from '../../src/detect/schema.js'
import { identityMarker, parseIdentity, parseNoticeState, stateMarker } from '../../src/github/marker.js'
import { noticeKind, noticeRunStatus, planNotice } from '../../src/github/notice.js'
import { syncHealthNotice } from '../../src/github/notice-issue.js'
import { makeOctokit } from '../../src/github/octokit.js'
import { publish, publishLine } from '../../src/github/publish.js'
import { strictJson } from '../../src/util/json.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { breachingComparison, cleanComparison, client, confirmedRun, ctx, firstRun, repo } from './support.js'

const MARKER = '<!-- harness-watch:v1 kind=health key=exp -->'

function healthError(message: string, code: Health['code'] = 'harness_startup_failure'): Health {
  return { code, severity: 'error', key: null, cell: 'b', message, count: 1, instances: [] }
}

/** An evaluation that failed (a dead cell): inconclusive, health errors, no signal. */
function unhealthy(runId = 'run-20', message = 'cell b (opencode) failed on every instance'): Decision {
  const d = firstRun(cleanComparison)
  d.run_id = runId
  d.status = 'inconclusive'
  d.summary = 'inconclusive: the evaluation failed (not a harness result)'
  d.comparisons = d.comparisons.map((v) => ({ ...v, status: 'inconclusive' as const }))
  d.health = [healthError(message)]
  return d
}

/** A clean run of the same experiment. */
function healthy(runId = 'run-30'): Decision {
  const d = firstRun(cleanComparison)
  d.run_id = runId
  return d
}

const existing = (over: { state?: 'open' | 'closed'; recovered?: boolean; labels?: string[] } = {}) => ({
  number: 4,
  state: over.state ?? ('open' as const),
  body: `${MARKER}\n${stateMarker({ unhealthy_runs: 2, last_status: 'unhealthy', last_run: 'r', recovered: over.recovered ?? false })}\nbody`,
  labels: over.labels ?? ['harness-watch', 'evaluation-health'],
  html_url: 'https://github.com/acme/widgets/issues/4',
})

describe('planNotice (pure)', () => {
  it('the run status: health errors without a confirmed breach are unhealthy; a confirmed breach leaves the notice alone', () => {
    expect(noticeRunStatus(healthy())).toBe('clean')
    expect(noticeRunStatus(unhealthy())).toBe('unhealthy')
    const confirmed = confirmedRun()
    expect(noticeRunStatus(confirmed)).toBe('clean')
    confirmed.health.push(healthError('leg b-s1 failed', 'leg_missing'))
    expect(noticeKind(confirmed).kind).toBe('regression')
    expect(noticeRunStatus(confirmed)).toBe('untouched')
    // A warning alone is not an evaluation failure.
    const warned = healthy()
    warned.health.push({ ...healthError('coverage 90%'), severity: 'warning' })
    expect(noticeRunStatus(warned)).toBe('clean')
  })

  it('unhealthy: create when none; count the run on an open one; reopen a closed or recovered one with a comment', () => {
    const run = 'run-1'
    expect(planNotice({ existing: null, status: 'unhealthy', closeOnRecovery: true, run })).toEqual({
      kind: 'create',
      state: { unhealthy_runs: 1, last_status: 'unhealthy', last_run: run, recovered: false },
    })
    expect(planNotice({ existing: existing(), status: 'unhealthy', closeOnRecovery: true, run })).toEqual({
      kind: 'update',
      state: { unhealthy_runs: 3, last_status: 'unhealthy', last_run: run, recovered: false },
      reopen: false,
      close: false,
      comment: null,
      addLabels: [],
      removeLabels: [],
    })
    const closed = existing({
      state: 'closed',
      recovered: true,
      labels: ['harness-watch', 'evaluation-health', 'recovered'],
    })
    expect(planNotice({ existing: closed, status: 'unhealthy', closeOnRecovery: true, run })).toMatchObject({
      kind: 'update',
      reopen: true,
      comment: 'reopened',
      removeLabels: ['recovered'],
    })
    // Recovered but left open (close_on_recovery off): no reopen needed, but a comment says it failed again.
    const openRecovered = existing({
      recovered: true,
      labels: ['harness-watch', 'evaluation-health', 'recovered'],
    })
    expect(
      planNotice({ existing: openRecovered, status: 'unhealthy', closeOnRecovery: false, run }),
    ).toMatchObject({ kind: 'update', reopen: false, comment: 'reopened', removeLabels: ['recovered'] })
  })

  it('clean: never opens; marks an open notice recovered once (closed per policy); untouched: nothing', () => {
    const run = 'run-2'
    expect(planNotice({ existing: null, status: 'clean', closeOnRecovery: true, run })).toEqual({
      kind: 'none',
      reason: 'evaluation health is clean and no notice is open',
    })
    expect(planNotice({ existing: existing(), status: 'clean', closeOnRecovery: false, run })).toEqual({
      kind: 'update',
      state: { unhealthy_runs: 2, last_status: 'clean', last_run: run, recovered: true },
      reopen: false,
      close: false,
      comment: 'recovered',
      addLabels: ['recovered'],
      removeLabels: [],
    })
    expect(planNotice({ existing: existing(), status: 'clean', closeOnRecovery: true, run })).toMatchObject({
      close: true,
    })
    expect(
      planNotice({ existing: existing({ recovered: true }), status: 'clean', closeOnRecovery: false, run })
        .kind,
    ).toBe('none')
    expect(
      planNotice({ existing: existing({ state: 'closed' }), status: 'clean', closeOnRecovery: true, run })
        .kind,
    ).toBe('none')
    expect(planNotice({ existing: existing(), status: 'untouched', closeOnRecovery: true, run }).kind).toBe(
      'none',
    )
  })
})

describe('syncHealthNotice against the fake GitHub', () => {
  let gh: FakeGitHub
  beforeEach(async () => {
    gh = await startFakeGitHub({ strictBodies: true, tokenKind: 'installation' })
  })
  afterEach(async () => {
    expect(gh.problems()).toEqual([])
    await gh.close()
  })
  const opts = { closeOnRecovery: true }

  it('lifecycle: clean → nothing; unhealthy → one notice; again → same notice; clean → recovered and closed; unhealthy → reopened', async () => {
    const o = client(gh.url)
    expect(await syncHealthNotice(o, repo, ctx(healthy()), opts)).toMatchObject({
      action: 'none',
      number: null,
    })
    expect(gh.issues('acme', 'widgets')).toEqual([])

    const r1 = await syncHealthNotice(o, repo, ctx(unhealthy('run-20')), opts)
    expect(r1).toMatchObject({ key: 'exp', action: 'created', number: 1 })
    const [notice] = gh.issues('acme', 'widgets')
    expect(notice!.title).toBe('Harness Watch: evaluation health of exp')
    expect(notice!.labels.map((l) => l.name)).toEqual(['harness-watch', 'evaluation-health'])
    expect(parseIdentity(notice!.body)).toEqual({ kind: 'health', key: 'exp' })
    expect(parseNoticeState(notice!.body)).toEqual({
      unhealthy_runs: 1,
      last_status: 'unhealthy',
      last_run: 'run-20',
      recovered: false,
    })
    expect(notice!.body).toContain('The evaluation itself failed')
    expect(notice!.body).toContain('cell b (opencode) failed on every instance')
    // Never a regression issue: no regression wording, no tracking marker.
    expect(notice!.body).not.toMatch(/kind=tracking|Confirmed regression|regressed/)

    const r2 = await syncHealthNotice(o, repo, ctx(unhealthy('run-21', 'proxy quota exhausted')), opts)
    expect(r2).toMatchObject({ action: 'updated', number: 1 })
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
    expect(gh.issues('acme', 'widgets')[0]!.body).toContain('proxy quota exhausted')
    expect(parseNoticeState(gh.issues('acme', 'widgets')[0]!.body)).toMatchObject({ unhealthy_runs: 2 })
    expect(gh.comments('acme', 'widgets', 1)).toEqual([])

    const r3 = await syncHealthNotice(o, repo, ctx(healthy('run-22')), opts)
    expect(r3).toMatchObject({ action: 'recovered', number: 1 })
    const closed = gh.issues('acme', 'widgets')[0]!
    expect(closed.state).toBe('closed')
    expect(closed.labels.map((l) => l.name)).toEqual(['harness-watch', 'evaluation-health', 'recovered'])
    expect(parseNoticeState(closed.body)).toMatchObject({
      recovered: true,
      last_status: 'clean',
      unhealthy_runs: 2,
    })
    expect(gh.comments('acme', 'widgets', 1).map((c) => c.body.split('\n')[0])).toEqual([
      '✅ Recovered: run `run-22` had no evaluation-health error.',
    ])
    // The comment explaining the close was written before the close.
    const writes = gh.writes()
    expect(writes.slice(-2)).toEqual([
      'POST /repos/acme/widgets/issues/1/comments',
      'PATCH /repos/acme/widgets/issues/1',
    ])

    expect((await syncHealthNotice(o, repo, ctx(healthy('run-23')), opts)).action).toBe('none')

    const r5 = await syncHealthNotice(o, repo, ctx(unhealthy('run-24')), opts)
    expect(r5).toMatchObject({ action: 'reopened', number: 1 })
    const again = gh.issues('acme', 'widgets')
    expect(again).toHaveLength(1)
    expect(again[0]!.state).toBe('open')
    expect(again[0]!.labels.map((l) => l.name)).toEqual(['harness-watch', 'evaluation-health'])
    expect(parseNoticeState(again[0]!.body)).toMatchObject({ unhealthy_runs: 3, recovered: false })
    expect(gh.comments('acme', 'widgets', 1).at(-1)!.body).toMatch(
      /^Reopened: run `run-24` has evaluation-health errors again\.\n\n- `harness_startup_failure`: cell b/,
    )
  })

  it('a look-alike by a person, a tracking issue and another experiment’s notice are not taken for it', async () => {
    const o = client(gh.url)
    const labels = ['harness-watch', 'evaluation-health']
    const mallory = gh.seedIssue('acme', 'widgets', { title: 'look-alike', body: `${MARKER}\nfake`, labels })
    mallory.user = { ...(mallory.user as object), login: 'mallory', type: 'User' } as typeof mallory.user
    const other = gh.seedIssue('acme', 'widgets', {
      title: 'other',
      body: `${identityMarker('health', 'exp-2')}\nother`,
      labels,
    })
    other.user = { ...(other.user as object), login: 'github-actions[bot]', type: 'Bot' } as typeof other.user
    const r = await syncHealthNotice(o, repo, ctx(unhealthy()), opts)
    expect(r.action).toBe('created')
    expect(r.number).not.toBe(mallory.number)
    expect(r.number).not.toBe(other.number)
    expect(gh.issues('acme', 'widgets')[0]!.body).toBe(`${MARKER}\nfake`)
  })

  it('a create GitHub carried out but answered with a 502 is found by its marker, not sent twice', async () => {
    const o = makeOctokit({ token: 't', baseUrl: gh.url, throttle: false })
    gh.injectAfterOnce('issues/create', { status: 502, body: { message: 'Server Error' } })
    const r = await syncHealthNotice(o, repo, ctx(unhealthy()), opts)
    expect(r.action).toBe('created')
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
    expect(gh.writes()).toEqual(['POST /repos/acme/widgets/issues'])
    const lists = gh.requests.filter((q) => q.operationId === 'issues/list-for-repo')
    expect(lists.map((q) => q.query.labels)).toEqual([
      'harness-watch,evaluation-health',
      'harness-watch,evaluation-health',
    ])
  }, 20_000)

  it('a read-only token fails visibly, naming issues: write', async () => {
    gh.set({ readOnly: true })
    await expect(syncHealthNotice(client(gh.url), repo, ctx(unhealthy()), opts)).rejects.toThrow(
      /the token may not create the evaluation-health notice.*permissions: issues: write/,
    )
  })

  it('forged health text from an artifact is escaped in the notice and its comments', async () => {
    const payload = '<img src=https://evil.example/p.png> @team <!-- hidden --> [x](http://x)'
    const o = client(gh.url)
    await syncHealthNotice(o, repo, ctx(unhealthy('run-1', payload)), opts)
    await syncHealthNotice(o, repo, ctx(healthy('run-2')), opts)
    await syncHealthNotice(o, repo, ctx(unhealthy('run-3', payload)), opts)
    const bodies = [
      gh.issues('acme', 'widgets')[0]!.body!,
      ...gh.comments('acme', 'widgets', 1).map((c) => c.body),
    ]
    for (const b of bodies) {
      expect(b).not.toContain('<img')
      expect(b).not.toMatch(/(^|[^\u200d])@team/)
      expect(b).not.toContain('<!-- hidden')
      expect(b).not.toContain('[x](http://x)')
      // Only our own markers are HTML comments, on the first two lines.
      expect(b.split('\n').slice(2).join('\n')).not.toContain('<!--')
    }
  })
})

/** decision.json + the first run's comparison.json, as publish reads them. */
async function onDisk(d: Decision): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hw-notice-'))
  const cdir = path.join(dir, 'confirm-1')
  await mkdir(cdir, { recursive: true })
  await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
  await writeFile(path.join(cdir, 'comparison.json'), strictJson(breachingComparison))
  await writeFile(path.join(cdir, 'decision.json'), strictJson(DecisionSchema.parse(d)))
  return path.join(cdir, 'comparison.json')
}

describe('publish: infrastructure-only problems are a notice, never a regression issue', () => {
  let gh: FakeGitHub
  beforeEach(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterEach(async () => {
    expect(gh.problems()).toEqual([])
    await gh.close()
  })

  it('F06: an inconclusive run (budget exhausted) publishes the evaluation-health notice, no tracking issue; the check fails as an evaluation failure', async () => {
    const r = await publish({
      comparison: await onDisk(unhealthy()),
      token: 't',
      repo,
      client: client(gh.url),
    })
    expect(r.issues.map((i) => i.action)).toEqual(['none'])
    expect(r.notice).toMatchObject({ key: 'exp', action: 'created', number: 1 })
    const all = gh.issues('acme', 'widgets')
    expect(all).toHaveLength(1)
    expect(all[0]!.labels.map((l) => l.name)).toEqual(['harness-watch', 'evaluation-health'])
    expect(r.failure).toBe(
      'evaluation failed (not a harness result): cell b (opencode) failed on every instance',
    )
    expect(r.summary).toContain('- evaluation-health notice #1 created (')
    expect(publishLine(r)).toBe(
      `inconclusive: 1 comparison(s) without an issue change; evaluation-health notice #1 created ${gh.url}/acme/widgets/issues/1`,
    )
    // The next clean run marks it recovered and closes it.
    const r2 = await publish({
      comparison: await onDisk(healthy()),
      token: 't',
      repo,
      client: client(gh.url),
    })
    expect(r2.notice).toMatchObject({ action: 'recovered', number: 1 })
    expect(gh.issues('acme', 'widgets')[0]!.state).toBe('closed')
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
  })

  it('a confirmed breach with health errors opens the regression issue and leaves the notice alone', async () => {
    const d = confirmedRun()
    d.health.push(healthError('leg b-s1 failed', 'leg_missing'))
    const r = await publish({ comparison: await onDisk(d), token: 't', repo, client: client(gh.url) })
    expect(r.issues.map((i) => i.action)).toEqual(['created'])
    expect(r.notice?.action).toBe('none')
    const all = gh.issues('acme', 'widgets')
    expect(all).toHaveLength(1)
    expect(parseIdentity(all[0]!.body)?.kind).toBe('tracking')
  })

  it('PR mode publishes only the PR comment (the notice is for the tracking mode)', async () => {
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const r = await publish({
      comparison: await onDisk(unhealthy()),
      token: 't',
      repo,
      pr: pr.number,
      client: client(gh.url),
    })
    expect(r.notice).toBeNull()
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
  })

  it('dry run: says it would create or update the notice, with its body; writes nothing', async () => {
    const r = await publish({ comparison: await onDisk(unhealthy()), token: '', dryRun: true })
    expect(r.planned.map((a) => [a.target, a.kind])).toEqual([
      ['exp/a-vs-b', 'skip'],
      ['exp (evaluation health)', 'health_notice'],
    ])
    const text = r.planned[1]!.text
    expect(text).toBe(
      'the run has evaluation-health errors and no confirmed breach — a notice, never a regression issue: ' +
        'would search the issues labelled `harness-watch` and `evaluation-health` (open and closed) for the marker ' +
        `\`${MARKER}\`, then create “Harness Watch: evaluation health of exp” with labels \`harness-watch\`, ` +
        '`evaluation-health` when there is none, or update the one found (new body; reopened with a comment if closed or recovered)',
    )
    const body = r.summary.split('#### Evaluation-health notice body: `exp (evaluation health)`\n\n')[1]!
    expect(body.split('\n')[0]).toBe(MARKER)
    expect(body).toContain('cell b (opencode) failed on every instance')
    expect(r.summary).not.toContain('Tracking issue body')
    expect(publishLine(r)).toBe(
      'inconclusive: nothing written to GitHub; exp/a-vs-b: would skip: inconclusive; ' +
        'exp (evaluation health): would search for the marker, then create or update the evaluation-health notice',
    )
    expect(gh.requests).toEqual([])
  })

  it('dry run of a healthy run: no notice would be opened; an open one would be marked recovered', async () => {
    const r = await publish({ comparison: await onDisk(healthy()), token: '', dryRun: true })
    expect(r.planned.at(-1)).toMatchObject({
      target: 'exp (evaluation health)',
      kind: 'update_if_open',
      body: null,
    })
    expect(r.planned.at(-1)!.text).toMatch(
      /^would open no notice: no evaluation-health error; .* mark it recovered \(labelled `recovered`, with a comment and closed\)$/,
    )
  })
})
