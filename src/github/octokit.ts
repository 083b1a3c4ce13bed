import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'
import { Octokit } from '@octokit/rest'
import { HwError } from '../util/errors.js'

/** Octokit with retries (5xx, network) and GitHub's recommended throttling (writes spaced ≥ 1 s). */
export const HwOctokit = Octokit.plugin(retry, throttling)
export type GitHubClient = InstanceType<typeof HwOctokit>

export interface Repo {
  owner: string
  repo: string
}

export interface OctokitOptions {
  token: string
  /** REST base URL; default GITHUB_API_URL read now (not at import: tests set it late), else api.github.com. */
  baseUrl?: string
  /** Retries of 5xx/network failures (the retry plugin's default is 3). */
  retries?: number
  /** GitHub's throttling schedule; tests turn it off to avoid its 1–3 s spacing between writes. */
  throttle?: boolean
  log?: (message: string) => void
}

/**
 * Build the REST client every GitHub write goes through. Rate limits: retry twice on the primary
 * limit and once on a secondary limit (80 content writes/min), after the delay GitHub asks for.
 */
export function makeOctokit(opts: OctokitOptions): GitHubClient {
  if (!opts.token) {
    throw new HwError('github_token_missing', 'no GitHub token given', {
      help: 'pass the workflow token (github.token) or a PAT as the token input of the publish step',
    })
  }
  const warn = opts.log ?? ((m: string) => process.stderr.write(`${m}\n`))
  return new HwOctokit({
    auth: opts.token,
    baseUrl: (opts.baseUrl ?? process.env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, ''),
    userAgent: 'harness-watch',
    request: opts.retries === undefined ? undefined : { retries: opts.retries },
    // Failed requests are thrown and explained by the caller; the request log's own line for them
    // ("GET /user - 403 with id …", expected for installation tokens) would only be noise.
    log: {
      debug: () => {},
      info: () => {},
      warn,
      error: (m: string) => {
        if (!/^[A-Z]+ \S+ - \d{3} with id /.test(m)) warn(m)
      },
    },
    throttle: {
      enabled: opts.throttle ?? true,
      onRateLimit: (after: number, o: { method: string; url: string }, _k: unknown, count: number) => {
        warn(`GitHub rate limit on ${o.method} ${o.url}; retrying in ${after} s`)
        return count < 2
      },
      onSecondaryRateLimit: (
        after: number,
        o: { method: string; url: string },
        _k: unknown,
        count: number,
      ) => {
        warn(`GitHub secondary rate limit on ${o.method} ${o.url}; retrying in ${after} s`)
        return count < 1
      },
    },
  })
}

/** owner/repo from GITHUB_REPOSITORY (set by the runner). */
export function repoFromEnv(env: NodeJS.ProcessEnv = process.env): Repo {
  const full = env.GITHUB_REPOSITORY ?? ''
  const [owner, repo, extra] = full.split('/')
  if (!owner || !repo || extra !== undefined) {
    throw new HwError('github_repo_unknown', `GITHUB_REPOSITORY is "${full}", expected "owner/repo"`, {
      help: 'run inside GitHub Actions, or set GITHUB_REPOSITORY=owner/repo',
    })
  }
  return { owner, repo }
}

/** What a write needs, per operation, in GitHub's fine-grained permission names. */
export type NeededPermission = 'issues: write' | 'pull-requests: write' | 'issues: read'

/**
 * Turn an Octokit RequestError into an HwError a person can act on: 403 "Resource not accessible by
 * integration" names the missing `permissions:` entry (and explains fork PRs), 401 a bad token,
 * 404 a missing repository/issue or a token that cannot see it, 422 GitHub's validation errors
 * (e.g. "body is too long"). Anything else is returned unchanged.
 */
export function explainGitHubError(e: unknown, operation: string, permission: NeededPermission): unknown {
  const err = e as { status?: number; message?: string; response?: { data?: unknown } }
  if (typeof err?.status !== 'number') return e
  const data = err.response?.data as { message?: string; errors?: unknown[] } | undefined
  const msg = data?.message ?? err.message ?? ''
  switch (err.status) {
    case 401:
      return new HwError(
        'github_unauthorized',
        `GitHub rejected the token while trying to ${operation} (401)`,
        {
          help: 'check the token input: it is expired, revoked or empty',
          cause: e,
        },
      )
    case 403:
      if (/not accessible by integration/i.test(msg) || /permission/i.test(msg)) {
        return new HwError(
          'github_permission',
          `the token may not ${operation}: GitHub answered 403 "${msg}" — the job needs \`permissions: ${permission}\``,
          {
            help:
              `add "${permission}" under the publishing job's permissions: (naming any permission sets the others ` +
              'to none). On pull requests from forks the token is read-only whatever permissions say: ' +
              'use the workflow_run companion workflow (examples/pr-check-comment.yml).',
            cause: e,
          },
        )
      }
      return new HwError('github_forbidden', `GitHub refused to ${operation} (403): ${msg}`, { cause: e })
    case 404:
      return new HwError('github_not_found', `GitHub answered 404 while trying to ${operation}`, {
        help: `the repository, issue or comment does not exist, or the token cannot see it (needs ${permission.replace('write', 'read')})`,
        cause: e,
      })
    case 422: {
      const details = (data?.errors ?? []).map((x) =>
        typeof x === 'string' ? x : ((x as { message?: string }).message ?? JSON.stringify(x)),
      )
      return new HwError('github_rejected', `GitHub rejected the request to ${operation} (422 ${msg})`, {
        details,
        help: 'nothing was written; this is a bug in harness-watch if the body is too long — please report it',
        cause: e,
      })
    }
    default:
      return e
  }
}

/** Run one GitHub call and translate its failure with explainGitHubError. */
export async function call<T>(
  operation: string,
  permission: NeededPermission,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    throw explainGitHubError(e, operation, permission)
  }
}

/** A failure after which a write may or may not have happened: a 5xx answer or no answer at all. */
export function mayHaveWritten(e: unknown): boolean {
  const status = (e as { status?: unknown })?.status
  return typeof status !== 'number' || status >= 500
}

/**
 * Create something at most once although a POST is not idempotent: the create is sent without the
 * retry plugin's automatic retries; after a failure that may have written it (5xx, no answer) it is
 * looked up first (by its hidden marker) and only sent again when it is not found. Up to `attempts`
 * sends, `delayMs × n` apart. Other failures are translated by explainGitHubError and thrown.
 */
export async function createOnce<T>(opts: {
  operation: string
  permission: NeededPermission
  create: (request: { retries: number }) => Promise<T>
  find: () => Promise<T | null>
  attempts?: number
  delayMs?: number
}): Promise<{ value: T; found: boolean }> {
  const attempts = opts.attempts ?? 3
  for (let n = 1; ; n++) {
    try {
      return { value: await opts.create({ retries: 0 }), found: false }
    } catch (e) {
      if (!mayHaveWritten(e) || n >= attempts) throw explainGitHubError(e, opts.operation, opts.permission)
      await new Promise((r) => setTimeout(r, (opts.delayMs ?? 1000) * n))
      const existing = await opts.find()
      if (existing) return { value: existing, found: true }
    }
  }
}
