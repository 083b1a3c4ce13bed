import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Decision } from '../detect/schema.js'
import { readDecision } from '../pipeline/detect.js'
import { readDiagnosis } from '../pipeline/diagnose.js'
import { type Comparison, ComparisonSchema } from '../records/comparison.js'
import { STATUS_LABEL } from '../report/decision.js'
import { codeSpan, escapeMarkdown } from '../report/escape.js'
import { containedPath, isContained } from '../util/contained.js'
import { HwError } from '../util/errors.js'
import { type UpsertResult, upsertPrComment, viewerLogin } from './comment.js'
import {
  keyRunStatus,
  planTracking,
  RECOVERED_LABEL,
  syncTrackingIssue,
  type TrackingResult,
} from './issue.js'
import { identityMarker } from './marker.js'
import { EVALUATION_HEALTH_LABEL, healthNoticeLabels, noticeRunStatus, planNotice } from './notice.js'
import { type NoticeResult, syncHealthNotice } from './notice-issue.js'
import { type GitHubClient, makeOctokit, type Repo, repoFromEnv } from './octokit.js'
import {
  healthNoticeBody,
  healthNoticeTitle,
  prCommentBody,
  type RenderContext,
  trackingIssueBody,
  trackingTitle,
} from './render.js'

export interface PublishOptions {
  /** comparison.json of the deciding round; decision.json is read from beside it. */
  comparison: string
  /** Empty: nothing is written to GitHub (fork pull requests); the verdict and summary still are. */
  token: string
  /** Pull request number: publish the PR comment. Absent: update the tracking issues. */
  pr?: number | null
  /** Default: GITHUB_REPOSITORY. */
  repo?: Repo
  /** Link to the full report; default: this workflow run's page. */
  reportUrl?: string | null
  /** Link to the experiment's weekly history page (history.html), named in the tracking issue. */
  historyUrl?: string | null
  /** REST base URL; default GITHUB_API_URL. */
  baseUrl?: string
  /** Close a tracking issue when it is marked recovered (default true; a new confirmed breach reopens it). */
  closeOnRecovery?: boolean
  /** For tests: a ready client (otherwise built from token/baseUrl). */
  client?: GitHubClient
  /** Write nothing to GitHub (no token needed): the summary says what would be created, updated or skipped, with the body. */
  dryRun?: boolean
  /**
   * The folder every path read from the artifacts must stay in (decision.json's run and plan paths);
   * default: GITHUB_WORKSPACE in Actions, else the folder above the comparison's folder.
   */
  root?: string
}

export interface PublishResult {
  decision: Decision
  issues: TrackingResult[]
  /**
   * The experiment's evaluation-health notice (tracking mode only; null in PR mode and when nothing
   * was written): created or updated on health errors without a confirmed breach, recovered when clean.
   */
  notice: NoticeResult | null
  comment: UpsertResult | null
  /** When nothing was written (dry run, no token): what publishing would do, per target. */
  planned: PlannedAction[]
  /** Why the check must fail (a confirmed regression per policy, or an evaluation failure); null = pass. */
  failure: string | null
  /** Markdown for the job summary. */
  summary: string
}

/**
 * Publish a decision: the PR comment (PR mode), or the tracking issues (one per comparison key) and
 * the experiment's one evaluation-health notice (infrastructure-only problems: never a regression issue).
 * Writes are sequential. The check fails on a confirmed regression when
 * reporting.fail_on_confirmed_regression is set, and on evaluation-health errors (a run-level
 * error, never a regression issue: F06). Throws HwError for GitHub failures (permissions, 422).
 */
