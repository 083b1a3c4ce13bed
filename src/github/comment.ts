import { parseIdentity } from './marker.js'
import { call, createOnce, type GitHubClient, type Repo } from './octokit.js'

/** The login GitHub shows for comments written with the workflow's GITHUB_TOKEN. */
export const ACTIONS_BOT = 'github-actions[bot]'

export interface CommentLike {
  id: number
  body?: string | null
  user: { login: string; type?: string } | null
}

/**
 * Whose bodies are ours: the token's login when it could be found; null when not (then only a bot
 * account's body counts — a person who copies our marker is never taken for us).
 */
export type Author = string | null

/** Is `user` the author our writes carry? The login when known; otherwise any bot account. */
export function isOurAuthor(
  user: { login: string; type?: string } | null | undefined,
  author: Author,
): boolean {
  if (!user) return false
  return author ? user.login === author : user.type === 'Bot' || user.login.endsWith('[bot]')
}

/**
 * Is this comment ours for `key`? Our pr-report marker on its first line AND written by `author`
 * (a marker copied into someone else's comment is not ours). Pure (find-comment's predicate style).
 */
export function isOurComment(c: CommentLike, key: string, author: Author): boolean {
  const id = parseIdentity(c.body)
  return id?.kind === 'pr-report' && id.key === key && isOurAuthor(c.user, author)
}

/**
 * The login our comments and issues carry, for every token kind:
 *  - a personal access token: `GET /user`;
 *  - an installation token (the workflow's GITHUB_TOKEN, or a GitHub App's): `GET /user` is 403, so
 *    GraphQL `viewer { login }`, which names the bot (`github-actions[bot]`, `<app-slug>[bot]`);
 *  - neither answers (e.g. no GraphQL): null — then the hidden marker, the labels and a bot author decide.
 */
export async function viewerLogin(gh: GitHubClient): Promise<Author> {
  try {
    const { data } = await gh.rest.users.getAuthenticated()
    return data.login
  } catch {
    // An installation token: ask GraphQL.
  }
  try {
    const r = await gh.graphql<{ viewer?: { login?: string } }>('query { viewer { login } }')
    return r.viewer?.login || null
  } catch {
    return null
  }
}

export interface UpsertResult {
  action: 'created' | 'updated'
  id: number
  url: string
}

/** Our comment of `key` on pull request `pr`, reading every page (a marker on page 2 is still found). */
async function findPrComment(
  gh: GitHubClient,
  repo: Repo,
  pr: number,
  key: string,
  author: Author,
): Promise<CommentLike | null> {
  const comments = await call('list the pull request comments', 'pull-requests: write', () =>
    gh.paginate(gh.rest.issues.listComments, { ...repo, issue_number: pr, per_page: 100 }),
  )
  return comments.find((c) => isOurComment(c, key, author)) ?? null
}

/**
 * Create or update the one PR comment of `key` (F12: one marker per (PR, experiment), the same in
 * every state, so ok → breach → ok edits the same comment). A create that failed with a 5xx or no
 * answer is looked up by its marker before it is sent again (never two comments). Needs
 * pull-requests: write (or issues: write). `author`: the token's login (default: viewerLogin).
 */
export async function upsertPrComment(
  gh: GitHubClient,
  repo: Repo,
  pr: number,
  key: string,
  body: string,
  author?: Author,
): Promise<UpsertResult> {
  const login = author === undefined ? await viewerLogin(gh) : author
  const mine = await findPrComment(gh, repo, pr, key, login)
  if (mine) {
    const { data } = await call('update the pull request comment', 'pull-requests: write', () =>
      gh.rest.issues.updateComment({ ...repo, comment_id: mine.id, body }),
    )
    return { action: 'updated', id: data.id, url: data.html_url }
  }
  const { value } = await createOnce({
    operation: 'comment on the pull request',
    permission: 'pull-requests: write',
    create: async (request) => {
      const { data } = await gh.rest.issues.createComment({ ...repo, issue_number: pr, body, request })
      return { id: data.id, url: data.html_url }
    },
    find: async () => {
      const c = await findPrComment(gh, repo, pr, key, login)
      return c ? { id: c.id, url: (c as { html_url?: string }).html_url ?? '' } : null
    },
  })
  return { action: 'created', ...value }
}
