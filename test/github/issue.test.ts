import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { evidenceFor } from '../../src/detect/evidence.js'
import type { Decision } from '../../src/detect/schema.js'
import { findTrackingIssue, planTracking, syncTrackingIssue } from '../../src/github/issue.js'
import { identityMarker, parseIdentity, parseState, stateMarker } from '../../src/github/marker.js'
import { makeComparison, policy, ref, rows } from '../detect/fixtures.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { client, confirmedRun, ctx, firstRun, repo } from './support.js'

const KEY = 'exp/a-vs-b'
const opts = { labels: ['harness-watch'], recoveredAfter: 2, closeOnRecovery: true }

describe('planTracking (pure)', () => {
  const existing = (state: 'open' | 'closed', body: string | null, labels: string[] = []) => ({
    number: 4,
    state,
    body,
    labels,
    html_url: 'x',
  })
  const tracked = (clean: number, recovered = false) =>
    `${identityMarker('tracking', KEY)}\n${stateMarker({ clean_runs: clean, confirmed_breaches: 1, last_status: 'confirmed', last_run: 'r', recovered })}\nbody`

  it('never opens on an unconfirmed signal or an inconclusive run (F06, F08)', () => {
    for (const status of ['unconfirmed', 'inconclusive'] as const) {
      expect(
        planTracking({ existing: null, status, recoveredAfter: 2, closeOnRecovery: true, run: 'r' }).kind,
      ).toBe('none')
      expect(
        planTracking({
          existing: existing('open', tracked(0)),
          status,
          recoveredAfter: 2,
          closeOnRecovery: true,
          run: 'r',
        }).kind,
      ).toBe('none')
    }
  })

  it('a clean run without an issue does nothing; with an open one it counts toward recovery', () => {
    expect(
      planTracking({ existing: null, status: 'clean', recoveredAfter: 2, closeOnRecovery: true, run: 'r' })
        .kind,
    ).toBe('none')
    const a = planTracking({
      existing: existing('open', tracked(0)),
      status: 'clean',
      recoveredAfter: 2,
      closeOnRecovery: true,
      run: 'r2',
    })
    expect(a).toMatchObject({
      kind: 'update',
      comment: null,
      close: false,
      state: { clean_runs: 1, recovered: false },
    })
    const b = planTracking({
      existing: existing('open', tracked(1)),
      status: 'clean',
      recoveredAfter: 2,
      closeOnRecovery: false,
      run: 'r3',
    })
    expect(b).toMatchObject({
      kind: 'update',
      comment: 'recovered',
      close: false,
      addLabels: ['recovered'],
      state: { clean_runs: 2, recovered: true },
    })
  })

  it('a confirmed breach on a closed, recovered issue reopens it and removes the label', () => {
    const a = planTracking({
      existing: existing('closed', tracked(2, true), ['harness-watch', 'recovered']),
      status: 'confirmed',
      recoveredAfter: 2,
      closeOnRecovery: true,
      run: 'r9',
    })
    expect(a).toMatchObject({
      kind: 'update',
      reopen: true,
      comment: 'confirmed',
      removeLabels: ['recovered'],
      state: { confirmed_breaches: 2, clean_runs: 0, recovered: false },
    })
  })
})