export async function publish(opts: PublishOptions): Promise<PublishResult> {
  // In Actions the downloads are in the workspace; elsewhere the folder above the round's folder
  // (which holds the first run's and the rerun's folders).
  const root =
    opts.root ?? process.env.GITHUB_WORKSPACE ?? path.dirname(path.dirname(path.resolve(opts.comparison)))
  if (!isContained(root, opts.comparison)) {
    throw new HwError('artifact_path_outside', `the comparison "${opts.comparison}" is outside ${root}`)
  }
  const { decision, path: decisionPath } = await readDecision(opts.comparison)
  const comparison = await firstRunComparison(decision, decisionPath, root)
  const later = await laterRound(decision, decisionPath, root)
  const ctx: RenderContext = {
    decision,
    comparison,
    reportUrl: opts.reportUrl ?? runUrl(),
    historyUrl: opts.historyUrl ?? null,
    diagnosis: await readDiagnosis(path.dirname(decisionPath)),
  }
  const issues: TrackingResult[] = []
  let comment: UpsertResult | null = null
  let notice: NoticeResult | null = null
  const trackingOpts = {
    labels: decision.policy.reporting.labels,
    recoveredAfter: decision.policy.reporting.recovered_after,
    closeOnRecovery: opts.closeOnRecovery ?? true,
  }
  if (later && !opts.dryRun) {
    // Posting this run would put a superseded state (an unconfirmed breach, a pending rerun) on the
    // issue or pull request after the confirmation has decided.
    throw new HwError('publish_superseded', later, { where: opts.comparison })
  }
  if (opts.dryRun || (!opts.token && !opts.client)) {
    const planned = planPublish(ctx, { pr: opts.pr ?? null, ...trackingOpts })
    const laterNote = later ? `Note: ${later}\n\n` : ''
    const note =
      'Not published to GitHub (no token: e.g. a pull request from a fork, posted by the workflow_run companion).'
    const summary = opts.dryRun
      ? `${dryRunView(ctx, planned)}\n\n${laterNote}Dry run: nothing was written to GitHub.`
      : `${summaryOf(ctx, issues, comment, null)}\n\n#### Not published\n\n${plannedLines(planned)}\n\n${laterNote}${note}`
    return { decision, issues, notice: null, comment, planned, failure: failureOf(decision), summary }
  }
  const gh = opts.client ?? makeOctokit({ token: opts.token, baseUrl: opts.baseUrl })
  const repo = opts.repo ?? repoFromEnv()
  // Who our earlier comments and issues were written by, found once for every token kind.
  const author = await viewerLogin(gh)
  if (opts.pr) {
    comment = await upsertPrComment(
      gh,
      repo,
      opts.pr,
      decision.experiment_id,
      prCommentBody(ctx, decision.experiment_id),
      author,
    )
  } else {
    for (const v of decision.comparisons) {
      issues.push(await syncTrackingIssue(gh, repo, ctx, v, { ...trackingOpts, author }))
    }
    notice = await syncHealthNotice(gh, repo, ctx, { closeOnRecovery: trackingOpts.closeOnRecovery, author })
  }
  return {
    decision,
    issues,
    notice,
    comment,
    planned: [],
    failure: failureOf(decision),
    summary: summaryOf(ctx, issues, comment, notice),
  }
}

/** Action outputs of the publish step (names as in action.yml). */
export function publishOutputs(r: PublishResult): { 'issue-number': string; 'comment-id': string } {
  return {
    'issue-number': r.issues
      .filter((i) => i.action !== 'none' && i.number !== null)
      .map((i) => String(i.number))
      .join(','),
    'comment-id': r.comment ? String(r.comment.id) : '',
  }
}

/**
 * One line for a terminal: the status and what was written ("confirmed: exp/a-vs-b: tracking issue
 * #1 created https://…"); the full body is the job summary (`summary`).
 */
export function publishLine(r: PublishResult): string {
  const parts: string[] = []
  const unchanged = r.issues.filter((i) => i.action === 'none')
  for (const i of r.issues) {
    if (i.action !== 'none')
      parts.push(`${i.key}: tracking issue #${i.number} ${i.action}${i.url ? ` ${i.url}` : ''}`)
  }
  if (unchanged.length > 0) parts.push(`${unchanged.length} comparison(s) without an issue change`)
  if (r.notice && r.notice.action !== 'none') {
    parts.push(
      `evaluation-health notice #${r.notice.number} ${r.notice.action}${r.notice.url ? ` ${r.notice.url}` : ''}`,
    )
  }
  if (r.comment) parts.push(`PR comment ${r.comment.action} ${r.comment.url}`)
  if (r.planned.length > 0) {
    parts.push('nothing written to GitHub', ...r.planned.map((a) => `${a.target}: ${a.short}`))
  } else if (parts.length === 0) parts.push('nothing written to GitHub')
  return `${STATUS_LABEL[r.decision.status]}: ${parts.join('; ')}`
}

