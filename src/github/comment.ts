import { parseIdentity } from './marker.js'
import { call, type GitHubClient, type Repo } from './octokit.js'

/** The login GitHub shows for comments written with the workflow's GITHUB_TOKEN. */
export const ACTIONS_BOT = 'github-actions[bot]'

export interface CommentLike {
  id: number
  body?: string | null
  user: { login: string } | null
}

/**
 * Is this comment ours for `key`? Our pr-report marker on its first line AND written by `author`
 * (a marker copied into someone else's comment is not ours). Pure (find-comment's predicate style).
 */
export function isOurComment(c: CommentLike, key: string, author: string): boolean {
  const id = parseIdentity(c.body)
  return id?.kind === 'pr-report' && id.key === key && c.user?.login === author
}

/**
 * The login our comments carry: the token's user when `GET /user` answers (a PAT), else the
 * Actions bot (installation tokens, including GITHUB_TOKEN, get 403 there).
 */
export async function viewerLogin(gh: GitHubClient): Promise<string> {
  try {
    const { data } = await gh.rest.users.getAuthenticated()
    return data.login
  } catch {
    return ACTIONS_BOT
  }
}

export interface UpsertResult {
  action: 'created' | 'updated'
  id: number
  url: string
}

/**
 * Create or update the one PR comment of `key` (F12: one marker per (PR, experiment), the same in
 * every state, so ok → breach → ok edits the same comment). Reads every page of comments (a marker
 * on page 2 is still found). Needs pull-requests: write (or issues: write).
 */
export async function upsertPrComment(
  gh: GitHubClient,
  repo: Repo,
  pr: number,
  key: string,
  body: string,
  author?: string,
): Promise<UpsertResult> {
  const login = author ?? (await viewerLogin(gh))
  const comments = await call('list the pull request comments', 'pull-requests: write', () =>
    gh.paginate(gh.rest.issues.listComments, { ...repo, issue_number: pr, per_page: 100 }),
  )
  const mine = comments.find((c) => isOurComment(c, key, login))
  if (mine) {
    const { data } = await call('update the pull request comment', 'pull-requests: write', () =>
      gh.rest.issues.updateComment({ ...repo, comment_id: mine.id, body }),
    )
    return { action: 'updated', id: data.id, url: data.html_url }
  }
  const { data } = await call('comment on the pull request', 'pull-requests: write', () =>
    gh.rest.issues.createComment({ ...repo, issue_number: pr, body }),
  )
  return { action: 'created', id: data.id, url: data.html_url }
}
