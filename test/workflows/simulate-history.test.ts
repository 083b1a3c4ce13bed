// The weekly history across two scheduled runs of harness-watch.yml, simulated offline
// (scripts/simulate-workflow.ts): run 201 starts the series, run 202 (previous-run-id 201) downloads
// 201's history artifact and adds itself. The history step runs the CLI from source (HW_CLI), so the
// job is exercised whatever dist/ holds.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HistorySchema } from '../../src/detect/history.js'
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github.js'
import { actionCheckout, built, dist, root, simulateWorkflow } from './support.js'

// The bundle under test links the history from the reports (built from this source; a dist/ built
// before that feature cannot, and the report check below says so instead of failing on it).
const bundleLinksHistory =
  built && readFileSync(path.join(dist, 'index.js'), 'utf8').includes('history-artifact')
if (built && !bundleLinksHistory)
  console.warn(
    'skipping the report-link check: dist/ predates the history link in the reports (npm run build)',
  )

interface SimResult {
  conclusion: 'success' | 'failure'
  jobs: Record<string, { result: string; outputs: Record<string, string> }>
  steps: {
    job: string
    step: string
    result: string
    outputs?: Record<string, string>
    with?: Record<string, string>
  }[]
}

describe.skipIf(!built)('harness-watch.yml: the weekly history carried from run to run', () => {
  let gh: FakeGitHub
  let actionRoot: string
  let workspace: string
  let envFile: string
  let artifacts: string

  beforeAll(async () => {
    gh = await startFakeGitHub({ strictBodies: true })
    actionRoot = actionCheckout()
    workspace = mkdtempSync(path.join(tmpdir(), 'hw-simh-caller-'))
    mkdirSync(path.join(workspace, 'test', 'fixtures'), { recursive: true })
    cpSync(
      path.join(root, 'test', 'fixtures', 'workflow'),
      path.join(workspace, 'test', 'fixtures', 'workflow'),
      { recursive: true },
    )
    envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-simh-env-')), '.env')
    writeFileSync(
      envFile,
      [
        `GITHUB_API_URL=${gh.url}`,
        'GITHUB_REPOSITORY=acme/widgets',
        'GITHUB_TOKEN=test-token',
        `HW_CLI=${path.join(root, 'node_modules', '.bin', 'tsx')} ${path.join(root, 'src', 'cli', 'entry.ts')}`,
      ].join('\n'),
    )
    artifacts = mkdtempSync(path.join(tmpdir(), 'hw-simh-artifacts-'))
  })
  afterAll(() => gh.close())

  async function simulate(runId: string, inputs: Record<string, string>, signal: AbortSignal) {
    const r = await simulateWorkflow(
      [
        '.github/workflows/harness-watch.yml',
        ...['--workspace', workspace, '--action-root', actionRoot, '--env-file', envFile],
        ...['--artifacts', artifacts, '--run-id', runId, '--event-name', 'schedule', '--json'],
        ...Object.entries(inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
      ],
      signal,
    )
    const last = r.stdout.trim().split('\n').at(-1) ?? ''
    if (!last.startsWith('{')) throw new Error(`simulation crashed:\n${r.stderr.slice(-4000)}`)
    const out = JSON.parse(last) as SimResult
    if (out.conclusion !== 'success') console.error(r.stderr.slice(-6000))
    return out
  }

  const artifact = (run: string) => path.join(artifacts, run, 'harness-watch-history-canary-c7cb7540')

  it('run 201 starts the series; run 202 adds itself to the history it downloads from 201', async ({
    signal,
  }) => {
    const manifest = 'test/fixtures/workflow/canary.yml'
    const r1 = await simulate('201', { manifest, 'max-parallel': '4' }, signal)
    expect(r1.conclusion).toBe('success')
    expect(r1.jobs.history?.result).toBe('success')
    expect(readdirSync(path.join(artifact('201'), 'runs'))).toEqual(['201-1-r0'])
    expect(r1.jobs.history?.outputs.url).toMatch(
      /^https:\/\/github\.com\/acme\/widgets\/actions\/runs\/201\/artifacts\/\d+$/,
    )
    // The aggregate steps (first run and confirmation) link the history before it exists: this run's
    // page, under which the history job's artifact-url lies, and the artifact's name.
    for (const [job, step] of [
      ['aggregate', 'aggregate'],
      ['confirm-aggregate', 'confirm'],
    ]) {
      const s = r1.steps.find((x) => x.job === job && x.step === step)
      expect(s?.with).toMatchObject({
        command: 'aggregate',
        'history-url': 'https://github.com/acme/widgets/actions/runs/201',
        'history-artifact': 'harness-watch-history-canary-c7cb7540',
      })
      expect(r1.jobs.history?.outputs.url?.startsWith(`${s!.with!['history-url']}/artifacts/`)).toBe(true)
      expect(existsSync(artifact('201'))).toBe(true)
      expect(path.basename(artifact('201'))).toBe(s!.with!['history-artifact'])
    }

    const r2 = await simulate('202', { manifest, 'max-parallel': '4', 'previous-run-id': '201' }, signal)
    expect(r2.conclusion).toBe('success')
    expect(r2.jobs.history?.result).toBe('success')
    expect(readdirSync(path.join(artifact('202'), 'runs')).sort()).toEqual(['201-1-r0', '202-1-r0'])
    const h = HistorySchema.parse(
      JSON.parse(readFileSync(path.join(artifact('202'), 'history.json'), 'utf8')),
    )
    expect(h.runs.map((x) => x.run_id)).toEqual(['201-1', '202-1'])
    // each run's final decision is the confirmation's
    expect(h.runs.map((x) => x.decision?.status)).toEqual(['confirmed', 'confirmed'])
    expect(h.runs[1]!.confirmed_breaches.length).toBeGreaterThan(0)
    expect(existsSync(path.join(artifact('202'), 'history.html'))).toBe(true)
    expect(gh.problems()).toEqual([])
  }, 900_000)

  it.skipIf(!bundleLinksHistory)(
    "run 201's reports (first run and confirmation) link the history once, where the history job put it",
    () => {
      const run = 'https://github.com/acme/widgets/actions/runs/201'
      for (const name of [
        'harness-watch-report-canary-c7cb7540',
        'harness-watch-confirmation-canary-c7cb7540',
      ]) {
        const dir = path.join(artifacts, '201', name)
        const md = readFileSync(path.join(dir, 'report.md'), 'utf8')
        expect(md.split(`[weekly history](${run})`).length - 1, name).toBe(1)
        expect(md).toContain('`harness-watch-history-canary-c7cb7540`')
        const html = readFileSync(path.join(dir, 'report.html'), 'utf8')
        expect(html.split(`href="${run}"`).length - 1, name).toBe(1)
      }
    },
  )
})