describe('tracking issue against the fake GitHub (validated against the OpenAPI description)', () => {
  let gh: FakeGitHub
  beforeEach(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterEach(async () => {
    expect(gh.problems()).toEqual([])
    await gh.close()
  })

  it('lifecycle: unconfirmed → nothing; confirmed → created; confirmed again → body + comment; 2 clean runs → recovered and closed; confirmed → reopened', async () => {
    const o = client(gh.url)
    const breach = firstRun()
    const v = (d: ReturnType<typeof firstRun>) => d.comparisons.find((x) => x.key === KEY)!

    // Run 1: unconfirmed signal only — no issue is opened.
    const r1 = await syncTrackingIssue(o, repo, ctx(breach), v(breach), opts)
    expect(r1).toMatchObject({ action: 'none', number: null })
    expect(gh.issues('acme', 'widgets')).toEqual([])

    // Run 2: confirmed → one issue with both markers on the first lines and the label.
    const confirmed = confirmedRun()
    const r2 = await syncTrackingIssue(o, repo, ctx(confirmed), v(confirmed), opts)
    expect(r2).toMatchObject({ action: 'created', number: 1 })
    const issue = gh.issues('acme', 'widgets')[0]!
    expect(issue.title).toBe('Harness Watch: b regressed vs a (exp)')
    expect(issue.body!.split('\n')[0]).toBe('<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->')
    expect(parseState(issue.body)).toMatchObject({ confirmed_breaches: 1, clean_runs: 0, recovered: false })
    expect(issue.labels.map((l) => l.name)).toEqual(['harness-watch'])
    expect(issue.body).toContain('Confirmed regression')
    expect(issue.body).toContain('−20.0 pp')

    // Run 3: confirmed again → same issue, body updated, a comment added (edits notify nobody).
    const r3 = await syncTrackingIssue(o, repo, ctx(confirmedRun(true, 'run-9')), v(confirmed), opts)
    expect(r3).toMatchObject({ action: 'updated', number: 1 })
    expect(gh.issues('acme', 'widgets')).toHaveLength(1)
    expect(parseState(gh.issues('acme', 'widgets')[0]!.body)).toMatchObject({ confirmed_breaches: 2 })
    expect(gh.comments('acme', 'widgets', 1).map((c) => c.body.split('\n')[0])).toEqual([
      'The regression was confirmed again by run `run-9`.',
    ])

    // Runs 4 and 5: cleared, then ok → counted; the second marks it recovered and closes it.
    const cleared = confirmedRun(false, 'run-10')
    expect(cleared.status).toBe('cleared')
    expect((await syncTrackingIssue(o, repo, ctx(cleared), v(cleared), opts)).action).toBe('updated')
    expect(parseState(gh.issues('acme', 'widgets')[0]!.body)).toMatchObject({
      clean_runs: 1,
      recovered: false,
    })
    expect(gh.issues('acme', 'widgets')[0]!.state).toBe('open')
    const r5 = await syncTrackingIssue(o, repo, ctx(cleared), v(cleared), opts)
    expect(r5.action).toBe('recovered')
    const closed = gh.issues('acme', 'widgets')[0]!
    expect(closed.state).toBe('closed')
    expect(closed.labels.map((l) => l.name)).toEqual(['harness-watch', 'recovered'])
    expect(parseState(closed.body)).toMatchObject({ clean_runs: 2, recovered: true })
    expect(gh.comments('acme', 'widgets', 1).at(-1)!.body).toMatch(/^✅ Recovered: 2 consecutive run/)

    // Run 6: another clean run touches nothing.
    expect((await syncTrackingIssue(o, repo, ctx(cleared), v(cleared), opts)).action).toBe('none')

    // Run 7: confirmed again → the closed issue is found (state=all), reopened, not duplicated.
    const r7 = await syncTrackingIssue(o, repo, ctx(confirmedRun(true, 'run-12')), v(confirmed), opts)
    expect(r7).toMatchObject({ action: 'reopened', number: 1 })
    const again = gh.issues('acme', 'widgets')
    expect(again).toHaveLength(1)
    expect(again[0]!.state).toBe('open')
    expect(again[0]!.labels.map((l) => l.name)).toEqual(['harness-watch'])
    expect(gh.comments('acme', 'widgets', 1).at(-1)!.body).toMatch(
      /^Reopened: the regression was confirmed again/,
    )
    expect(parseState(again[0]!.body)).toMatchObject({ confirmed_breaches: 3, clean_runs: 0 })
  })

  it('weekly evidence that crosses its bound opens the issue though no week confirmed; a clean week after never resets it', async () => {
    const o = client(gh.url)
    // Each week b loses 6 of 30 blocks a resolves (b = 6, c = 0): every week breaches, none is confirmed.
    const weekOf = (runId: string, losses: number) =>
      makeComparison({
        cells: ['a', 'b'],
        runId,
        rows: rows(30, (i) =>
          i < losses ? { a: { o: 'r' }, b: { o: 'u' } } : { a: { o: 'r' }, b: { o: 'r' } },
        ),
      })
    let previous: Decision | null = null
    const decide = (c: ReturnType<typeof weekOf>): Decision => {
      const d = detect({ current: ref(c), policy, quarantine: [] })
      d.evidence = evidenceFor(c, previous, 0.05, policy.thresholds.resolved_deficit_pp)
      previous = d
      return d
    }
    const v = (d: Decision) => d.comparisons.find((x) => x.key === KEY)!
    const crossedOf = (d: Decision) => d.evidence!.find((e) => e.key === KEY)!
    // Weeks 1–2: the bound is not crossed — an unconfirmed breach touches nothing.
    for (const id of ['w1', 'w2']) {
      const d = decide(weekOf(id, 6))
      expect(v(d).status).toBe('breach')
      expect(crossedOf(d).sufficient).toBe(false)
      expect((await syncTrackingIssue(o, repo, ctx(d), v(d), opts)).action).toBe('none')
    }
    expect(gh.issues('acme', 'widgets')).toEqual([])
    // Week 3: b = 18, c = 0 over 90 blocks crosses (Z = 17/√18 = 4.01 ≥ C·√(K/3)) — the issue opens.
    const w3 = decide(weekOf('w3', 6))
    expect(v(w3).status).toBe('breach')
    expect(crossedOf(w3)).toMatchObject({ sufficient: true, crossed_at: 'w3' })
    expect(await syncTrackingIssue(o, repo, ctx(w3), v(w3), opts)).toMatchObject({
      action: 'created',
      number: 1,
    })
    const issue = gh.issues('acme', 'widgets')[0]!
    expect(issue.body).toContain(
      '**Weekly evidence crossed its bound**: weekly group-sequential McNemar test',
    )
    expect(issue.body).toContain('crossed at run w3 (look 3)')
    // Week 4 is clean (no loss): the verdict is ok, the crossing stands — updated, not counted clean.
    const w4 = decide(weekOf('w4', 0))
    expect(v(w4).status).toBe('ok')
    expect(crossedOf(w4)).toMatchObject({ sufficient: true, crossed_at: 'w3' })
    expect((await syncTrackingIssue(o, repo, ctx(w4), v(w4), opts)).action).toBe('updated')
    const after = gh.issues('acme', 'widgets')[0]!
    expect(after.state).toBe('open')
    expect(parseState(after.body)).toMatchObject({
      clean_runs: 0,
      recovered: false,
      last_status: 'confirmed',
    })
    expect(gh.comments('acme', 'widgets', 1)[0]!.body).toContain('weekly evidence: weekly group-sequential')
  })

  it('finds its issue across pages, ignores other keys, lookalikes further down a body, and pull requests', async () => {
    for (let i = 0; i < 120; i++) {
      gh.seedIssue('acme', 'widgets', {
        title: `noise ${i}`,
        body: `${identityMarker('tracking', `exp/x-vs-y${i}`)}\n`,
        labels: ['harness-watch'],
      })
    }
    gh.seedIssue('acme', 'widgets', {
      title: 'quoted',
      body: `report\n${identityMarker('tracking', KEY)}`,
      labels: ['harness-watch'],
    })
    gh.seedIssue('acme', 'widgets', {
      title: 'pr',
      body: identityMarker('tracking', KEY),
      labels: ['harness-watch'],
      pr: true,
    })
    const mine = gh.seedIssue('acme', 'widgets', {
      title: 'mine',
      body: `${identityMarker('tracking', KEY)}\nx`,
      labels: ['harness-watch'],
      state: 'closed',
    })
    const found = await findTrackingIssue(client(gh.url), repo, KEY, 'harness-watch')
    expect(found).toMatchObject({ number: mine.number, state: 'closed' })
    const lists = gh.requests.filter((r) => r.operationId === 'issues/list-for-repo')
    expect(lists.map((r) => r.query.page ?? '1')).toEqual(['1', '2'])
    expect(lists[0]!.query).toMatchObject({ labels: 'harness-watch', state: 'all', per_page: '100' })
    expect(gh.requests.some((r) => r.path.startsWith('/search'))).toBe(false)
  })

  it('escapes what it quotes from runs: no mentions, no HTML, no forged or closed markers', async () => {
    const d = confirmedRun()
    d.health.push({
      code: 'leg_missing',
      severity: 'error',
      key: null,
      cell: 'b',
      message:
        'leg b-s0: @octocat said --> <!-- harness-watch:v1 kind=tracking key=exp/a-vs-b --> <img src=x onerror=alert(1)> fixes #12',
      count: 1,
      instances: [],
    })
    const v = d.comparisons[0]!
    await syncTrackingIssue(client(gh.url), repo, ctx(d), v, opts)
    const body = gh.issues('acme', 'widgets')[0]!.body!
    expect(body).not.toMatch(/@octocat/)
    expect(body).toContain('@\u200doctocat')
    expect(body).not.toContain('<img')
    expect(body.match(/<!--/g)).toHaveLength(2) // our two marker lines only
    expect(body.match(/-->/g)).toHaveLength(2)
    expect(body).not.toMatch(/[^\\]#12/)
    expect(parseIdentity(body)).toEqual({ kind: 'tracking', key: KEY })
  })
})
