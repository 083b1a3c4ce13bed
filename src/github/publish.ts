import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { type Comparison, ComparisonSchema } from '../compare/schema.js'
import type { Decision } from '../detect/schema.js'
import { readDecision } from '../detect/step.js'
import { STATUS_LABEL } from '../report/decision.js'
import { codeSpan, escapeMarkdown } from '../report/escape.js'
import { type UpsertResult, upsertPrComment } from './comment.js'
import { syncTrackingIssue, type TrackingResult } from './issue.js'
import { type GitHubClient, makeOctokit, type Repo, repoFromEnv } from './octokit.js'
import { prCommentBody, type RenderContext } from './render.js'

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
  /** REST base URL; default GITHUB_API_URL. */
  baseUrl?: string
  /** Close a tracking issue when it is marked recovered (default true; a new confirmed breach reopens it). */
  closeOnRecovery?: boolean
  /** For tests: a ready client (otherwise built from token/baseUrl). */
  client?: GitHubClient
  /** Render everything, write nothing to GitHub (no token needed). */
  dryRun?: boolean
}

export interface PublishResult {
  decision: Decision
  issues: TrackingResult[]
  comment: UpsertResult | null
  /** Why the check must fail (a confirmed regression per policy, or an evaluation failure); null = pass. */
  failure: string | null
  /** Markdown for the job summary. */
  summary: string
}

/**
 * Publish a decision: the PR comment (PR mode) or the tracking issues (one per comparison key).
 * Writes are sequential. The check fails on a confirmed regression when
 * reporting.fail_on_confirmed_regression is set, and on evaluation-health errors (a run-level
 * error, never a regression issue: F06). Throws HwError for GitHub failures (permissions, 422).
 */
export async function publish(opts: PublishOptions): Promise<PublishResult> {
  const { decision, path: decisionPath } = await readDecision(opts.comparison)
  const comparison = await firstRunComparison(decision, decisionPath)
  const ctx: RenderContext = { decision, comparison, reportUrl: opts.reportUrl ?? runUrl() }
  const issues: TrackingResult[] = []
  let comment: UpsertResult | null = null
  if (opts.dryRun || (!opts.token && !opts.client)) {
    const note = opts.dryRun
      ? 'Dry run: nothing was written to GitHub.'
      : 'Not published to GitHub (no token: e.g. a pull request from a fork, posted by the workflow_run companion).'
    return {
      decision,
      issues,
      comment,
      failure: failureOf(decision),
      summary: `${summaryOf(ctx, issues, comment)}\n\n${note}`,
    }
  }
  const gh = opts.client ?? makeOctokit({ token: opts.token, baseUrl: opts.baseUrl })
  const repo = opts.repo ?? repoFromEnv()
  if (opts.pr) {
    comment = await upsertPrComment(
      gh,
      repo,
      opts.pr,
      decision.experiment_id,
      prCommentBody(ctx, decision.experiment_id),
    )
  } else {
    for (const v of decision.comparisons) {
      issues.push(
        await syncTrackingIssue(gh, repo, ctx, v, {
          labels: decision.policy.reporting.labels,
          recoveredAfter: decision.policy.reporting.recovered_after,
          closeOnRecovery: opts.closeOnRecovery ?? true,
        }),
      )
    }
  }
  return {
    decision,
    issues,
    comment,
    failure: failureOf(decision),
    summary: summaryOf(ctx, issues, comment),
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
  if (r.comment) parts.push(`PR comment ${r.comment.action} ${r.comment.url}`)
  if (parts.length === 0) parts.push('nothing written to GitHub')
  return `${STATUS_LABEL[r.decision.status]}: ${parts.join('; ')}`
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
function summaryOf(ctx: RenderContext, issues: TrackingResult[], comment: UpsertResult | null): string {
  const body = prCommentBody(ctx, ctx.decision.experiment_id).split('\n').slice(1).join('\n').trim()
  const lines: string[] = []
  for (const i of issues) {
    if (i.action === 'none')
      lines.push(`- ${codeSpan(i.key)}: no issue change (${escapeMarkdown(i.reason ?? '')})`)
    else
      lines.push(`- ${codeSpan(i.key)}: tracking issue #${i.number} ${i.action}${i.url ? ` (${i.url})` : ''}`)
  }
  if (comment) lines.push(`- PR comment ${comment.action}: ${comment.url}`)
  return lines.length > 0 ? `${body}\n\n#### Published\n\n${lines.join('\n')}` : body
}

/** The first run's comparison.json (whole panel) for the report sections; null if it cannot be read. */
async function firstRunComparison(d: Decision, decisionPath: string): Promise<Comparison | null> {
  const first = d.runs[0]
  if (!first) return null
  try {
    const text = await readFile(path.resolve(path.dirname(decisionPath), first.comparison), 'utf8')
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