/** What publishing would do to one target (a tracking issue key, or the PR comment). */
export interface PlannedAction {
  /** The comparison key of a tracking issue, "<experiment> (evaluation health)", or "PR #<n>". */
  target: string
  /** `health_notice`: the evaluation-health notice would be created or updated. */
  kind: 'skip' | 'create_or_update' | 'update_if_open' | 'pr_comment' | 'health_notice'
  /** A few words for the terminal line ("would create or update the tracking issue"). */
  short: string
  /** The full sentence: what would be searched for, created or updated, and why. */
  text: string
  /** The body that would be written (tracking issue or PR comment); null when nothing would be. */
  body: string | null
}

/**
 * What `publish` would do, without asking GitHub (so an existing issue or comment cannot be known):
 *  - with a PR number: find the one PR comment by its marker, then update it or create it;
 *  - otherwise, per comparison: a confirmed breach searches for the tracking issue by its marker,
 *    then creates it (title, labels) or updates it; ok/cleared creates nothing and only counts a
 *    clean run on an open issue; an unconfirmed breach or an inconclusive comparison is skipped;
 *    then the experiment's evaluation-health notice (planHealthNotice).
 * Pure.
 */
export function planPublish(
  ctx: RenderContext,
  opts: { pr: number | null; labels: string[]; recoveredAfter: number; closeOnRecovery: boolean },
): PlannedAction[] {
  const d = ctx.decision
  if (opts.pr) {
    const marker = identityMarker('pr-report', d.experiment_id)
    return [
      {
        target: `PR #${opts.pr}`,
        kind: 'pr_comment',
        short: 'would create or update the Harness Watch comment',
        text:
          `would search the comments of pull request #${opts.pr} for the marker ${codeSpan(marker)}, ` +
          'then update that comment, or create it when there is none (one comment per pull request and experiment, in every state)',
        body: prCommentBody(ctx, d.experiment_id),
      },
    ]
  }
  if (d.comparisons.length === 0) {
    return [
      {
        target: d.experiment_id,
        kind: 'skip',
        short: 'would skip: no comparison was made',
        text: 'would skip: no comparison was made, so there is no tracking issue to create or update',
        body: null,
      },
      planHealthNotice(ctx, opts.closeOnRecovery),
    ]
  }
  const label = opts.labels[0] ?? 'harness-watch'
  const labels = opts.labels.length > 0 ? opts.labels : [label]
  const tracking = d.comparisons.map((v): PlannedAction => {
    const status = keyRunStatus(v, d.evidence?.find((e) => e.key === v.key) ?? null)
    const marker = codeSpan(identityMarker('tracking', v.key))
    const search = `would search the issues labelled ${labels.map(codeSpan).join(' and ')} (open and closed) for the marker ${marker}`
    if (status === 'confirmed') {
      const action = planTracking({
        existing: null,
        status,
        recoveredAfter: opts.recoveredAfter,
        closeOnRecovery: opts.closeOnRecovery,
        run: d.run_id,
      })
      const state = action.kind === 'none' ? null : action.state
      return {
        target: v.key,
        kind: 'create_or_update',
        short: 'would search for the marker, then create or update the tracking issue',
        text:
          `${search}, then create tracking issue “${escapeMarkdown(trackingTitle(d, v))}” with labels ` +
          `${labels.map(codeSpan).join(', ')} when there is none, or update the one found ` +
          '(new body, a comment for the new confirmed breach, reopened if closed)',
        body: state ? trackingIssueBody(ctx, v.key, state) : null,
      }
    }
    if (status === 'clean') {
      const close = opts.closeOnRecovery ? ', then closed' : ''
      return {
        target: v.key,
        kind: 'update_if_open',
        short: 'would create nothing (no confirmed breach); an open tracking issue would count a clean run',
        text:
          'would create nothing: no confirmed breach — tracking issues open only on a confirmed breach or weekly evidence that crossed its bound; ' +
          `${search} and, if an open tracking issue is found, count this clean run ` +
          `(after ${opts.recoveredAfter} in a row it is labelled ${codeSpan(RECOVERED_LABEL)}${close})`,
        body: null,
      }
    }
    const why =
      status === 'unconfirmed'
        ? 'no confirmed breach (this breach is unconfirmed; the targeted rerun decides) — tracking issues open only on a confirmed breach or weekly evidence that crossed its bound'
        : 'the comparison is inconclusive (the evaluation failed) — not evidence either way; tracking issues open only on a confirmed breach or weekly evidence that crossed its bound'
    return {
      target: v.key,
      kind: 'skip',
      short: `would skip: ${status === 'unconfirmed' ? 'no confirmed breach' : 'inconclusive'}`,
      text: `would skip: ${why}`,
      body: null,
    }
  })
  return [...tracking, planHealthNotice(ctx, opts.closeOnRecovery)]
}

