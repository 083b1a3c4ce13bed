import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { DecisionSchema } from '../../src/detect/schema.js'
import { strictJson } from '../../src/util/json.js'
import { captureOutput } from '../support/capture.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { breachingComparison, confirmedRun } from './support.js'

const io = captureOutput()
let gh: FakeGitHub
const saved = { ...process.env }
beforeEach(async () => {
  gh = await startFakeGitHub({ strictBodies: true })
  Object.assign(process.env, { GITHUB_TOKEN: 't', GITHUB_API_URL: gh.url, GITHUB_REPOSITORY: 'acme/widgets' })
})
afterEach(async () => {
  for (const k of ['GITHUB_TOKEN', 'GITHUB_API_URL', 'GITHUB_REPOSITORY']) {
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  }
  await gh.close()
})

describe('harness-watch publish', () => {
  it('files the tracking issue of a confirmed regression and exits 1 (fail_on_confirmed_regression)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-cli-publish-'))
    await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
    await writeFile(path.join(dir, 'decision.json'), strictJson(DecisionSchema.parse(confirmedRun())))
    const code = await main([
      'publish',
      '--comparison',
      path.join(dir, 'comparison.json'),
      '--report-url',
      'https://example.test/r/1',
    ])
    expect(code).toBe(1)
    expect(io.out).toContain('tracking issue #1 created')
    // One line by default: the 64k body is the job summary, not terminal output.
    expect(io.out.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^confirmed: exp\/a-vs-b: tracking issue #1 created http/),
    ])
    expect(io.err).toMatch(/^check failed: confirmed regression: b vs a −20\.0 pp/)
    expect(gh.issues('acme', 'widgets').map((i) => i.title)).toEqual([
      'Harness Watch: b regressed vs a (exp)',
    ])
    expect(gh.problems()).toEqual([])
  })

  it('--dry-run prints the body and writes nothing (no token needed); --verbose prints the body too', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-cli-publish-'))
    await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
    await writeFile(path.join(dir, 'decision.json'), strictJson(DecisionSchema.parse(confirmedRun())))
    delete process.env.GITHUB_TOKEN
    const code = await main(['publish', '--comparison', path.join(dir, 'comparison.json'), '--dry-run'])
    expect(code).toBe(1)
    expect(io.out).toContain('Confirmed regression')
    expect(io.out).toContain('Dry run: nothing was written to GitHub.')
    expect(io.out.trimEnd().split('\n').at(-1)).toBe(
      'confirmed: nothing written to GitHub; exp/a-vs-b: would search for the marker, then create or update the tracking issue' +
        '; exp (evaluation health): would open no notice (health clean); an open evaluation-health notice would be marked recovered',
    )
    // Without --pr the body shown is the tracking issue's, not the PR comment's.
    expect(io.out).toContain('#### Tracking issue body: `exp/a-vs-b`')
    expect(io.out).toContain('\n<!-- harness-watch:v1 kind=tracking key=exp/a-vs-b -->\n')
    expect(io.out).not.toContain('Harness Watch PR check')
    expect(gh.writes()).toEqual([])

    process.env.GITHUB_TOKEN = 't'
    io.out = ''
    expect(await main(['publish', '--comparison', path.join(dir, 'comparison.json'), '--verbose'])).toBe(1)
    expect(io.out).toContain('Confirmed regression')
    expect(io.out.trimEnd().split('\n').at(-1)).toMatch(/^confirmed: exp\/a-vs-b: tracking issue #1 created/)
  })

  it('--dry-run --pr describes the PR comment and prints its body, not a tracking issue', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hw-cli-publish-'))
    await writeFile(path.join(dir, 'comparison.json'), strictJson(breachingComparison))
    await writeFile(path.join(dir, 'decision.json'), strictJson(DecisionSchema.parse(confirmedRun())))
    delete process.env.GITHUB_TOKEN
    const code = await main([
      'publish',
      '--comparison',
      path.join(dir, 'comparison.json'),
      '--dry-run',
      '--pr',
      '42',
    ])
    expect(code).toBe(1)
    expect(io.out).toContain(
      '- `PR #42`: would search the comments of pull request #42 for the marker `<!-- harness-watch:v1 kind=pr-report key=exp -->`, then update that comment, or create it when there is none',
    )
    expect(io.out).toContain('#### PR comment body: `PR #42`')
    expect(io.out).toContain('### Harness Watch PR check: `exp`')
    expect(io.out).not.toContain('kind=tracking')
    expect(io.out.trimEnd().split('\n').at(-1)).toBe(
      'confirmed: nothing written to GitHub; PR #42: would create or update the Harness Watch comment',
    )
    expect(gh.writes()).toEqual([])
  })
})
