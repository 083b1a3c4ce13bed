import { type Author, viewerLogin } from './comment.js'
import { applyIssueUpdate, createMarkedIssue, findMarkedIssue } from './marked-issue.js'
import { healthNoticeLabels, noticeRunStatus, planNotice } from './notice.js'
import type { GitHubClient, Repo } from './octokit.js'
import { healthNoticeBody, healthNoticeComment, healthNoticeTitle, type RenderContext } from './render.js'

export interface NoticeResult {
  /** The experiment id (the notice's marker key). */
  key: string
  action: 'created' | 'updated' | 'reopened' | 'recovered' | 'none'
  number: number | null
  url: string | null
  reason: string | null
}

const WHAT = 'the evaluation-health notice'

/**
 * Bring the experiment's one evaluation-health notice up to date with this run (planNotice decides):
 * found by its `kind=health` marker among the issues carrying its labels (the manifest's first label
 * and `evaluation-health`), created at most once, updated, reopened or marked recovered — never a
 * regression issue. Errors are HwErrors naming the missing permission (issues: write).
 */
export async function syncHealthNotice(
  gh: GitHubClient,
  repo: Repo,
  ctx: RenderContext,
  opts: { closeOnRecovery: boolean; author?: Author },
): Promise<NoticeResult> {
  const d = ctx.decision
  const key = d.experiment_id
  const identity = { kind: 'health' as const, key }
  const labels = healthNoticeLabels(d)
  const author = opts.author === undefined ? await viewerLogin(gh) : opts.author
  const existing = await findMarkedIssue(gh, repo, identity, labels, author)
  const action = planNotice({
    existing,
    status: noticeRunStatus(d),
    closeOnRecovery: opts.closeOnRecovery,
    run: d.run_id,
  })
  if (action.kind === 'none') {
    return {
      key,
      action: 'none',
      number: existing?.number ?? null,
      url: existing?.html_url ?? null,
      reason: action.reason,
    }
  }
  const body = healthNoticeBody(ctx, action.state)
  if (action.kind === 'create') {
    const created = await createMarkedIssue(gh, repo, {
      what: WHAT,
      identity,
      title: healthNoticeTitle(d),
      body,
      labels,
      author,
    })
    return { key, action: 'created', number: created.number, url: created.html_url, reason: null }
  }
  const found = existing as NonNullable<typeof existing>
  await applyIssueUpdate(gh, repo, found.number, WHAT, {
    body,
    reopen: action.reopen,
    close: action.close,
    comment: action.comment ? healthNoticeComment(ctx, action.comment, action.close) : null,
    addLabels: action.addLabels,
    removeLabels: action.removeLabels,
  })
  const kind =
    action.comment === 'recovered' ? 'recovered' : action.comment === 'reopened' ? 'reopened' : 'updated'
  return { key, action: kind, number: found.number, url: found.html_url, reason: null }
}
