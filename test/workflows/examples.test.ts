// The shipped examples as shipped, through the workflow simulator (GitHub's own parser and expression
// engine): the on-demand evaluation's gate and the fork companion run against a fake of the two
// GitHub REST reads they make (documented shapes: "Get repository permissions for a user" and "Get a
// pull request"), served on 127.0.0.1; every example parses, converts and passes the permission and
// secrets check; pr-worktrees.sh against real git repositories.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..', '..')
const HEAD = 'a'.repeat(40)

interface Sim {
  conclusion: string
  jobs: Record<string, { result: string; outputs: Record<string, string> }>
  summaries: string[]
}

/** GET /repos/acme/widgets/collaborators/<user>/permission and GET /repos/acme/widgets/pulls/7. */
function fakeGitHub(): Promise<{ url: string; seen: string[]; close: () => void }> {
  const seen: string[] = []
  const permissions: Record<string, string> = { maintainer: 'write', owner: 'admin', visitor: 'read' }
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.headers.authorization !== 'Bearer test-token')
      return send(401, { message: 'Requires authentication' })
    const perm = /^\/repos\/acme\/widgets\/collaborators\/([^/]+)\/permission$/.exec(req.url ?? '')
    if (perm) {
      const user = decodeURIComponent(perm[1] as string)
      const p = permissions[user]
      if (!p) return send(404, { message: `${user} is not a user` })
      return send(200, { permission: p, role_name: p, user: { login: user } })
    }
    if (req.url === '/repos/acme/widgets/pulls/7') {
      return send(200, { number: 7, head: { sha: HEAD, repo: { fork: true } }, base: { ref: 'main' } })
    }
    send(404, { message: 'Not Found' })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      resolve({ url: `http://127.0.0.1:${port}`, seen, close: () => server.close() })
    }),
  )
}

async function simulate(
  workflow: string,
  eventName: string,
  event: unknown,
  api: string,
  extra: string[] = [],
): Promise<Sim> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-example-sim-'))
  const eventFile = path.join(dir, 'event.json')
  writeFileSync(eventFile, JSON.stringify(event))
  const envFile = path.join(dir, '.env')
  writeFileSync(
    envFile,
    [`GITHUB_API_URL=${api}`, 'GITHUB_REPOSITORY=acme/widgets', 'GITHUB_TOKEN=test-token'].join('\n'),
  )
  const r = await execa(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'scripts', 'simulate-workflow.ts'),
      path.join(root, workflow),
      '--workspace',
      mkdtempSync(path.join(tmpdir(), 'hw-example-ws-')),
      '--action-root',
      root,
      '--env-file',
      envFile,
      '--event-name',
      eventName,
      '--event',
      eventFile,
      '--json',
      ...extra,
    ],
    { cwd: root, reject: false },
  )
  const last = r.stdout.trim().split('\n').at(-1) ?? ''
  if (!last.startsWith('{')) throw new Error(`simulation crashed:\n${r.stderr.slice(-3000)}`)
  return JSON.parse(last) as Sim
}

describe('examples/pr-check-on-demand.yml: a maintainer evaluates a fork pull request', () => {
  let gh: Awaited<ReturnType<typeof fakeGitHub>>
  beforeAll(async () => {
    gh = await fakeGitHub()
  })
  afterAll(() => gh.close())

  const comment = (login: string, body = '/harness-watch') => ({
    issue: { number: 7, pull_request: { url: 'https://api.github.com/repos/acme/widgets/pulls/7' } },
    comment: { body, user: { login } },
    sender: { login },
  })

  it('a /harness-watch comment from a user with write permission starts the call at the head it saw', async () => {
    const r = await simulate(
      'examples/pr-check-on-demand.yml',
      'issue_comment',
      comment('maintainer'),
      gh.url,
      ['--assume-success', 'harness-watch'],
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs.gate?.outputs).toEqual({
      allowed: 'true',
      'pr-number': '7',
      'head-sha': HEAD,
      'base-ref': 'main',
    })
    expect(r.jobs['harness-watch']?.result).toBe('success')
    expect(r.summaries.join('')).toContain(`@maintainer (write) asked to evaluate #7 at ${HEAD}.`)
  }, 60_000)

  it('a trigger from a user without write permission is ignored, with a one-line reason in the summary', async () => {
    for (const [event, name] of [
      [comment('visitor'), 'issue_comment'],
      [
        {
          label: { name: 'harness-watch' },
          pull_request: { number: 7, head: { sha: HEAD } },
          sender: { login: 'visitor' },
        },
        'pull_request_target',
      ],
    ] as const) {
      const r = await simulate('examples/pr-check-on-demand.yml', name, event, gh.url, [
        '--assume-success',
        'harness-watch',
      ])
      expect(r.conclusion, name).toBe('success')
      expect(r.jobs.gate?.outputs.allowed, name).toBe('false')
      expect(r.jobs['harness-watch']?.result, name).toBe('skipped')
      const summary = r.summaries.join('').trim()
      expect(summary.split('\n'), name).toHaveLength(1)
      expect(summary).toBe(
        'Harness Watch: ignored the request of @visitor on #7 — only users with write permission on acme/widgets can start an evaluation (they have: read).',
      )
    }
  }, 120_000)

  it('other comments and labels do not start the gate', async () => {
    const r = await simulate(
      'examples/pr-check-on-demand.yml',
      'issue_comment',
      comment('maintainer', 'lgtm'),
      gh.url,
    )
    expect(r.jobs.gate?.result).toBe('skipped')
    expect(r.jobs['harness-watch']?.result).toBe('skipped')
  }, 60_000)
})

