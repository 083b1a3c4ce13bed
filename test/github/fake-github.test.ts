import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOctokit } from '../../src/github/octokit.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { client, repo } from './support.js'

// The fake validates every request and response against GitHub's OpenAPI description: a request the
// real API would reject is rejected here too, and a response that breaks the description is caught.
describe('fake GitHub follows the OpenAPI description', () => {
  let gh: FakeGitHub
  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterAll(() => gh.close())

  it('rejects malformed requests with 422 in GitHub’s format', async () => {
    const o = client(gh.url)
    const bad = [
      () =>
        o.request('POST /repos/{owner}/{repo}/issues', {
          ...repo,
          title: 't',
          labels: 'not-a-list',
        } as never),
      () => o.request('POST /repos/{owner}/{repo}/issues', { ...repo, body: 'no title' } as never),
      () =>
        o.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
          ...repo,
          issue_number: 1,
          state: 'weird',
        } as never),
      () =>
        o.request('POST /repos/{owner}/{repo}/issues', { ...repo, title: 't', lables: ['typo'] } as never),
    ]
    for (const f of bad) {
      const e = await f().catch((x) => x)
      expect(e.status).toBe(422)
      expect(e.response.data.message).toBe('Validation Failed')
    }
    expect(gh.problems()).toHaveLength(4)
    gh.problems().length = 0
  })

  it('catches its own off-spec responses', async () => {
    const issue = gh.seedIssue('acme', 'widgets', { title: 'x' })
    ;(issue as Record<string, unknown>).state_reason = 'bogus'
    const e = await client(gh.url)
      .rest.issues.get({ ...repo, issue_number: issue.number })
      .catch((x) => x)
    expect(e.status).toBe(500)
    expect(gh.problems().at(-1)?.error).toMatch(/fake response off-spec: \/state_reason/)
  })

  it('pages with a real Link header that Octokit follows', async () => {
    const issue = gh.seedIssue('acme', 'widgets', { title: 'paged' })
    for (let i = 0; i < 105; i++) gh.seedComment('acme', 'widgets', issue.number, `c${i}`)
    const o = client(gh.url)
    const first = await o.rest.issues.listComments({ ...repo, issue_number: issue.number, per_page: 100 })
    expect(first.headers.link).toMatch(/[?&]page=2[^>]*>; rel="next"/)
    const all = await o.paginate(o.rest.issues.listComments, {
      ...repo,
      issue_number: issue.number,
      per_page: 100,
    })
    expect(all).toHaveLength(105)
  })

  it('the production client retries a 502 and a secondary rate limit (throttling and retry plugins)', async () => {
    const issue = gh.seedIssue('acme', 'widgets', { title: 'retry' })
    const o = makeOctokit({ token: 't', baseUrl: gh.url, log: () => {} })
    gh.injectOnce('issues/create-comment', {
      status: 403,
      body: {
        message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      },
      headers: { 'retry-after': '1' },
    })
    const t0 = Date.now()
    const { data } = await o.rest.issues.createComment({
      ...repo,
      issue_number: issue.number,
      body: 'after limit',
    })
    expect(data.body).toBe('after limit')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
    gh.injectOnce('issues/get', { status: 502, body: { message: 'Bad Gateway' } })
    const got = await o.rest.issues.get({ ...repo, issue_number: issue.number })
    expect(got.data.number).toBe(issue.number)
    const tries = gh.requests.filter(
      (r) => r.operationId === 'issues/create-comment' && r.path.endsWith(`/${issue.number}/comments`),
    )
    expect(tries.map((r) => r.status)).toEqual([403, 201])
  }, 30_000)
})
