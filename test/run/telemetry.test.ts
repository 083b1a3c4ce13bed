import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runLeg } from '../../src/run/leg.js'
import { formatAttemptLine } from '../../src/run/progress.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import type { TelemetryCapture } from '../../src/telemetry/capture.js'
import { LedgerRowSchema } from '../../src/telemetry/ledger.js'
import { FakeLiteLLM } from '../telemetry/support/fake-litellm.js'
import { type Fixture, makeFixture, manifestAndPlan, readAttempts, removeFixture } from './fixture.js'

// Real parts: the recording proxy in-process on 127.0.0.1 in front of the scripted model, and a
// command harness (node) that sends real chat requests through the attempt's endpoint.

let fx: Fixture
let tel: RunTelemetry
beforeAll(async () => {
  fx = makeFixture()
  const { loaded } = await manifestAndPlan(fx, [cell(fx, {})], {}, 'telemetry-open.yml')
  tel = await openRunTelemetry({
    manifest: loaded.manifest,
    tasksDir: fx.panel,
    runId: 'run-t',
    journalFile: path.join(fx.root, 'journal.jsonl'),
  })
})
afterAll(async () => {
  await tel?.close()
  removeFixture(fx)
})

/** The chat harness cell with FIXES pointing at the fixture. */
function cell(fxr: Fixture, env: Record<string, string>, id = 'chat'): Record<string, unknown> {
  return {
    id,
    harness: 'command',
    version: '1.0.0',
    config: { command: `node ${fxr.scripts}/chat.mjs`, env: { FIXES: fxr.fixes, ...env } },
  }
}

const only = (id: string) => ({ panel: { source: 'tasks', path: './panel', instances: [id] } })

describe('runLeg with the recording proxy and the scripted model', () => {
  it('records every proxy request of an attempt in ledger.jsonl and summarises it in the attempt', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [cell(fx, { HW_REQUESTS: '3', HW_THEN: 'fix' })],
      only('js-add'),
      'tel-ok.yml',
    )
    const dir = path.join(fx.root, 'out', 'tel-ok')
    const lines: string[] = []
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'chat-s0',
      outDir: dir,
      runId: 'run-t',
      workRoot: fx.work,
      capture: tel.capture,
      onProgress: (e) => {
        if (e.type === 'attempt') lines.push(formatAttemptLine(e.done, e.total, e.record))
      },
    })
    expect(leg.status).toBe('complete')
    const [a] = readAttempts(dir)
    expect(a?.outcome).toBe('resolved')
    expect(a?.telemetry.source).toBe('ledger')
    expect(a?.telemetry.coverage).toBe('complete')
    expect(a?.telemetry.proxy_requests).toBe(3)
    expect(a?.telemetry.rows).toBe(3)
    expect(a?.telemetry.output_tokens).toBeGreaterThan(0)
    expect(a?.telemetry.spend_usd).toBeGreaterThan(0)
    const rows = readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
    expect(rows).toHaveLength(3)
    for (const r of rows) {
      expect(r.attribution).toEqual({
        experiment_id: 'run-fixture',
        run_id: 'run-t',
        cell_id: 'chat',
        instance_id: 'js-add',
        trial: 0,
        attempt: 1,
      })
      expect(r.status).toBe('success')
    }
    expect(lines[0]).toMatch(
      /^\[1\/1\] chat js-add trial 0 attempt 1: resolved \(clean\) \d+\.\d+s, 3 requests, \$\d+\.\d{4}$/,
    )
  })

  it('F06: a budget stop with an empty deliverable is infra_error (budget_exceeded), never unresolved', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      // The harness takes the refusals for success: exit 0, nothing changed (as in F06).
      [cell(fx, { HW_REQUESTS: '4', HW_THEN: 'nothing', HW_EXIT: '0' })],
      {
        ...only('js-add'),
        budgets: { timeout_s: 20, max_requests: 2 },
        retries: { max: 1, on: ['infra'], backoff_s: 0 },
      },
      'tel-budget.yml',
    )
    const dir = path.join(fx.root, 'out', 'tel-budget')
    await runLeg({
      loaded,
      plan,
      leg: 'chat-s0',
      outDir: dir,
      runId: 'run-t',
      workRoot: fx.work,
      capture: tel.capture,
    })
    const attempts = readAttempts(dir)
    // budget is not in retries.on: one attempt.
    expect(attempts).toHaveLength(1)
    const [a] = attempts
    expect(a?.exit.class).toBe('budget')
    expect(a?.exit.code).toBe(0)
    expect(a?.telemetry.budget_exceeded).toBe(true)
    expect(a?.telemetry.failed_rows).toBe(2)
    expect(a?.deliverable.bytes).toBe(0)
    expect(a?.verifier.status).toBe('fail')
    expect(a?.outcome).toBe('infra_error')
    expect(a?.outcome_reason).toBe('budget_exceeded')
  })

  it('a budget stop after real work keeps the verifier verdict', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [cell(fx, { HW_REQUESTS: '3', HW_THEN: 'fix', HW_EXIT: '1' })],
      { ...only('js-add'), budgets: { timeout_s: 20, max_requests: 1 } },
      'tel-budget-work.yml',
    )
    const dir = path.join(fx.root, 'out', 'tel-budget-work')
    await runLeg({
      loaded,
      plan,
      leg: 'chat-s0',
      outDir: dir,
      runId: 'run-t',
      workRoot: fx.work,
      capture: tel.capture,
    })
    const [a] = readAttempts(dir)
    expect(a?.exit.class).toBe('budget')
    expect(a?.deliverable.bytes).toBeGreaterThan(0)
    expect(a?.outcome).toBe('resolved')
    expect(a?.outcome_reason).toBeNull()
  })

  it('an attempt with no request at the proxy is coverage missing (F14 bypass flag), never zero', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [cell(fx, { HW_REQUESTS: '0', HW_THEN: 'fix' })],
      only('js-add'),
      'tel-none.yml',
    )
    const dir = path.join(fx.root, 'out', 'tel-none')
    await runLeg({
      loaded,
      plan,
      leg: 'chat-s0',
      outDir: dir,
      runId: 'run-t',
      workRoot: fx.work,
      capture: tel.capture,
    })
    const [a] = readAttempts(dir)
    expect(a?.telemetry.coverage).toBe('missing')
    expect(a?.telemetry.proxy_requests).toBeNull()
    expect(a?.telemetry.spend_usd).toBeNull()
    expect(a?.telemetry.flags).toContain('telemetry_bypass_suspected')
    expect(a?.outcome).toBe('resolved')
  })

  it('a capture that fails to finish gives coverage missing with the reason, never zero', async () => {
    const broken: TelemetryCapture = {
      source: 'ledger',
      async begin(attribution, budget) {
        const t = await tel.capture.begin(attribution, budget)
        return {
          endpoint: t.endpoint,
          finish: async () => {
            await t.finish()
            throw new Error('spend logs unavailable')
          },
        }
      },
      close: async () => {},
    }
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [cell(fx, { HW_REQUESTS: '2', HW_THEN: 'fix' })],
      only('js-add'),
      'tel-broken.yml',
    )
    const dir = path.join(fx.root, 'out', 'tel-broken')
    await runLeg({
      loaded,
      plan,
      leg: 'chat-s0',
      outDir: dir,
      runId: 'run-t',
      workRoot: fx.work,
      capture: broken,
    })
    const [a] = readAttempts(dir)
    expect(a?.telemetry.coverage).toBe('missing')
    expect(a?.telemetry.reason).toMatch(/telemetry capture failed: spend logs unavailable/)
    expect(a?.telemetry.proxy_requests).toBeNull()
    expect(a?.telemetry.input_tokens).toBeNull()
    expect(a?.outcome).toBe('resolved')
    expect(readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8')).toBe('')
  })
})