/**
 * What publishing would do to the experiment's evaluation-health notice (tracking mode): search for
 * it by its marker among the issues with its labels, then create or update it (health errors and no
 * confirmed breach), mark an open one recovered (clean health), or leave it alone (a confirmed breach
 * with health errors: the tracking issue carries them). Pure.
 */
export function planHealthNotice(ctx: RenderContext, closeOnRecovery: boolean): PlannedAction {
  const d = ctx.decision
  const target = `${d.experiment_id} (evaluation health)`
  const labels = healthNoticeLabels(d)
  const marker = codeSpan(identityMarker('health', d.experiment_id))
  const search = `would search the issues labelled ${labels.map(codeSpan).join(' and ')} (open and closed) for the marker ${marker}`
  const status = noticeRunStatus(d)
  if (status === 'unhealthy') {
    const action = planNotice({ existing: null, status, closeOnRecovery, run: d.run_id })
    return {
      target,
      kind: 'health_notice',
      short: 'would search for the marker, then create or update the evaluation-health notice',
      text:
        `the run has evaluation-health errors and no confirmed breach — a notice, never a regression issue: ${search}, ` +
        `then create “${escapeMarkdown(healthNoticeTitle(d))}” with labels ${labels.map(codeSpan).join(', ')} ` +
        'when there is none, or update the one found (new body; reopened with a comment if closed or recovered)',
      body: action.kind === 'none' ? null : healthNoticeBody(ctx, action.state),
    }
  }
  if (status === 'clean') {
    const close = closeOnRecovery ? ' and closed' : ''
    return {
      target,
      kind: 'update_if_open',
      short:
        'would open no notice (health clean); an open evaluation-health notice would be marked recovered',
      text:
        `would open no notice: no evaluation-health error; ${search} and, if an open notice is found, ` +
        `mark it recovered (labelled ${codeSpan(RECOVERED_LABEL)}, with a comment${close})`,
      body: null,
    }
  }
  return {
    target,
    kind: 'skip',
    short: 'would skip: a confirmed regression carries the health findings',
    text:
      `would skip: a confirmed regression — its tracking issue carries the health findings, and the ` +
      `${codeSpan(EVALUATION_HEALTH_LABEL)} notice is neither updated nor marked recovered`,
    body: null,
  }
}

/** The planned actions as a Markdown list. */
function plannedLines(planned: PlannedAction[]): string {
  return planned.map((a) => `- ${codeSpan(a.target)}: ${a.text}.`).join('\n')
}

/**
 * The dry-run view: the decision in one line, what would be done to each target, and each body
 * that would be written — the tracking issue body without --pr, the PR comment with it.
 */
