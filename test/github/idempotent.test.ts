// Publishing is idempotent for every token kind (a PAT, the workflow's GITHUB_TOKEN, a GitHub App's
// installation token, and a token whose login cannot be found), and a create that GitHub carried out
// but answered with a 5xx is never sent twice. Against the spec-validating fake GitHub.
import { afterEach, describe, expect, it } from 'vitest'
import { upsertPrComment, viewerLogin } from '../../src/github/comment.js'
import { syncTrackingIssue } from '../../src/github/issue.js'
import { identityMarker } from '../../src/github/marker.js'
import { prCommentBody } from '../../src/github/render.js'
import { type FakeGitHub, type FakeGitHubOptions, startFakeGitHub } from '../support/fake-github.js'
import { client, confirmedRun, ctx, firstRun, repo } from './support.js'

const opts = { labels: ['harness-watch', 'nightly'], recoveredAfter: 2, closeOnRecovery: true }
const badGateway = { status: 502, body: { message: 'Server Error' } }

let gh: FakeGitHub
afterEach(async () => {
  expect(gh.problems()).toEqual([])
  await gh.close()
})

const kinds: [string, FakeGitHubOptions, string | null][] = [
  ['a personal access token', { tokenKind: 'user' }, 'octocat'],
  ['the workflow’s GITHUB_TOKEN', { tokenKind: 'installation' }, 'github-actions[bot]'],
  ['a GitHub App installation token', { tokenKind: 'app' }, 'harness-watch-app[bot]'],
  ['an App token where GraphQL is unavailable', { tokenKind: 'app', graphql: false }, null],
]

describe.each(kinds)('%s', (_name, kind, login) => {
  it(`finds its own login (${login ?? 'unknown: marker + labels + a bot author decide'})`, async () => {
    gh = await startFakeGitHub({ strictBodies: true, ...kind })
    expect(await viewerLogin(client(gh.url))).toBe(login)
  })

  it('edits its one PR comment on every run; a forged marker by a person is left alone', async () => {
    gh = await startFakeGitHub({ strictBodies: true, ...kind })
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    gh.seedComment('acme', 'widgets', pr.number, `${identityMarker('pr-report', 'exp')}\nforged`, 'mallory')
    const o = client(gh.url)
    const body = prCommentBody(ctx(firstRun()), 'exp')
    const r1 = await upsertPrComment(o, repo, pr.number, 'exp', body)
    const r2 = await upsertPrComment(o, repo, pr.number, 'exp', body)
    const r3 = await upsertPrComment(o, repo, pr.number, 'exp', body)
    expect([r1.action, r2.action, r3.action]).toEqual(['created', 'updated', 'updated'])
    expect(new Set([r1.id, r2.id, r3.id]).size).toBe(1)
    const comments = gh.comments('acme', 'widgets', pr.number)
    expect(comments.map((c) => c.user.login)).toEqual(['mallory', login ?? 'harness-watch-app[bot]'])
    expect(comments[0]!.body).toBe(`${identityMarker('pr-report', 'exp')}\nforged`)
  })

  it('updates its one tracking issue; a look-alike issue by a person is not taken for it', async () => {
    gh = await startFakeGitHub({ strictBodies: true, ...kind })
    const d = confirmedRun()
    const v = d.comparisons[0]!
    const o = client(gh.url)
    const first = await syncTrackingIssue(o, repo, ctx(d), v, opts)
    expect(first.action).toBe('created')
    // A person's issue with our marker and labels (written by 'mallory', not a bot).
    const mallory = gh.seedIssue('acme', 'widgets', {
      title: 'look-alike',
      body: `${identityMarker('tracking', v.key)}\nfake`,
      labels: opts.labels,
    })
    mallory.user = { ...(mallory.user as object), login: 'mallory', type: 'User' }
    const second = await syncTrackingIssue(o, repo, ctx(d), v, opts)
    expect(second).toMatchObject({ action: 'updated', number: first.number })
    expect(gh.issues('acme', 'widgets')).toHaveLength(2)
  })
})

describe('a create GitHub carried out but answered with a 5xx is not sent twice', () => {
  it('tracking issue: after a 502 the marker is looked up and the issue found, not created again', async () => {
    gh = await startFakeGitHub({ strictBodies: true, tokenKind: 'app' })
    // Retries as in production (the retry plugin on): the create itself must not be retried blindly.
    const { makeOctokit } = await import('../../src/github/octokit.js')
    const o = makeOctokit({ token: 't', baseUrl: gh.url, throttle: false })
    gh.injectAfterOnce('issues/create', badGateway)
    const d = confirmedRun()
    const r = await syncTrackingIssue(o, repo, ctx(d), d.comparisons[0]!, opts)
    expect(r.action).toBe('created')
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
    expect(r.number).toBe(gh.issues('acme', 'widgets')[0]!.number)
    expect(gh.writes()).toEqual(['POST /repos/acme/widgets/issues'])
    // The lookup after the failure asked for every label of the manifest.
    const lists = gh.requests.filter((q) => q.operationId === 'issues/list-for-repo')
    expect(lists.map((q) => q.query.labels)).toEqual(['harness-watch,nightly', 'harness-watch,nightly'])
  }, 20_000)

  it('PR comment: after a 502 the marker is found; a 502 before anything was written is sent again', async () => {
    gh = await startFakeGitHub({ strictBodies: true, tokenKind: 'installation' })
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const { makeOctokit } = await import('../../src/github/octokit.js')
    const o = makeOctokit({ token: 't', baseUrl: gh.url, throttle: false })
    const body = prCommentBody(ctx(firstRun()), 'exp')
    gh.injectAfterOnce('issues/create-comment', badGateway)
    const r1 = await upsertPrComment(o, repo, pr.number, 'exp', body)
    expect(r1.action).toBe('created')
    expect(gh.comments('acme', 'widgets', pr.number)).toHaveLength(1)
    expect(r1.id).toBe(gh.comments('acme', 'widgets', pr.number)[0]!.id)

    // Nothing written the first time: the second send creates it (still one comment).
    const pr2 = gh.seedIssue('acme', 'widgets', { title: 'PR 2', pr: true })
    gh.injectOnce('issues/create-comment', badGateway)
    const r2 = await upsertPrComment(o, repo, pr2.number, 'exp', body)
    expect(r2.action).toBe('created')
    expect(gh.comments('acme', 'widgets', pr2.number)).toHaveLength(1)
  }, 20_000)

  it('a 4xx is not retried: a missing permission fails at once, naming it', async () => {
    gh = await startFakeGitHub({ strictBodies: true, readOnly: true })
    const d = confirmedRun()
    await expect(syncTrackingIssue(client(gh.url), repo, ctx(d), d.comparisons[0]!, opts)).rejects.toThrow(
      /permissions: issues: write/,
    )
    expect(gh.requests.filter((q) => q.operationId === 'issues/create')).toHaveLength(1)
  })
})
