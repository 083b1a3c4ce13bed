import { type Author, isOurAuthor } from './comment.js'
import { type MarkerKind, parseIdentity } from './marker.js'
import { call, createOnce, type GitHubClient, type Repo } from './octokit.js'

/**
 * Issues Harness Watch finds again by the hidden marker on their first line (tracking issues, one
 * per comparison key; evaluation-health notices, one per experiment): the lookup, the create that is
 * never sent twice, and the ordered update. Every call is translated into an HwError naming the
 * permission it needs.
 */

export interface ExistingIssue {
  number: number
  state: 'open' | 'closed'
  body: string | null
  labels: string[]
  html_url: string
}

/** Which of our issues: the marker kind and key on its first line. */
export interface IssueIdentity {
  kind: MarkerKind
  key: string
}

/**
 * Find our issue of `identity`: every issue (open and closed) carrying ALL of `labels`, all pages,
 * whose first line is our marker for that kind and key and whose author is ours (`author`: the
 * token's login; null = any bot account) — the list endpoint, not the Search API (30 requests/min and
 * indexing lag). Several matches (from before this version): an open one first, else the newest.
 */
export async function findMarkedIssue(
  gh: GitHubClient,
  repo: Repo,
  identity: IssueIdentity,
  labels: string | string[],
  author: Author = null,
): Promise<ExistingIssue | null> {
  const wanted = (Array.isArray(labels) ? labels : [labels]).filter(Boolean)
  const all = await call('list issues', 'issues: read', () =>
    gh.paginate(gh.rest.issues.listForRepo, {
      ...repo,
      labels: (wanted.length > 0 ? wanted : ['harness-watch']).join(','),
      state: 'all',
      per_page: 100,
    }),
  )
  const mine = all
    .filter((i) => !i.pull_request)
    .filter((i) => {
      const id = parseIdentity(i.body)
      return id?.kind === identity.kind && id.key === identity.key && isOurAuthor(i.user, author)
    })
    .sort((a, b) => a.number - b.number)
  const pick = mine.find((i) => i.state === 'open') ?? mine.at(-1)
  if (!pick) return null
  return {
    number: pick.number,
    state: pick.state === 'closed' ? 'closed' : 'open',
    body: pick.body ?? null,
    labels: pick.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
    html_url: pick.html_url,
  }
}

/**
 * Create our issue of `identity` once: a POST retried after a 5xx or no answer could open a second
 * issue, so the marker is looked up before it is sent again (createOnce). `what` names it in errors
 * ("the tracking issue"). Needs issues: write.
 */
export async function createMarkedIssue(
  gh: GitHubClient,
  repo: Repo,
  opts: {
    what: string
    identity: IssueIdentity
    title: string
    body: string
    labels: string[]
    author: Author
  },
): Promise<{ number: number; html_url: string }> {
  const { value } = await createOnce({
    operation: `create ${opts.what}`,
    permission: 'issues: write',
    create: async (request) => {
      const { data } = await gh.rest.issues.create({
        ...repo,
        title: opts.title,
        body: opts.body,
        labels: opts.labels,
        request,
      })
      return { number: data.number, html_url: data.html_url }
    },
    find: () => findMarkedIssue(gh, repo, opts.identity, opts.labels, opts.author),
  })
  return value
}

/** One update of an existing marked issue. */
export interface IssueUpdate {
  body: string
  reopen: boolean
  close: boolean
  /** A comment to add (edits notify nobody: conbench#307); null for none. */
  comment: string | null
  addLabels: string[]
  removeLabels: string[]
}

/**
 * Apply an update in the order a reader expects: new body (and reopen) first, then labels, then the
 * comment; a close comes last, after the comment that explains it. Writes are sequential (GitHub's
 * secondary limits: 80 content-creating requests per minute). `what` names the issue in errors.
 */
export async function applyIssueUpdate(
  gh: GitHubClient,
  repo: Repo,
  number: number,
  what: string,
  u: IssueUpdate,
): Promise<void> {
  const update = () =>
    call(`update ${what}`, 'issues: write', () =>
      gh.rest.issues.update({
        ...repo,
        issue_number: number,
        body: u.body,
        ...(u.reopen ? { state: 'open' as const } : {}),
        ...(u.close ? { state: 'closed' as const, state_reason: 'completed' as const } : {}),
      }),
    )
  if (!u.close) await update()
  for (const name of u.removeLabels) {
    await call(`remove a label from ${what}`, 'issues: write', () =>
      gh.rest.issues.removeLabel({ ...repo, issue_number: number, name }),
    )
  }
  if (u.addLabels.length > 0) {
    await call(`label ${what}`, 'issues: write', () =>
      gh.rest.issues.addLabels({ ...repo, issue_number: number, labels: u.addLabels }),
    )
  }
  if (u.comment) {
    const body = u.comment
    await call(`comment on ${what}`, 'issues: write', () =>
      gh.rest.issues.createComment({ ...repo, issue_number: number, body }),
    )
  }
  if (u.close) await update()
}