function dryRunView(ctx: RenderContext, planned: PlannedAction[]): string {
  const d = ctx.decision
  const pr = planned.some((a) => a.kind === 'pr_comment')
  const lines = [
    `### Harness Watch dry run: ${pr ? 'PR comment' : 'tracking issues and evaluation-health notice'} for ${codeSpan(d.experiment_id)}`,
    '',
    `Decision: ${escapeMarkdown(d.summary)}`,
    '',
    plannedLines(planned),
  ]
  for (const a of planned) {
    if (!a.body) continue
    const what =
      a.kind === 'pr_comment'
        ? 'PR comment body'
        : a.kind === 'health_notice'
          ? 'Evaluation-health notice body'
          : 'Tracking issue body'
    lines.push('', `#### ${what}: ${codeSpan(a.target)}`, '', a.body)
  }
  if (!planned.some((a) => a.body)) lines.push('', '_No body would be written._')
  return lines.join('\n')
}

/** The reason the check fails, or null. */
export function failureOf(d: Decision): string | null {
  if (d.status === 'confirmed' && d.policy.reporting.fail_on_confirmed_regression) {
    return d.summary
  }
  const errors = d.health.filter((h) => h.severity === 'error')
  if (errors.length > 0) {
    return `evaluation failed (not a harness result): ${errors.map((h) => h.message).join('; ')}`
  }
  return null
}

/** The job summary: the PR-comment view of the decision (without its marker) and what was written. */
function summaryOf(
  ctx: RenderContext,
  issues: TrackingResult[],
  comment: UpsertResult | null,
  notice: NoticeResult | null,
): string {
  const body = prCommentBody(ctx, ctx.decision.experiment_id).split('\n').slice(1).join('\n').trim()
  const lines: string[] = []
  for (const i of issues) {
    if (i.action === 'none')
      lines.push(`- ${codeSpan(i.key)}: no issue change (${escapeMarkdown(i.reason ?? '')})`)
    else
      lines.push(`- ${codeSpan(i.key)}: tracking issue #${i.number} ${i.action}${i.url ? ` (${i.url})` : ''}`)
  }
  if (notice) {
    lines.push(
      notice.action === 'none'
        ? `- evaluation-health notice: no change (${escapeMarkdown(notice.reason ?? '')})`
        : `- evaluation-health notice #${notice.number} ${notice.action}${notice.url ? ` (${notice.url})` : ''}`,
    )
  }
  if (comment) lines.push(`- PR comment ${comment.action}: ${comment.url}`)
  return lines.length > 0 ? `${body}\n\n#### Published\n\n${lines.join('\n')}` : body
}

/**
 * A sentence when this is a first run's breach whose confirmation round has already been decided (its
 * decision.json sits beside the confirmation plan): that round holds the final decision. "" if none.
 */
async function laterRound(d: Decision, decisionPath: string, root: string): Promise<string> {
  if (d.status !== 'breach' || !d.confirmation) return ''
  const plan = containedPath(
    root,
    path.dirname(decisionPath),
    d.confirmation.plan,
    'decision.json confirmation.plan',
  )
  const dir = path.dirname(plan)
  try {
    const { decision: next, path: file } = await readDecision(path.join(dir, 'decision.json'))
    const rerun = next.runs.at(-1)
    if (next.round < 1 || !rerun) return ''
    const rel = (p: string) => {
      const r = path.relative(process.cwd(), p)
      return r === '' || r.startsWith('..') || path.isAbsolute(r) ? p : r
    }
    return (
      `confirmation round ${next.round} has been decided (${STATUS_LABEL[next.status]}) in ${codeSpan(rel(file))}; ` +
      `this first run is not the final decision. Publish that round: ${codeSpan(`--comparison ${rel(path.resolve(dir, rerun.comparison))}`)}.`
    )
  } catch {
    return ''
  }
}

/** The first run's comparison.json (whole panel) for the report sections; null if it cannot be read. */
async function firstRunComparison(
  d: Decision,
  decisionPath: string,
  root: string,
): Promise<Comparison | null> {
  const first = d.runs[0]
  if (!first) return null
  const file = containedPath(
    root,
    path.dirname(decisionPath),
    first.comparison,
    'decision.json runs[0].comparison',
  )
  try {
    const text = await readFile(file, 'utf8')
    const parsed = ComparisonSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

/** This workflow run's page, from the runner's environment; null outside Actions. */
export function runUrl(env: NodeJS.ProcessEnv = process.env): string | null {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: id } = env
  return server && repo && id ? `${server}/${repo}/actions/runs/${id}` : null
}
