// A simulation is bound to its test: when the test times out or is cancelled, the whole simulated
// run stops (test/workflows/support.ts simulateWorkflow). Before, a run that outlived its test's
// time under load kept going — legs, aggregate, publish — into the fake GitHub the file's next tests
// share, and one slow run failed three tests of simulate.test.ts.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { actionCheckout, built, root, simulateWorkflow } from './support.js'

describe.skipIf(!built)('simulateWorkflow: bound to its test', () => {
  it('an abort once the plan job finished stops every later job: no leg artifact appears afterwards', async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), 'hw-bound-caller-'))
    mkdirSync(path.join(workspace, 'test', 'fixtures'), { recursive: true })
    cpSync(
      path.join(root, 'test', 'fixtures', 'workflow'),
      path.join(workspace, 'test', 'fixtures', 'workflow'),
      {
        recursive: true,
      },
    )
    const artifacts = mkdtempSync(path.join(tmpdir(), 'hw-bound-artifacts-'))
    const envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-bound-env-')), '.env')
    writeFileSync(envFile, 'GITHUB_REPOSITORY=acme/widgets\nGITHUB_TOKEN=\n')
    const ac = new AbortController()
    const run = simulateWorkflow(
      [
        '.github/workflows/harness-watch.yml',
        '--workspace',
        workspace,
        '--action-root',
        actionCheckout(),
        '--env-file',
        envFile,
        '--artifacts',
        artifacts,
        '--run-id',
        '7',
        '--input',
        'manifest=test/fixtures/workflow/canary.yml',
        '--json',
      ],
      ac.signal,
    )
    const store = path.join(artifacts, '7')
    const listing = () => (existsSync(store) ? readdirSync(store).sort() : [])
    // Wait for the plan job's artifact: the legs come next.
    while (!listing().some((a) => a.startsWith('harness-watch-plan-'))) await sleep(200)
    ac.abort()
    const r = await run
    expect(r.exitCode ?? r.signal).toBe('SIGKILL')
    const atAbort = listing()
    await sleep(8000)
    expect(listing()).toEqual(atAbort)
    expect(atAbort.filter((a) => a.startsWith('hw-canary-'))).toEqual([])
  }, 300_000)
})
