import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LegRecord } from '../../src/records/attempt.js'
import { type RunLegOptions, runLeg } from '../../src/run/leg.js'
import { formatAttemptLine } from '../../src/run/progress.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import type { TelemetryCapture } from '../../src/telemetry/capture.js'
import { AtifTrajectorySchema } from '../../src/trajectory/atif-schema.js'
import { FakeLiteLLM } from '../telemetry/support/fake-litellm.js'
import { type Fixture, manifestAndPlan, readAttempts, readLedger, useRunFixture } from './fixture.js'

// Real parts: the recording proxy in-process on 127.0.0.1 in front of the scripted model, and a
// command harness (node) that sends real chat requests through the attempt's endpoint.

const fx = useRunFixture()
let tel: RunTelemetry
beforeAll(async () => {
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

/** Plan the chat cell (with `env`) over js-add, manifest fields `over` on top, as `<name>.yml`. */
async function planChat(name: string, env: Record<string, string>, over: Record<string, unknown> = {}) {
  const planned = await manifestAndPlan(fx, [cell(fx, env)], { ...only('js-add'), ...over }, `${name}.yml`)
  return { ...planned, name }
}

/** Run a planned chat leg into `out/<name>` with `capture` (run id `run-t` unless `extra` says). */
async function runChat(
  planned: Awaited<ReturnType<typeof planChat>>,
  capture: TelemetryCapture,
  extra: Partial<RunLegOptions> = {},
): Promise<{ leg: LegRecord; dir: string }> {
  const dir = path.join(fx.root, 'out', planned.name)
  const { loaded, plan } = planned
  const leg = await runLeg({
    loaded,
    plan,
    leg: 'chat-s0',
    outDir: dir,
    runId: 'run-t',
    workRoot: fx.work,
    capture,
    ...extra,
  })
  return { leg, dir }
}

describe('runLeg with the recording proxy and the scripted model', () => {
  it('records every proxy request of an attempt in ledger.jsonl and summarises it in the attempt', async () => {
    const lines: string[] = []
    const { leg, dir } = await runChat(
      await planChat('tel-ok', { HW_REQUESTS: '3', HW_THEN: 'fix' }),
      tel.capture,
      {
        onProgress: (e) => {
          if (e.type === 'attempt') lines.push(formatAttemptLine(e.done, e.total, e.record))
        },
      },
    )
    expect(leg.status).toBe('complete')
    const [a] = readAttempts(dir)
    expect(a?.outcome).toBe('resolved')
    expect(a?.telemetry.source).toBe('ledger')
    expect(a?.telemetry.coverage).toBe('complete')
    expect(a?.telemetry.proxy_requests).toBe(3)
    expect(a?.telemetry.rows).toBe(3)
    expect(a?.telemetry.output_tokens).toBeGreaterThan(0)
    expect(a?.telemetry.spend_usd).toBeGreaterThan(0)
    const rows = readLedger(dir)
    expect(rows).toHaveLength(3)
    for (const r of rows) {
      expect(r.attribution).toEqual({
        experiment_id: 'run-fixture',
        run_id: 'run-t',
        cell_id: 'chat',
        instance_id: 'js-add',
        trial: 0,
        attempt: 1,
        round: 0,
      })
      expect(r.status).toBe('success')
    }
    expect(lines[0]).toMatch(
      /^\[1\/1\] chat js-add trial 0 attempt 1: resolved \(clean\) \d+\.\d+s, 3 requests, \$\d+\.\d{4}$/,
    )
  })

  it("writes each attempt's trajectory as ATIF v1.7 beside it, final metrics from the proxy's ledger", async () => {
    const { dir } = await runChat(
      await planChat('tel-atif', { HW_REQUESTS: '2', HW_THEN: 'fix' }),
      tel.capture,
    )
    const [a] = readAttempts(dir)
    expect(a?.atif).toBe('trajectory.atif.json')
    const file = path.join(dir, a!.logs_dir, a!.atif!)
    const doc = JSON.parse(readFileSync(file, 'utf8'))
    expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true)
    expect(doc.schema_version).toBe('ATIF-v1.7')
    expect(doc.session_id).toBe('chat/js-add/0-1')
    expect(doc.agent).toMatchObject({ name: 'command', version: '1.0.0' })
    const rows = readLedger(dir)
    expect(rows).toHaveLength(2)
    // One agent step per proxy request, each with the ledger's tokens; the totals are the ledger's sums.
    expect(doc.steps).toHaveLength(2)
    expect(doc.steps.map((s: { metrics: { prompt_tokens: number } }) => s.metrics.prompt_tokens)).toEqual(
      rows.map((r) => r.tokens.input_total),
    )
    const sum = (f: (r: (typeof rows)[number]) => number | null) => rows.reduce((t, r) => t + (f(r) ?? 0), 0)
    expect(doc.final_metrics).toMatchObject({
      total_prompt_tokens: sum((r) => r.tokens.input_total),
      total_completion_tokens: sum((r) => r.tokens.output),
      total_steps: 2,
      extra: { source: 'proxy ledger', requests: 2 },
    })
    expect(doc.final_metrics.total_cost_usd).toBeCloseTo(
      sum((r) => r.spend_usd),
      12,
    )
  })

  it('F06: a budget stop with an empty deliverable is infra_error (budget_exceeded), never unresolved', async () => {
    // The harness takes the refusals for success: exit 0, nothing changed (as in F06).
    const planned = await planChat(
      'tel-budget',
      { HW_REQUESTS: '4', HW_THEN: 'nothing', HW_EXIT: '0' },
      { budgets: { timeout_s: 20, max_requests: 2 }, retries: { max: 1, on: ['infra'], backoff_s: 0 } },
    )
    const { dir } = await runChat(planned, tel.capture)
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
    const planned = await planChat(
      'tel-budget-work',
      { HW_REQUESTS: '3', HW_THEN: 'fix', HW_EXIT: '1' },
      { budgets: { timeout_s: 20, max_requests: 1 } },
    )
    const { dir } = await runChat(planned, tel.capture)
    const [a] = readAttempts(dir)
    expect(a?.exit.class).toBe('budget')
    expect(a?.deliverable.bytes).toBeGreaterThan(0)
    expect(a?.outcome).toBe('resolved')
    expect(a?.outcome_reason).toBeNull()
  })

  it('an attempt with no request at the proxy is coverage missing (F14 bypass flag), never zero', async () => {
    const { dir } = await runChat(
      await planChat('tel-none', { HW_REQUESTS: '0', HW_THEN: 'fix' }),
      tel.capture,
    )
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
    const { dir } = await runChat(await planChat('tel-broken', { HW_REQUESTS: '2', HW_THEN: 'fix' }), broken)
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
    const planned = await planChat('tel-litellm', { HW_REQUESTS: '2', HW_THEN: 'fix' }, litellm)
    const { loaded } = planned
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
      const { dir } = await runChat(planned, run.capture, { runId: 'run-l' })
      const [a] = readAttempts(dir)
      expect(a?.outcome).toBe('resolved')
      expect(a?.telemetry.source).toBe('litellm')
      expect(a?.telemetry.proxy_requests).toBe(2)
      expect(a?.telemetry.rows).toBe(2)
      const rows = readLedger(dir)
      expect(rows).toHaveLength(2)
      expect(rows.map((r) => r.source)).toEqual(['litellm', 'litellm'])
    } finally {
      await run.close()
      await fake.close()
    }
  })
})

