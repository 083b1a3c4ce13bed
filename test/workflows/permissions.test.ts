// GitHub's load-time permission check of reusable-workflow calls, as scripts/simulate-workflow.ts
// models it (scripts/workflow-permissions.ts): run on every caller in the repository and on the
// README's snippet, and shown to refuse a caller that grants less than a nested job asks for.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { nestedPermissionErrors, toGrant } from '../../scripts/workflow-permissions.js'

const root = path.resolve(import.meta.dirname, '..', '..')

async function check(file: string): Promise<{ conclusion: string; permissionErrors: string[] }> {
  const r = await execa(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'scripts', 'simulate-workflow.ts'),
      file,
      '--action-root',
      root,
      '--check-permissions',
      '--json',
    ],
    { cwd: root, reject: false },
  )
  const last = r.stdout.trim().split('\n').at(-1) ?? ''
  if (!last.startsWith('{')) throw new Error(`simulate-workflow failed: ${r.stderr}`)
  return JSON.parse(last)
}

/** Workflow files of the repository that call a reusable workflow (`jobs.<id>.uses`). */
function callers(): string[] {
  const out: string[] = []
  for (const dir of ['.github/workflows', 'examples']) {
    for (const f of readdirSync(path.join(root, dir))) {
      if (!/\.ya?ml$/.test(f)) continue
      const wf = parse(readFileSync(path.join(root, dir, f), 'utf8')) as {
        jobs?: Record<string, { uses?: string }>
      }
      if (Object.values(wf?.jobs ?? {}).some((j) => typeof j.uses === 'string')) out.push(`${dir}/${f}`)
    }
  }
  return out
}

/** The README's workflow snippet that calls the reusable workflow, with `<owner>` filled in. */
function readmeSnippet(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string)
  const caller = blocks.find((b) => /uses: <owner>\/harness-watch\/\.github\/workflows\//.test(b))
  if (!caller) throw new Error('README.md has no yaml snippet calling the reusable workflow')
  return caller.replaceAll('<owner>', 'your-org')
}

describe('GitHub’s load-time permission check on reusable-workflow calls', () => {
  it('finds the callers: the examples and CI', () => {
    expect(callers()).toEqual(
      expect.arrayContaining(['.github/workflows/ci.yml', 'examples/pr-check.yml', 'examples/weekly.yml']),
    )
  })

  it.each(callers())(
    '%s starts: every nested job asks for no more than the call grants',
    async (f) => {
      expect(await check(f)).toEqual({ conclusion: 'success', permissionErrors: [] })
    },
    60_000,
  )

  it('the README’s snippet starts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-readme-'))
    const file = path.join(dir, 'readme-weekly.yml')
    writeFileSync(file, readmeSnippet())
    expect(await check(file)).toEqual({ conclusion: 'success', permissionErrors: [] })
  }, 60_000)

  it('a caller that grants too little is refused before any job runs, in GitHub’s words', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-perm-'))
    const file = path.join(dir, 'weekly.yml')
    // The weekly caller as it was before: issues: write only.
    writeFileSync(
      file,
      readFileSync(path.join(root, 'examples', 'weekly.yml'), 'utf8').replace(
        '      pull-requests: write\n',
        '',
      ),
    )
    const r = await check(file)
    expect(r.conclusion).toBe('startup_failure')
    expect(r.permissionErrors).toEqual([
      "harness-watch: Error calling workflow 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1'. The nested job 'publish-comment' is requesting 'pull-requests: write', but is only allowed 'pull-requests: none'.",
    ])
  }, 60_000)
})

describe('the permission model (pure)', () => {
  const called = {
    ref: 'o/r/.github/workflows/x.yml@v1',
    permissions: { contents: 'read' },
    jobs: [
      { id: 'a', permissions: undefined },
      { id: 'b', permissions: { contents: 'read', issues: 'write' } },
    ],
  }

  it('a job without permissions inherits the called workflow’s; naming a scope sets the rest to none', () => {
    expect(toGrant({ issues: 'write' })).toMatchObject({ issues: 'write', contents: 'none' })
    expect(toGrant('read-all')).toMatchObject({ issues: 'read', contents: 'read' })
    expect(toGrant({})).toMatchObject({ contents: 'none' })
    expect(toGrant(undefined)).toBeNull()
    expect(() => toGrant({ issues: 'admin' })).toThrow(/issues: admin/)
  })

  it('the caller job’s grant wins over its workflow’s; without either the restricted default applies', () => {
    expect(nestedPermissionErrors('j', { contents: 'read', issues: 'write' }, {}, called)).toEqual([])
    expect(nestedPermissionErrors('j', undefined, { contents: 'read', issues: 'write' }, called)).toEqual([])
    expect(nestedPermissionErrors('j', undefined, undefined, called)).toEqual([
      "j: Error calling workflow 'o/r/.github/workflows/x.yml@v1'. The nested job 'b' is requesting 'issues: write', but is only allowed 'issues: none'.",
    ])
    expect(nestedPermissionErrors('j', 'write-all', undefined, called)).toEqual([])
    // read is not write.
    expect(nestedPermissionErrors('j', { contents: 'read', issues: 'read' }, undefined, called)).toHaveLength(
      1,
    )
  })
})
