import { describe, expect, it } from 'vitest'
import type { Health } from '../../src/detect/schema.js'
import { prCommentBody, trackingIssueBody } from '../../src/github/render.js'
import { confirmedRun, ctx, firstRun } from './support.js'

describe('rendered bodies: evaluation health', () => {
  it('one error repeated for five comparisons is one row with a count', () => {
    const d = firstRun()
    const same: Health = {
      code: 'coverage_low',
      severity: 'error',
      key: null,
      cell: null,
      message: '12 of 30 blocks complete (40%) is below min_coverage 80%: inconclusive',
      count: 18,
      instances: [],
    }
    d.health = [1, 2, 3, 4, 5].map((i) => ({ ...same, key: `exp/a-vs-c${i}` }))
    const body = prCommentBody(ctx(d), 'exp')
    const rows = body.split('\n').filter((l) => l.includes('`coverage_low`'))
    expect(rows).toEqual([
      '| ❗ error | `coverage_low` | 12 of 30 blocks complete (40%) is below min\\_coverage 80%: inconclusive (×5) |',
    ])
  })
})

describe('rendered bodies: the 65,536-character cap', () => {
  it('a verdict table of 3,000 comparisons with long notes counts toward the cap and is cut with a pointer', () => {
    const d = firstRun()
    const v = d.comparisons[0]!
    d.comparisons = Array.from({ length: 3000 }, (_, i) => ({
      ...v,
      key: `exp/a-vs-c${i}`,
      treatment: `c${i}`,
      reason: `note ${'x'.repeat(200)} ${i}`,
    }))
    const body = prCommentBody(ctx(d), 'exp')
    expect(body.length).toBeLessThanOrEqual(65_536)
    const rows = body.split('\n').filter((l) => /^\| `c\d+` vs `a` \|/.test(l))
    expect(rows.length).toBeGreaterThan(10)
    expect(rows.length).toBeLessThan(3000)
    expect(body).toContain(
      `… ${3000 - rows.length} more comparison(s): see decision.json in the full report.`,
    )
  })
})

describe('rendered bodies: the final decision after confirmation', () => {
  it('the PR comment leads with the confirmed decision and labels the first run’s figures', () => {
    const d = confirmedRun()
    expect(d.status).toBe('confirmed')
    const body = prCommentBody(ctx(d), 'exp')
    const final = body.indexOf('❌ **Confirmed regression: resolve rate (`b` vs `a`)**')
    const label = body.indexOf('#### First run’s figures')
    expect(final).toBeGreaterThan(0)
    expect(label).toBeGreaterThan(final)
    // the first run's comparison follows the label, never before it
    expect(body.indexOf('### Harness Watch — ')).toBeGreaterThan(label)
    expect(body).toContain('the final decision above rests on confirmation round 1.')
    expect(body).toContain('| comparison | metric | rule | first run (95% interval) | rerun | state |')
    // The verdict in plain words comes first; the notation (b′, intervals) only below it.
    const sentences = [
      '`b` resolved fewer of the same 30 tasks than `a` (−20.0 points) — confirmed on a rerun of 6 blocks.',
      "`b` spent 1.0× `a`'s dollars on the same 30 tasks, within the 1.5× threshold.",
      "`b` sent 1.0× `a`'s fresh input tokens on the same 30 tasks, within the 1.5× threshold.",
      "`b` made 1.0× `a`'s proxy requests on the same 30 tasks, within the 1.5× threshold.",
    ]
    expect(body).toContain(sentences.join('\n'))
    expect(body.indexOf(sentences[0]!)).toBeGreaterThan(final)
    expect(body.indexOf('b′')).toBeGreaterThan(body.indexOf(sentences[3]!))
    // …and only once: the first run's embedded report does not repeat them.
    expect(body.split('resolved fewer of').length).toBe(2)
    // Confirmed, but the artifact holds no diagnosis: the comment says so.
    expect(body).toContain('No diagnosis is available for this run: the report artifact holds no')
  })

  it('a first run has no such label (its figures are the decision’s own)', () => {
    const body = prCommentBody(ctx(firstRun()), 'exp')
    expect(body).not.toContain('First run’s figures')
    expect(body).toContain('⚠️ **Unconfirmed; rerun requested**')
  })
})

describe('rendered bodies: the weekly history link', () => {
  const state = {
    clean_runs: 0,
    confirmed_breaches: 1,
    last_status: 'confirmed',
    last_run: '7',
    recovered: false,
  }
  it('the tracking issue links the history page beside the full report; none without one', async () => {
    const d = confirmedRun()
    const url = 'https://github.com/acme/widgets/actions/runs/7/artifacts/42'
    const body = trackingIssueBody({ ...ctx(d), historyUrl: url }, d.comparisons[0]!.key, state)
    const runLine = body.split('\n').find((l) => l.startsWith('Experiment '))!
    expect(runLine).toMatch(
      / · \[full report\]\(https:\/\/github\.com\/acme\/widgets\/actions\/runs\/7\) · \[weekly history\]\(https:\/\/github\.com\/acme\/widgets\/actions\/runs\/7\/artifacts\/42\)$/,
    )
    expect(trackingIssueBody(ctx(d), d.comparisons[0]!.key, state)).not.toContain('weekly history')
  })

  it('a forged history URL is never a link target', () => {
    const d = confirmedRun()
    const body = trackingIssueBody(
      { ...ctx(d), historyUrl: 'javascript:alert(1)' },
      d.comparisons[0]!.key,
      state,
    )
    expect(body).toContain('[weekly history](#)')
    expect(body).not.toContain('javascript:')
  })
})
