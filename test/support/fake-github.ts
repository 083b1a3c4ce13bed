// A small, stateful fake of the GitHub REST API (issues, labels, comments, the authenticated user),
// served over real HTTP on 127.0.0.1. Every request is validated against GitHub's official OpenAPI
// description (test/fixtures/github-openapi.json, sliced from @octokit/openapi by
// scripts/slice-github-spec.mjs), and so is every response the fake produces, so the fake cannot
// drift from the documented shapes without a test failing. Lists are paged the way GitHub pages
// them, with a real Link header. Behaviours GitHub documents outside the description are reproduced:
// 401 without a token, 404 for unknown issues, 422 "body is too long (maximum is 65536 characters)",
// 403 "Resource not accessible by integration" for a read-only token, and 403 on GET /user for
// installation tokens (GITHUB_TOKEN).
import { readFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import addFormats from 'ajv-formats'
import { type Context, type Document, OpenAPIBackend } from 'openapi-backend'

export const SPEC_PATH = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'github-openapi.json',
)

export interface FakeGitHubOptions {
  /** OpenAPI description; default the committed slice. */
  spec?: string | Document
  /** Reject request-body properties the description does not declare (GitHub ignores them; typos should fail). */
  strictBodies?: boolean
  /** Login the token belongs to. */
  login?: string
  /**
   * How the token authenticates: a user PAT (GET /user works), the workflow's GITHUB_TOKEN
   * (`installation`: github-actions[bot]) or a GitHub App installation token (`app`: <slug>[bot]).
   * Installation tokens get 403 on GET /user; GraphQL `viewer { login }` names their bot.
   */
  tokenKind?: 'user' | 'installation' | 'app'
  /** Answer POST /graphql `{ viewer { login } }` (default true); false: 404, as a GHES without it. */
  graphql?: boolean
  /** A read-only token (fork pull requests, or missing `permissions:`): every write is 403. */
  readOnly?: boolean
}

export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string>
  body: unknown
  operationId: string | undefined
  status: number
  error?: string
  /** The request was carried out, then answered with an injected failure (injectAfterOnce). */
  doneBeforeFailure?: boolean
}

interface Label {
  id: number
  node_id: string
  url: string
  name: string
  description: string | null
  color: string
  default: boolean
}
interface User {
  [k: string]: unknown
  login: string
}
export interface FakeIssue {
  [k: string]: unknown
  number: number
  title: string
  body: string | null
  state: 'open' | 'closed'
  labels: Label[]
  comments: number
  html_url: string
}
export interface FakeComment {
  [k: string]: unknown
  id: number
  body: string
  user: User
  issue_url: string
}
interface RepoState {
  issues: FakeIssue[]
  comments: Map<number, FakeComment[]>
  labels: Map<string, Label>
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> }

export interface FakeGitHub {
  url: string
  requests: RecordedRequest[]
  /** Requests that failed validation, hit no route, or produced an off-spec response. */
  problems(): RecordedRequest[]
  /** Writes (POST/PATCH/PUT/DELETE) in order, as "METHOD path". */
  writes(): string[]
  issues(owner: string, repo: string): FakeIssue[]
  comments(owner: string, repo: string, issue: number): FakeComment[]
  seedIssue(
    owner: string,
    repo: string,
    fields: { title: string; body?: string; labels?: string[]; state?: 'open' | 'closed'; pr?: boolean },
  ): FakeIssue
  seedComment(owner: string, repo: string, issue: number, body: string, login?: string): FakeComment
  /** Change behaviour mid-test (e.g. a token that loses its write permission). */
  set(opts: Partial<Pick<FakeGitHubOptions, 'readOnly' | 'tokenKind'>>): void
  /**
   * Carry out the next request of `operationId`, then answer with this reply instead (a 502 from a
   * proxy after GitHub created the issue: the client cannot know it was written).
   */
  injectAfterOnce(
    operationId: string,
    reply: { status: number; body: unknown; headers?: Record<string, string> },
  ): void
  /** Answer the next request of `operationId` with this reply instead (rate limits, 5xx). */
  injectOnce(
    operationId: string,
    reply: { status: number; body: unknown; headers?: Record<string, string> },
  ): void
  close(): Promise<void>
}

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')
const DOCS = 'https://docs.github.com/rest'
const BODY_LIMIT = 65_536