describe('runLeg with LiteLLM spend logs (a local fake LiteLLM, following its documented contract)', () => {
  it('captures each attempt by its virtual key and records the rows in the leg', async () => {
    const fake = await new FakeLiteLLM().start()
    const litellm = {
      telemetry: {
        source: 'litellm',
        litellm: { settle_s: 0.1, max_wait_s: 5 },
      },
      model: { id: 'gpt-test', provider: 'openai', api: 'chat', base_url_env: 'LITELLM_BASE_URL' },
    }
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [cell(fx, { HW_REQUESTS: '2', HW_THEN: 'fix' })],
      { ...only('js-add'), ...litellm },
      'tel-litellm.yml',
    )
    await expect(
      openRunTelemetry({
        manifest: loaded.manifest,
        tasksDir: null,
        runId: 'r',
        journalFile: '/dev/null',
        env: {},
      }),
    ).rejects.toMatchObject({ code: 'model_route_invalid' })
    const run = await openRunTelemetry({
      manifest: loaded.manifest,
      tasksDir: null,
      runId: 'run-l',
      journalFile: path.join(fx.root, 'litellm-journal.jsonl'),
      env: { LITELLM_BASE_URL: fake.origin, LITELLM_MASTER_KEY: fake.masterKey },
    })
    try {
      const dir = path.join(fx.root, 'out', 'tel-litellm')
      await runLeg({
        loaded,
        plan,
        leg: 'chat-s0',
        outDir: dir,
        runId: 'run-l',
        workRoot: fx.work,
        capture: run.capture,
      })
      const [a] = readAttempts(dir)
      expect(a?.outcome).toBe('resolved')
      expect(a?.telemetry.source).toBe('litellm')
      expect(a?.telemetry.proxy_requests).toBe(2)
      expect(a?.telemetry.rows).toBe(2)
      const rows = readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8').split('\n').filter(Boolean)
      expect(rows).toHaveLength(2)
      expect(rows.map((l) => LedgerRowSchema.parse(JSON.parse(l)).source)).toEqual(['litellm', 'litellm'])
    } finally {
      await run.close()
      await fake.close()
    }
  })
})
