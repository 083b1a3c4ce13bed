// GitHub's load-time permission check of reusable-workflow calls, as scripts/simulate-workflow.ts
// models it (scripts/workflow-permissions.ts): run on every caller in the repository and on the
// README's snippet, and shown to refuse a caller that grants less than a nested job asks for.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  inheritedPermissionErrors,
  nestedPermissionErrors,
  toGrant,
} from '../../scripts/workflow-permissions.js'

const root = path.resolve(import.meta.dirname, '..', '..')

interface Check {
  conclusion: string
  permissionErrors: string[]
  publishErrors: string[]
  secretErrors: string[]
}

async function check(file: string, workspace = root): Promise<Check> {
  const r = await execa(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(root, 'scripts', 'simulate-workflow.ts'),
      file,
      '--action-root',
      root,
      '--workspace',
      workspace,
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
      expect(await check(f)).toEqual({
        conclusion: 'success',
        permissionErrors: [],
        publishErrors: [],
        secretErrors: [],
      })
    },
    60_000,
  )

  it('the README’s snippet starts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-readme-'))
    const file = path.join(dir, 'readme-weekly.yml')
    writeFileSync(file, readmeSnippet())
    expect(await check(file)).toEqual({
      conclusion: 'success',
      permissionErrors: [],
      publishErrors: [],
      secretErrors: [],
    })
  }, 60_000)

  /** A copy of an example with `edit` applied, in a temporary folder. */
  function variant(example: string, edit: (text: string) => string): string {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'hw-perm-')), path.basename(example))
    const text = readFileSync(path.join(root, example), 'utf8')
    const edited = edit(text)
    expect(edited).not.toBe(text)
    writeFileSync(file, edited)
    return file
  }
  const grant = (wf: string): Record<string, string> =>
    (
      parse(readFileSync(path.join(root, wf), 'utf8')) as {
        jobs: Record<string, { permissions: Record<string, string> }>
      }
    ).jobs['harness-watch']?.permissions ?? {}

  it('least privilege by purpose: the weekly caller grants no pull-requests write, the PR caller no issues write', async () => {
    expect(grant('examples/weekly.yml')).toEqual({ contents: 'read', actions: 'read', issues: 'write' })
    expect(grant('examples/pr-check.yml')).toEqual({
      contents: 'read',
      actions: 'read',
      'pull-requests': 'write',
    })
    for (const f of ['examples/weekly.yml', 'examples/pr-check.yml']) {
      expect(await check(f)).toEqual({
        conclusion: 'success',
        permissionErrors: [],
        publishErrors: [],
        secretErrors: [],
      })
    }
  }, 60_000)

  it('a weekly caller without issues: write: one line naming the job, the permission and the caller file', async () => {
    const file = variant('examples/weekly.yml', (t) => t.replace('      issues: write\n', ''))
    const r = await check(file)
    expect(r.conclusion).toBe('failure')
    expect(r.permissionErrors).toEqual([])
    expect(r.publishErrors).toEqual([
      `harness-watch: the nested job 'publish-issue' of 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1' needs 'issues: write' and gets 'issues: none' from this call: grant 'issues: write' under permissions: of job 'harness-watch' in ${file}.`,
    ])
  }, 60_000)

  it('a PR caller without pull-requests: write is told the same for publish-comment', async () => {
    const file = variant('examples/pr-check.yml', (t) => t.replace('      pull-requests: write\n', ''))
    const r = await check(file)
    expect(r.publishErrors).toEqual([
      expect.stringContaining(
        "the nested job 'publish-comment' of 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1' needs 'pull-requests: write' and gets 'pull-requests: none'",
      ),
    ])
  }, 60_000)

  it('a caller whose grant lacks a read a nested job names is refused before any job runs, in GitHub’s words', async () => {
    const file = variant('examples/weekly.yml', (t) =>
      t.replace('      actions: read\n      issues: write', '      issues: write'),
    )
    const r = await check(file)
    expect(r.conclusion).toBe('startup_failure')
    expect(r.permissionErrors).toEqual([
      "harness-watch: Error calling workflow 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1'. The nested job 'aggregate' is requesting 'actions: read', but is only allowed 'actions: none'.",
      "harness-watch: Error calling workflow 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1'. The nested job 'confirm-aggregate' is requesting 'actions: read', but is only allowed 'actions: none'.",
      "harness-watch: Error calling workflow 'your-org/harness-watch/.github/workflows/harness-watch.yml@v1'. The nested job 'history' is requesting 'actions: read', but is only allowed 'actions: none'.",
    ])
  }, 60_000)

  it('secrets line up: each example passes what its manifest reads, and a mismatch is named both ways', async () => {
    // The PR check's manifest where its header says to copy it.
    const ws = mkdtempSync(path.join(tmpdir(), 'hw-secrets-'))
    mkdirSync(path.join(ws, '.github', 'harness-watch'), { recursive: true })
    cpSync(
      path.join(root, 'examples/manifests/pr-canary.yml'),
      path.join(ws, '.github/harness-watch/pr-canary.yml'),
    )
    cpSync(path.join(root, 'manifests'), path.join(ws, 'manifests'), { recursive: true })
    for (const f of ['examples/weekly.yml', 'examples/pr-check.yml']) {
      expect(await check(path.join(root, f), ws), f).toMatchObject({
        conclusion: 'success',
        secretErrors: [],
      })
    }
    // The weekly caller as it was: it passed the provider key the P0 manifest never reads.
    const extra = variant('examples/weekly.yml', (t) =>
      t.replace('    secrets:\n', '    secrets:\n      provider-api-key: ${{ secrets.OPENAI_API_KEY }}\n'),
    )
    expect((await check(extra, ws)).secretErrors).toEqual([
      `unused secret: "provider-api-key" is passed by job 'harness-watch' in ${extra} but the manifest never reads PROVIDER_API_KEY; remove it, or name PROVIDER_API_KEY in the manifest (manifests/p0-swebench-verified.yml)`,
    ])
    const short = variant('examples/weekly.yml', (t) => t.replace(/ {6}litellm-master-key: .*\n/, ''))
    expect((await check(short, ws)).secretErrors).toEqual([
      `missing secret: the manifest reads LITELLM_MASTER_KEY; pass the secret "litellm-master-key" under secrets: of job 'harness-watch' in ${short} (manifests/p0-swebench-verified.yml)`,
    ])
  }, 60_000)

  it('every header comment that shows a caller is valid YAML the simulator accepts, and starts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-header-'))
    let n = 0
    for (const f of readdirSync(path.join(root, '.github/workflows'))) {
      const text = readFileSync(path.join(root, '.github/workflows', f), 'utf8')
      const header = text.slice(0, text.search(/^[a-z]/m))
      // The example: the comment lines indented by three spaces after "#".
      const lines = header.split('\n').filter((l) => l.startsWith('#   '))
      if (lines.length === 0) continue
      const file = path.join(dir, `header-${f}`)
      writeFileSync(file, `${lines.map((l) => l.slice(4)).join('\n')}\n`)
      expect(() => parse(readFileSync(file, 'utf8')), f).not.toThrow()
      expect(await check(file), f).toEqual({
        conclusion: 'success',
        permissionErrors: [],
        publishErrors: [],
        secretErrors: [],
      })
      n++
    }
    expect(n).toBeGreaterThan(0)
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

  it('a job that names no permissions gets the caller’s grant: only a job that runs and lacks what it needs is reported', () => {
    const jobs = [
      { id: 'publish-issue', needs: 'issues: write', runs: true },
      { id: 'publish-comment', needs: 'pull-requests: write', runs: false },
    ]
    expect(
      inheritedPermissionErrors('hw', 'w.yml', { issues: 'write' }, undefined, 'o/r/x.yml@v1', jobs),
    ).toEqual([])
    expect(
      inheritedPermissionErrors('hw', 'w.yml', { issues: 'read' }, undefined, 'o/r/x.yml@v1', jobs),
    ).toEqual([
      "hw: the nested job 'publish-issue' of 'o/r/x.yml@v1' needs 'issues: write' and gets 'issues: read' from this call: grant 'issues: write' under permissions: of job 'hw' in w.yml.",
    ])
    // The workflow-level grant applies when the job names none; write-all covers everything.
    expect(inheritedPermissionErrors('hw', 'w.yml', undefined, 'write-all', 'o/r/x.yml@v1', jobs)).toEqual([])
    expect(() =>
      inheritedPermissionErrors('hw', 'w.yml', {}, undefined, 'r', [
        { id: 'j', needs: 'issues: admin', runs: true },
      ]),
    ).toThrow(/not "<scope>: read\|write"/)
  })
})
