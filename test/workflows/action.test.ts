// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are GitHub Actions expressions
// The bundled action's aggregate→detect and publish steps, run as the runner runs them.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { strictJson } from '../../src/util/json.js'
import { makeComparison, policy, ref, rows } from '../detect/fixtures.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { actionCheckout, built, root, runAction } from './support.js'

describe.skipIf(!built)('the bundled action: detection and publishing steps', () => {
  let action: string
  let gh: FakeGitHub
  beforeAll(async () => {
    action = actionCheckout()
    gh = await startFakeGitHub({ strictBodies: true })
  })
  afterAll(() => gh.close())

  it('F11: aggregate with legs planned and none recorded fails the step, status inconclusive', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'hw-ws-'))
    const loaded = await loadManifest(path.join(root, 'test', 'fixtures', 'workflow', 'canary.yml'))
    const plan = buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir))
    writeFileSync(path.join(ws, 'plan.json'), strictJson(plan))
    mkdirSync(path.join(ws, 'legs'))
    const r = await runAction(action, ws, {
      command: 'aggregate',
      plan: 'plan.json',
      artifacts: 'legs',
      out: 'hw-out',
    })
    expect(r.exitCode).toBe(1)
    expect(r.outputs).toMatchObject({
      status: 'inconclusive',
      breach: 'false',
      'comparison-path': 'hw-out/comparison.json',
    })
    expect(r.annotations.map((a) => `${a.kind}: ${a.message}`)).toContainEqual(
      'error: 9 blocks were planned but no attempt was recorded: every leg failed or uploaded nothing',
    )
  }, 120_000)

  it('publish: pr-number (INPUT_PR-NUMBER, hyphen kept) posts the PR comment; outputs comment-id', async () => {
    const ws = mkdtempSync(path.join(tmpdir(), 'hw-ws-'))
    const c = makeComparison({
      cells: ['a', 'b'],
      rows: rows(30, (i) => ({ a: { o: 'r' }, b: i < 6 ? { o: 'u' } : { o: 'r' } })),
    })
    mkdirSync(path.join(ws, 'out'))
    writeFileSync(path.join(ws, 'out', 'comparison.json'), strictJson(c))
    writeFileSync(
      path.join(ws, 'out', 'decision.json'),
      strictJson(DecisionSchema.parse(detect({ current: ref(c), policy, quarantine: [] }))),
    )
    const pr = gh.seedIssue('acme', 'widgets', { title: 'PR', pr: true })
    const env = { GITHUB_API_URL: gh.url, GITHUB_REPOSITORY: 'acme/widgets', GITHUB_TOKEN: 't' }
    const r = await runAction(
      action,
      ws,
      { command: 'publish', comparison: 'out/comparison.json', token: 't', 'pr-number': String(pr.number) },
      env,
    )
    expect(r.exitCode).toBe(0)
    const comments = gh.comments('acme', 'widgets', pr.number)
    expect(comments).toHaveLength(1)
    expect(comments[0]!.body).toMatch(/Unconfirmed; rerun requested/)
    expect(r.outputs).toEqual({ 'issue-number': '', 'comment-id': String(comments[0]!.id) })
    expect(r.summary).toMatch(/PR comment created/)

    // dry-run (a fork's read-only run with publish: false): nothing written, the summary says what would be.
    const before = gh.writes().length
    const dry = await runAction(
      action,
      ws,
      {
        command: 'publish',
        comparison: 'out/comparison.json',
        'pr-number': String(pr.number),
        'dry-run': 'true',
      },
      env,
    )
    expect(dry.exitCode).toBe(0)
    expect(dry.summary).toMatch(/Dry run: nothing was written to GitHub/)
    expect(gh.writes().length).toBe(before)

    // The token input defaults to the workflow token: publishing without naming it edits the comment.
    const byDefault = await runAction(
      action,
      ws,
      { command: 'publish', comparison: 'out/comparison.json', 'pr-number': String(pr.number) },
      env,
    )
    expect(byDefault.exitCode).toBe(0)
    expect(gh.writes().slice(before)).toEqual([
      `PATCH /repos/acme/widgets/issues/comments/${comments[0]!.id}`,
    ])

    // An empty token is a one-line error naming what to set and the calling workflow file.
    const empty = await runAction(
      action,
      ws,
      { command: 'publish', comparison: 'out/comparison.json', 'pr-number': String(pr.number), token: '' },
      { ...env, GITHUB_WORKFLOW_REF: 'acme/widgets/.github/workflows/pr-check.yml@refs/pull/1/merge' },
    )
    expect(empty.exitCode).toBe(1)
    expect(empty.annotations.filter((a) => a.kind === 'error').map((a) => a.message)).toEqual([
      'the token input is empty: pass token: ${{ github.token }} (or a token with issues/pull-requests write) to the publish step, or set dry-run: true; change .github/workflows/pr-check.yml',
    ])
    expect(gh.problems()).toEqual([])
  }, 120_000)
})
