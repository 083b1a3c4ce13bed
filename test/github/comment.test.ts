import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ACTIONS_BOT, isOurComment, upsertPrComment, viewerLogin } from '../../src/github/comment.js'
import { identityMarker } from '../../src/github/marker.js'
import { prCommentBody } from '../../src/github/render.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { cleanComparison, client, ctx, firstRun, repo } from './support.js'

describe('isOurComment (pure)', () => {
  const mine = `${identityMarker('pr-report', 'exp')}\nbody`
  it('needs our marker on the first line, the same key, and the same author', () => {
    expect(isOurComment({ id: 1, body: mine, user: { login: 'bot' } }, 'exp', 'bot')).toBe(true)
    expect(isOurComment({ id: 1, body: mine, user: { login: 'mallory' } }, 'exp', 'bot')).toBe(false)
    expect(isOurComment({ id: 1, body: mine, user: { login: 'bot' } }, 'exp2', 'bot')).toBe(false)
    expect(isOurComment({ id: 1, body: `quote:\n${mine}`, user: { login: 'bot' } }, 'exp', 'bot')).toBe(false)
    expect(isOurComment({ id: 1, body: null, user: null }, 'exp', 'bot')).toBe(false)
  })
})

describe('PR comment against the fake GitHub', () => {
  let gh: FakeGitHub
  beforeEach(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterEach(async () => {
    expect(gh.problems()).toEqual([])
    await gh.close()
  })

  it('F12: ok → breach → ok edits one comment; the marker on page 2 is found; others are left alone', async () => {
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const o = client(gh.url)
    const ok = firstRun(cleanComparison)
    expect(ok.status).toBe('ok')

    // Run 1 (ok): no comment yet → POST.
    const r1 = await upsertPrComment(o, repo, pr.number, 'exp', prCommentBody(ctx(ok), 'exp'))
    expect(r1.action).toBe('created')
    expect(gh.comments('acme', 'widgets', pr.number)[0]!.body).toContain('No regression')

    // 150 review comments and one forging our marker (another author); ours moved to the end is on
    // page 2 of the 100-per-page listing.
    for (let i = 0; i < 150; i++) gh.seedComment('acme', 'widgets', pr.number, `review ${i}`, 'octocat')
    gh.seedComment('acme', 'widgets', pr.number, `${identityMarker('pr-report', 'exp')}\nforged`, 'mallory')
    const list = gh.comments('acme', 'widgets', pr.number)
    list.push(list.shift()!)

    // Run 2 (breach, unconfirmed): the same comment is edited, saying "unconfirmed; rerun requested".
    const breach = firstRun()
    const r2 = await upsertPrComment(o, repo, pr.number, 'exp', prCommentBody(ctx(breach), 'exp'))
    expect(r2).toEqual({ action: 'updated', id: r1.id, url: expect.any(String) })
    const body2 = gh.comments('acme', 'widgets', pr.number).find((c) => c.id === r1.id)!.body
    expect(body2).toMatch(/Unconfirmed; rerun requested/)
    expect(body2).not.toMatch(/Confirmed regression/)
    const pages = gh.requests
      .filter((r) => r.operationId === 'issues/list-comments')
      .map((r) => r.query.page ?? '1')
    expect(pages.slice(-2)).toEqual(['1', '2'])

    // Run 3 (ok again): still the same comment.
    const r3 = await upsertPrComment(o, repo, pr.number, 'exp', prCommentBody(ctx(ok), 'exp'))
    expect(r3.id).toBe(r1.id)
    const ours = gh.comments('acme', 'widgets', pr.number).filter((c) => c.user.login === ACTIONS_BOT)
    expect(ours).toHaveLength(1)
    expect(ours[0]!.body).toContain('No regression')
    expect(gh.comments('acme', 'widgets', pr.number).find((c) => c.user.login === 'mallory')!.body).toContain(
      'forged',
    )
    expect(gh.writes().filter((w) => w.startsWith('PATCH'))).toHaveLength(2)
  })

  it('the author is the token user for a PAT and the Actions bot for an installation token', async () => {
    expect(await viewerLogin(client(gh.url))).toBe(ACTIONS_BOT)
    const pat = await startFakeGitHub({ tokenKind: 'user', login: 'octocat' })
    try {
      expect(await viewerLogin(client(pat.url))).toBe('octocat')
    } finally {
      await pat.close()
    }
  })
})