export async function startFakeGitHub(opts: FakeGitHubOptions = {}): Promise<FakeGitHub> {
  const spec = opts.spec ?? SPEC_PATH
  const definition = typeof spec === 'string' ? (JSON.parse(readFileSync(spec, 'utf8')) as Document) : spec
  const api = new OpenAPIBackend({
    definition,
    strict: true,
    validate: true,
    quick: true, // compile validators lazily: ~0.4 s instead of ~4 s for the slice
    customizeAjv: (ajv) => {
      addFormats.default(ajv)
      return ajv
    },
  })
  await api.init()

  const state = { readOnly: opts.readOnly ?? false, tokenKind: opts.tokenKind ?? 'installation' }
  const login =
    opts.login ??
    (state.tokenKind === 'installation'
      ? 'github-actions[bot]'
      : state.tokenKind === 'app'
        ? 'harness-watch-app[bot]'
        : 'octocat')
  let nextId = 1000
  const repos = new Map<string, RepoState>()
  const requests: RecordedRequest[] = []
  const injected = new Map<string, Reply>()
  const injectedAfter = new Map<string, Reply>()
  let base = ''

  const user = (name = login): User => {
    const n = encodeURIComponent(name)
    return {
      login: name,
      id: name.length,
      node_id: `U_${n}`,
      avatar_url: `${base}/avatars/${n}`,
      gravatar_id: '',
      url: `${base}/users/${n}`,
      html_url: `${base}/${n}`,
      followers_url: `${base}/users/${n}/followers`,
      following_url: `${base}/users/${n}/following{/other_user}`,
      gists_url: `${base}/users/${n}/gists{/gist_id}`,
      starred_url: `${base}/users/${n}/starred{/owner}{/repo}`,
      subscriptions_url: `${base}/users/${n}/subscriptions`,
      organizations_url: `${base}/users/${n}/orgs`,
      repos_url: `${base}/users/${n}/repos`,
      events_url: `${base}/users/${n}/events{/privacy}`,
      received_events_url: `${base}/users/${n}/received_events`,
      type: name.endsWith('[bot]') ? 'Bot' : 'User',
      site_admin: false,
    }
  }
  const repoState = (owner: string, repo: string): RepoState => {
    const key = `${owner}/${repo}`.toLowerCase()
    let r = repos.get(key)
    if (!r) {
      r = { issues: [], comments: new Map(), labels: new Map() }
      repos.set(key, r)
    }
    return r
  }
  const label = (owner: string, repo: string, l: string | { name?: string }): Label => {
    const name = typeof l === 'string' ? l : String(l.name)
    const st = repoState(owner, repo)
    let lab = st.labels.get(name)
    if (!lab) {
      const id = nextId++
      lab = {
        id,
        node_id: `LA_${id}`,
        url: `${base}/repos/${owner}/${repo}/labels/${encodeURIComponent(name)}`,
        name,
        description: null,
        color: 'ededed',
        default: false,
      }
      st.labels.set(name, lab)
    }
    return lab
  }
  const newIssue = (
    owner: string,
    repo: string,
    f: {
      title: string
      body?: string | null
      labels?: (string | { name?: string })[]
      state?: 'open' | 'closed'
      pr?: boolean
    },
  ): FakeIssue => {
    const st = repoState(owner, repo)
    const number = st.issues.length + 1
    const id = nextId++
    const r = `${base}/repos/${owner}/${repo}`
    const t = now()
    const issue: FakeIssue = {
      id,
      node_id: `I_${id}`,
      url: `${r}/issues/${number}`,
      repository_url: r,
      labels_url: `${r}/issues/${number}/labels{/name}`,
      comments_url: `${r}/issues/${number}/comments`,
      events_url: `${r}/issues/${number}/events`,
      html_url: `${base}/${owner}/${repo}/${f.pr ? 'pull' : 'issues'}/${number}`,
      timeline_url: `${r}/issues/${number}/timeline`,
      number,
      state: f.state ?? 'open',
      state_reason: null,
      title: f.title,
      body: f.body ?? null,
      user: user(),
      labels: (f.labels ?? []).map((l) => label(owner, repo, l)),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: 0,
      closed_at: null,
      created_at: t,
      updated_at: t,
      author_association: 'OWNER',
      ...(f.pr
        ? {
            pull_request: {
              url: `${r}/pulls/${number}`,
              html_url: `${base}/${owner}/${repo}/pull/${number}`,
              diff_url: `${base}/${owner}/${repo}/pull/${number}.diff`,
              patch_url: `${base}/${owner}/${repo}/pull/${number}.patch`,
            },
          }
        : {}),
    }
    st.issues.push(issue)
    st.comments.set(number, [])
    return issue
  }
  const newComment = (
    owner: string,
    repo: string,
    issue: FakeIssue,
    body: string,
    author = login,
  ): FakeComment => {
    const id = nextId++
    const r = `${base}/repos/${owner}/${repo}`
    const t = now()
    const comment: FakeComment = {
      id,
      node_id: `IC_${id}`,
      url: `${r}/issues/comments/${id}`,
      html_url: `${issue.html_url}#issuecomment-${id}`,
      body,
      user: user(author),
      created_at: t,
      updated_at: t,
      issue_url: String(issue.url),
      author_association: 'OWNER',
    }
    repoState(owner, repo).comments.get(issue.number)?.push(comment)
    issue.comments += 1
    return comment
  }
  const findIssue = (owner: string, repo: string, n: number) =>
    repoState(owner, repo).issues.find((i) => i.number === n)
  const notFound: Reply = {
    status: 404,
    body: { message: 'Not Found', documentation_url: DOCS, status: '404' },
  }
  const tooLong = (body: unknown): Reply | null =>
    typeof body === 'string' && body.length > BODY_LIMIT
      ? {
          status: 422,
          body: {
            message: 'Validation Failed',
            errors: [
              {
                resource: 'Issue',
                code: 'custom',
                field: 'body',
                message: 'body is too long (maximum is 65536 characters)',
              },
            ],
            documentation_url: DOCS,
            status: '422',
          },
        }
      : null

  /** Slice a list the way GitHub pages it, with the Link header Octokit's paginate() follows. */
  const page = <T>(c: Context, items: T[], p: string): Reply => {
    const q = c.request.query as Record<string, string>
    const perPage = Math.min(Number(q.per_page ?? 30), 100)
    const pageNo = Number(q.page ?? 1)
    const last = Math.max(1, Math.ceil(items.length / perPage))
    const link = (n: number) => {
      const u = new URL(base + p)
      for (const [k, v] of Object.entries(q)) u.searchParams.set(k, String(v))
      u.searchParams.set('page', String(n))
      u.searchParams.set('per_page', String(perPage))
      return u.toString()
    }
    const rels: string[] = []
    if (pageNo < last) rels.push(`<${link(pageNo + 1)}>; rel="next"`, `<${link(last)}>; rel="last"`)
    if (pageNo > 1) rels.push(`<${link(1)}>; rel="first"`, `<${link(pageNo - 1)}>; rel="prev"`)
    return {
      status: 200,
      body: items.slice((pageNo - 1) * perPage, pageNo * perPage),
      headers: rels.length > 0 ? { link: rels.join(', ') } : {},
    }
  }

  const P = (c: Context) => c.request.params as Record<string, string>
  const B = (c: Context) => c.request.requestBody as Record<string, unknown>

  api.register({
    'users/get-authenticated': () =>
      state.tokenKind !== 'user'
        ? {
            status: 403,
            body: {
              message: 'Resource not accessible by integration',
              documentation_url: DOCS,
              status: '403',
            },
          }
        : {
            status: 200,
            body: {
              ...user(),
              name: null,
              company: null,
              blog: '',
              location: null,
              email: null,
              hireable: null,
              bio: null,
              public_repos: 0,
              public_gists: 0,
              followers: 0,
              following: 0,
              created_at: now(),
              updated_at: now(),
            },
          },
    'issues/list-for-repo': (c) => {
      const { owner = '', repo = '' } = P(c)
      const q = c.request.query as Record<string, string>
      const st = q.state ?? 'open'
      const wanted = q.labels
        ? q.labels
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : []
      const items = repoState(owner, repo).issues.filter(
        (i) => (st === 'all' || i.state === st) && wanted.every((w) => i.labels.some((l) => l.name === w)),
      )
      return page(c, items, c.request.path)
    },
    'issues/get': (c) => {
      const { owner = '', repo = '', issue_number } = P(c)
      const i = findIssue(owner, repo, Number(issue_number))
      return i ? { status: 200, body: i } : notFound
    },
    'issues/create': (c) => {
      const { owner = '', repo = '' } = P(c)
      const b = B(c)
      const bad = tooLong(b.body)
      if (bad) return bad
      const issue = newIssue(owner, repo, {
        title: String(b.title),
        body: (b.body as string) ?? null,
        labels: (b.labels as string[]) ?? [],
      })
      return { status: 201, body: issue, headers: { location: String(issue.url) } }
    },
    'issues/update': (c) => {
      const { owner = '', repo = '', issue_number } = P(c)
      const i = findIssue(owner, repo, Number(issue_number))
      if (!i) return notFound
      const b = B(c)
      const bad = tooLong(b.body)
      if (bad) return bad
      if ('title' in b) i.title = String(b.title)
      if ('body' in b) i.body = (b.body as string | null) ?? null
      if (b.state === 'open' || b.state === 'closed') {
        i.state = b.state
        i.closed_at = b.state === 'closed' ? now() : null
        i.state_reason = b.state === 'closed' ? ((b.state_reason as string) ?? 'completed') : 'reopened'
      }
      if (Array.isArray(b.labels)) i.labels = (b.labels as string[]).map((l) => label(owner, repo, l))
      i.updated_at = now()
      return { status: 200, body: i }
    },
    'issues/add-labels': (c) => {
      const { owner = '', repo = '', issue_number } = P(c)
      const i = findIssue(owner, repo, Number(issue_number))
      if (!i) return notFound
      const b = c.request.requestBody as { labels?: (string | { name: string })[] } | string[]
      const names = (Array.isArray(b) ? b : (b.labels ?? [])).map((l) => (typeof l === 'string' ? l : l.name))
      for (const n of names) if (!i.labels.some((l) => l.name === n)) i.labels.push(label(owner, repo, n))
      return { status: 200, body: i.labels }
    },
    'issues/remove-label': (c) => {
      const { owner = '', repo = '', issue_number, name = '' } = P(c)
      const i = findIssue(owner, repo, Number(issue_number))
      const decoded = decodeURIComponent(name)
      if (!i?.labels.some((l) => l.name === decoded)) {
        return {
          status: 404,
          body: { message: 'Label does not exist', documentation_url: DOCS, status: '404' },
        }
      }
      i.labels = i.labels.filter((l) => l.name !== decoded)
      return { status: 200, body: i.labels }
    },
    'issues/list-comments': (c) => {
      const { owner = '', repo = '', issue_number } = P(c)
      if (!findIssue(owner, repo, Number(issue_number))) return notFound
      return page(c, repoState(owner, repo).comments.get(Number(issue_number)) ?? [], c.request.path)
    },
    'issues/create-comment': (c) => {
      const { owner = '', repo = '', issue_number } = P(c)
      const i = findIssue(owner, repo, Number(issue_number))
      if (!i) return notFound
      const bad = tooLong(B(c).body)
      if (bad) return bad
      const comment = newComment(owner, repo, i, String(B(c).body))
      return { status: 201, body: comment, headers: { location: String(comment.url) } }
    },
    'issues/update-comment': (c) => {
      const { owner = '', repo = '', comment_id } = P(c)
      const bad = tooLong(B(c).body)
      if (bad) return bad
      for (const list of repoState(owner, repo).comments.values()) {
        const cm = list.find((x) => x.id === Number(comment_id))
        if (cm) {
          cm.body = String(B(c).body)
          cm.updated_at = now()
          return { status: 200, body: cm }
        }
      }
      return notFound
    },
    validationFail: (c) => ({
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: (c.validation.errors ?? []).map((e) => ({
          resource: 'Request',
          field: e.instancePath,
          code: 'invalid',
          message: `${e.instancePath} ${e.message}`,
        })),
        documentation_url: DOCS,
        status: '422',
      },
    }),
    notFound: () => notFound,
    notImplemented: () => ({ status: 501, body: { message: 'fake-github: operation not implemented' } }),
  })

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const ch of req) chunks.push(ch as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const u = new URL(req.url ?? '/', base)
    const query = Object.fromEntries(u.searchParams)
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      query,
      body: undefined,
      operationId: undefined,
      status: 0,
    }
    requests.push(rec)
    const send = (r: Reply) => {
      rec.status = r.status
      res.writeHead(r.status, {
        'content-type': 'application/json; charset=utf-8',
        'x-github-api-version-selected': '2022-11-28',
        'x-ratelimit-limit': '1000',
        'x-ratelimit-remaining': '999',
        ...r.headers,
      })
      res.end(r.body === undefined ? '' : JSON.stringify(r.body))
    }
    let body: unknown
    try {
      body = raw ? JSON.parse(raw) : undefined
    } catch {
      rec.error = 'body is not JSON'
      return send({
        status: 400,
        body: { message: 'Problems parsing JSON', documentation_url: DOCS, status: '400' },
      })
    }
    rec.body = body
    const request = {
      method: rec.method,
      path: u.pathname,
      query,
      body,
      headers: req.headers as Record<string, string>,
    }
    // GraphQL (not in the REST description): only `viewer { login }`, as documented for every token kind.
    if (u.pathname === '/graphql' && rec.method === 'POST') {
      rec.operationId = 'graphql'
      if (opts.graphql === false) return send(notFound)
      if (!req.headers.authorization) {
        return send({ status: 401, body: { message: 'This endpoint requires you to be authenticated.' } })
      }
      const q = String((body as { query?: unknown } | undefined)?.query ?? '')
      if (!/\bviewer\s*\{\s*login\s*\}/.test(q)) {
        rec.error = `fake-github: unsupported GraphQL query ${q}`
        return send({ status: 200, body: { errors: [{ message: 'unsupported query in the fake' }] } })
      }
      return send({ status: 200, body: { data: { viewer: { login } } } })
    }
    const op = api.matchOperation(request)
    rec.operationId = op?.operationId
    const write = rec.method !== 'GET' && rec.method !== 'HEAD'
    const inject = op ? injected.get(op.operationId ?? '') : undefined
    if (op && inject) {
      injected.delete(op.operationId ?? '')
      return send(inject)
    }
    if (op && !req.headers.authorization && (write || op.operationId === 'users/get-authenticated')) {
      return send({
        status: 401,
        body: { message: 'Requires authentication', documentation_url: DOCS, status: '401' },
      })
    }
    if (op && write && state.readOnly) {
      return send({
        status: 403,
        body: { message: 'Resource not accessible by integration', documentation_url: DOCS, status: '403' },
      })
    }
    if (op && opts.strictBodies && body && typeof body === 'object' && !Array.isArray(body)) {
      const schema = (
        op.requestBody as {
          content?: Record<string, { schema?: { properties?: object; oneOf?: { properties?: object }[] } }>
        }
      )?.content?.['application/json']?.schema
      const allowed = [
        ...Object.keys(schema?.properties ?? {}),
        ...(schema?.oneOf ?? []).flatMap((s) => Object.keys(s.properties ?? {})),
      ]
      const extra = Object.keys(body).filter((k) => !allowed.includes(k))
      if (extra.length > 0) {
        rec.error = `unknown body properties: ${extra.join(', ')}`
        return send({
          status: 422,
          body: {
            message: 'Validation Failed',
            errors: [
              { resource: 'Request', code: 'invalid', message: `unknown properties ${extra.join(', ')}` },
            ],
            documentation_url: DOCS,
            status: '422',
          },
        })
      }
    }
    let reply: Reply
    try {
      reply = (await api.handleRequest(request)) as Reply
    } catch (e) {
      rec.error = `handler threw: ${(e as Error).message}`
      return send({ status: 500, body: { message: rec.error } })
    }
    if (!op) rec.error = 'no such operation in the description slice'
    else if (reply.status === 422 && !rec.error && !JSON.stringify(reply.body).includes('body is too long')) {
      rec.error = JSON.stringify((reply.body as { errors?: unknown }).errors)
    }
    if (op && reply.status < 300) {
      const v = api.validateResponse(reply.body, op, reply.status)
      if (v.errors?.length) {
        rec.error = `fake response off-spec: ${v.errors.map((e) => `${e.instancePath} ${e.message}`).join('; ')}`
        return send({ status: 500, body: { message: rec.error } })
      }
      const after = injectedAfter.get(op.operationId ?? '')
      if (after) {
        injectedAfter.delete(op.operationId ?? '')
        rec.doneBeforeFailure = true
        return send(after)
      }
    }
    send(reply)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address() as { port: number }
  base = `http://127.0.0.1:${addr.port}`

  return {
    url: base,
    requests,
    problems: () => requests.filter((r) => r.error !== undefined),
    writes: () =>
      requests
        .filter(
          (r) => r.method !== 'GET' && r.operationId !== 'graphql' && (r.status < 400 || r.doneBeforeFailure),
        )
        .map((r) => `${r.method} ${r.path}`),
    issues: (owner, repo) => repoState(owner, repo).issues,
    comments: (owner, repo, n) => repoState(owner, repo).comments.get(n) ?? [],
    seedIssue: (owner, repo, f) => newIssue(owner, repo, f),
    seedComment: (owner, repo, n, b, author) => {
      const i = findIssue(owner, repo, n)
      if (!i) throw new Error(`no issue ${n}`)
      return newComment(owner, repo, i, b, author)
    },
    set: (o) => Object.assign(state, o),
    injectOnce: (id, reply) => injected.set(id, reply),
    injectAfterOnce: (id, reply) => injectedAfter.set(id, reply),
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  }
}