describe('one bad LiteLLM row does not sink the leg (issue 16 point 2)', () => {
  it('negative duration, 1e20 tokens, negative spend in one row: the leg completes, the row is an input error, its neighbours count', async () => {
    const fake = await new FakeLiteLLM().start()
    const litellm = {
      panel: { source: 'tasks', path: './panel', instances: ['js-add', 'txt-greet'] },
      telemetry: { source: 'litellm', litellm: { settle_s: 0.1, max_wait_s: 5 } },
      model: { id: 'gpt-test', provider: 'openai', api: 'chat', base_url_env: 'LITELLM_BASE_URL' },
    }
    const planned = await planChat('tel-litellm-bad-row', { HW_REQUESTS: '2', HW_THEN: 'fix' }, litellm)
    // When the first attempt's rows are read, its second row is forged; the second attempt's rows
    // (written later) stay as LiteLLM logged them.
    let forgedId: unknown = null
    fake.onSpendLogsPage = () => {
      if (forgedId !== null) return
      const bad = fake.rows[1]?.row
      if (!bad) return
      forgedId = bad.request_id
      bad.request_duration_ms = -5
      bad.completion_tokens = 1e20
      bad.spend = -0.5
    }
    const run = await openRunTelemetry({
      manifest: planned.loaded.manifest,
      tasksDir: null,
      runId: 'run-bad',
      journalFile: path.join(fx.root, 'litellm-bad-journal.jsonl'),
      env: { LITELLM_BASE_URL: fake.origin, LITELLM_MASTER_KEY: fake.masterKey },
    })
    try {
      const { leg, dir } = await runChat(planned, run.capture, { runId: 'run-bad' })
      expect(typeof forgedId).toBe('string')
      // The leg completes: both attempts recorded and graded, no leg error.
      expect(leg).toMatchObject({ status: 'complete', error: null, attempts: 2 })
      const attempts = readAttempts(dir)
      expect(attempts.map((a) => [a.instance_id, a.outcome])).toEqual([
        ['js-add', 'resolved'],
        ['txt-greet', 'resolved'],
      ])
      const [first, second] = attempts
      // The forged row is an input error of that row: named by request id, field, LiteLLM column and value.
      expect(first!.telemetry).toMatchObject({ source: 'litellm', rows: 2, coverage: 'partial' })
      expect(first!.telemetry.flags).toContain('input_error')
      const reason = first!.telemetry.reason ?? ''
      expect(reason).toContain(`input error in LiteLLM spend logs: row "${forgedId}"`)
      expect(reason).toContain('duration_ms (request_duration_ms) must be a duration from 0 to')
      expect(reason).toContain('(got -5)')
      expect(reason).toContain('tokens.output (completion_tokens) must be a whole number of tokens')
      expect(reason).toContain('spend_logged_usd (spend) must be a spend from 0 to')
      // Its neighbour in the same attempt still counts: the attempt's output tokens are the good row's.
      const rows = readLedger(dir)
      expect(rows).toHaveLength(4)
      const forged = rows.find((r) => r.request_id === forgedId)!
      expect(forged).toMatchObject({ duration_ms: null, spend_logged_usd: null })
      expect(forged.tokens.output).toBeNull()
      expect(forged.flags).toContain('input_error')
      const sameAttempt = rows.filter(
        (r) => r.attribution?.instance_id === 'js-add' && r.request_id !== forgedId,
      )
      expect(sameAttempt).toHaveLength(1)
      expect(sameAttempt[0]!.tokens.output).toBeGreaterThan(0)
      expect(first!.telemetry.output_tokens).toBe(sameAttempt[0]!.tokens.output)
      // The next attempt is untouched.
      expect(second!.telemetry).toMatchObject({ source: 'litellm', rows: 2, coverage: 'complete' })
      expect(second!.telemetry.flags).not.toContain('input_error')
      for (const r of rows.filter((x) => x.request_id !== forgedId))
        expect(r.flags).not.toContain('input_error')
    } finally {
      await run.close()
      await fake.close()
    }
  }, 60_000)
})