describe('examples/pr-check-comment.yml: the fork companion', () => {
  let gh: Awaited<ReturnType<typeof fakeGitHub>>
  beforeAll(async () => {
    gh = await fakeGitHub()
  })
  afterAll(() => gh.close())

  it('a run that left no report: a summary line, no error, nothing posted', async () => {
    const artifacts = mkdtempSync(path.join(tmpdir(), 'hw-example-artifacts-'))
    // The fork's run (id 900) uploaded only the PR number: it stopped before aggregating.
    mkdirSync(path.join(artifacts, '900', 'harness-watch-pr'), { recursive: true })
    writeFileSync(path.join(artifacts, '900', 'harness-watch-pr', 'pr-number.txt'), '7\n')
    const r = await simulate(
      'examples/pr-check-comment.yml',
      'workflow_run',
      {
        workflow_run: {
          id: 900,
          event: 'pull_request',
          conclusion: 'failure',
          head_sha: HEAD,
          head_repository: { fork: true },
          actor: { login: 'someone' },
        },
      },
      gh.url,
      ['--artifacts', artifacts],
    )
    expect(r.conclusion).toBe('success')
    expect(r.jobs.comment?.result).toBe('success')
    expect(r.summaries.join('')).toContain(
      'Harness Watch: run 900 of pull request #7 left no report (nothing was aggregated): nothing to post.',
    )
    expect(gh.seen.filter((s) => !s.startsWith('GET '))).toEqual([])
  }, 60_000)
})

describe('every shipped example workflow parses, converts and passes the permission and secrets check', () => {
  const files = readdirSync(path.join(root, 'examples')).filter((f) => /\.ya?ml$/.test(f))

  it.each(files)(
    'examples/%s',
    async (f) => {
      const r = await execa(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(root, 'scripts', 'simulate-workflow.ts'),
          `examples/${f}`,
          '--check-permissions',
        ],
        { cwd: root, reject: false },
      )
      expect(r.exitCode, r.stderr).toBe(0)
      expect(r.stdout.trim().split('\n')).toHaveLength(1)
      expect(r.stdout).toMatch(/^ok: /)
    },
    60_000,
  )
})

describe('scripts/pr-worktrees.sh: the code under test as hw-base/ and hw-head/', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
      cwd,
      encoding: 'utf8',
    }).trim()

  /** An origin with main (two commits) and refs/pull/7/head one commit ahead of the first; a clone of main. */
  function repos(): { clone: string; first: string; pr: string } {
    const origin = mkdtempSync(path.join(tmpdir(), 'hw-origin-'))
    git(origin, 'init', '-q', '-b', 'main')
    writeFileSync(path.join(origin, 'agent.js'), 'base\n')
    git(origin, 'add', '.')
    git(origin, 'commit', '-qm', 'one')
    const first = git(origin, 'rev-parse', 'HEAD')
    git(origin, 'checkout', '-qb', 'feature')
    writeFileSync(path.join(origin, 'agent.js'), 'pr\n')
    git(origin, 'commit', '-qam', 'pr')
    const pr = git(origin, 'rev-parse', 'HEAD')
    git(origin, 'update-ref', 'refs/pull/7/head', pr)
    git(origin, 'checkout', '-q', 'main')
    writeFileSync(path.join(origin, 'other'), 'x\n')
    git(origin, 'add', '.')
    git(origin, 'commit', '-qm', 'two')
    const clone = mkdtempSync(path.join(tmpdir(), 'hw-clone-'))
    git(clone, 'clone', '-q', origin, '.')
    return { clone, first, pr }
  }
  const run = (cwd: string, env: Record<string, string>) =>
    execa('bash', [path.join(root, 'scripts', 'pr-worktrees.sh')], {
      cwd,
      env: { ...env, BASE_REF: 'main' },
      reject: false,
    })

  it('with pr-head-sha: the approved head into hw-head/, its merge-base into hw-base/; the workspace stays main', async () => {
    const { clone, first, pr } = repos()
    const r = await run(clone, { PR_NUMBER: '7', PR_HEAD_SHA: pr })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(git(path.join(clone, 'hw-head'), 'rev-parse', 'HEAD')).toBe(pr)
    expect(git(path.join(clone, 'hw-base'), 'rev-parse', 'HEAD')).toBe(first)
    expect(git(clone, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main')
  })

  it('a pull request that moved after the approval is refused, and nothing is checked out', async () => {
    const { clone } = repos()
    const r = await run(clone, { PR_NUMBER: '7', PR_HEAD_SHA: 'b'.repeat(40) })
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toMatch(/^::error::pull request #7 moved to [0-9a-f]{40} after b{40} was approved/m)
    expect(readdirSync(clone)).not.toContain('hw-head')
    const bad = await run(clone, { PR_NUMBER: '7', PR_HEAD_SHA: 'main' })
    expect(bad.stdout).toContain('::error::pr-head-sha must be a full 40-character commit SHA')
  })
})
