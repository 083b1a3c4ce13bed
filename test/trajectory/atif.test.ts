import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import type { LedgerRow } from '../../src/records/ledger.js'
import { toAtif } from '../../src/trajectory/atif.js'
import { AtifTrajectorySchema } from '../../src/trajectory/atif-schema.js'
import { normalizeAtif } from '../../src/trajectory/from/atif.js'
import type { NormalizedTrajectory } from '../../src/trajectory/read.js'
import type { TrajectoryEvent } from '../../src/trajectory/schema.js'
import { jsonl, makeRunDir, piEvents, rowsEvery } from '../diagnose/run-dir.js'

const T0 = Date.parse('2026-06-01T10:00:00.000Z')
const ref = { cell: 'a', instance: 't-1', trial: 0, attempt: 1, startedAtMs: T0 }

function event(i: number, over: Partial<TrajectoryEvent>): TrajectoryEvent {
  return {
    event_id: `a/t-1/0-1#${i}`,
    index: i,
    t_ms: null,
    kind: 'run',
    tool: 'bash',
    paths: [],
    command: null,
    exit_code: null,
    ok: null,
    output_bytes: null,
    output_sha256: null,
    text: null,
    raw_index: i,
    mapping_version: 1,
    confidence: 'high',
    ...over,
  }
}

function row(
  i: number,
  startS: number,
  endS: number,
  tokens: Partial<LedgerRow['tokens']>,
  spend: number,
): LedgerRow {
  return {
    schema_version: 1,
    request_id: `req-${i}`,
    source: 'proxy',
    call_type: 'messages',
    api: 'anthropic',
    stream: true,
    model: 'claude-sonnet-4-5',
    model_observed: 'claude-sonnet-4-5-20250929',
    model_group: null,
    provider: 'anthropic',
    status: 'success',
    http_status: 200,
    error: null,
    started_at: new Date(T0 + startS * 1000).toISOString(),
    ended_at: new Date(T0 + endS * 1000).toISOString(),
    first_token_at: null,
    duration_ms: (endS - startS) * 1000,
    ttft_ms: null,
    request_shape: null,
    tokens: {
      input_total: 1000,
      input_fresh: 200,
      cache_read: 800,
      cache_write: 0,
      output: 50,
      reasoning: null,
      ...tokens,
    },
    cache_semantics: 'inclusive',
    spend_usd: spend,
    spend_source: 'proxy',
    spend_logged_usd: null,
    spend_recomputed_usd: null,
    flags: [],
    attribution: null,
    usage_object: null,
    additional_usage_values: null,
  } as LedgerRow
}

const trajectory = (events: TrajectoryEvent[]): NormalizedTrajectory => ({
  harness: 'pi',
  mapper_version: 1,
  raw_count: events.length,
  events,
  issues: [],
})

describe('ATIF v1.7 out', () => {
  it('one agent step per proxy request, tool calls placed after the answer that made them, metrics from the ledger', () => {
    const events = [
      event(0, {
        t_ms: 3000,
        kind: 'read',
        tool: 'read',
        paths: ['src/x.js'],
        ok: true,
        output_bytes: 20,
        output_sha256: 'ab',
      }),
      event(1, { t_ms: 7000, kind: 'test', tool: 'bash', command: 'npm test', exit_code: 1, ok: false }),
      event(2, { t_ms: 12_000, kind: 'finish', tool: null, text: 'done' }),
    ]
    const requests = [
      row(2, 4, 6, { input_total: 1500, cache_read: 1000, cache_write: 300, output: 80 }, 0.02),
      row(1, 0, 2, { cache_write: 700 }, 0.01),
      row(3, 8, 11, { input_total: 2000, cache_read: 1400, output: 20 }, 0.03),
    ]
    const doc = toAtif({
      sessionId: 'a/t-1/0-1',
      harness: 'pi',
      harnessVersion: '0.9.1',
      model: 'claude-sonnet-4-5',
      startedAtMs: T0,
      trajectory: trajectory(events),
      requests,
    })
    expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true)
    expect(doc.schema_version).toBe('ATIF-v1.7')
    expect(doc.agent).toEqual({ name: 'pi', version: '0.9.1', model_name: 'claude-sonnet-4-5' })
    expect(doc.steps.map((s) => s.step_id)).toEqual([1, 2, 3])
    // Requests sorted by time: req-1 (0–2 s) answers with the read at 3 s; req-2 (4–6 s) with the test at 7 s.
    expect(doc.steps[0]?.tool_calls?.map((c) => c.function_name)).toEqual(['read'])
    expect(doc.steps[0]?.observation?.results[0]).toMatchObject({ source_call_id: 'a/t-1/0-1#0' })
    expect(doc.steps[1]?.tool_calls).toEqual([
      { tool_call_id: 'a/t-1/0-1#1', function_name: 'bash', arguments: { command: 'npm test' } },
    ])
    expect(doc.steps[1]?.observation?.results[0]?.content).toMatch(/exit 1, failed/)
    expect(doc.steps[2]?.message).toBe('done')
    expect(doc.steps[1]?.metrics).toMatchObject({
      prompt_tokens: 1500,
      cached_tokens: 1000,
      completion_tokens: 80,
      cost_usd: 0.02,
      extra: { cache_write_tokens: 300, request_id: 'req-2' },
    })
    expect(doc.steps[0]?.model_name).toBe('claude-sonnet-4-5-20250929')
    expect(doc.final_metrics).toMatchObject({
      total_prompt_tokens: 4500,
      total_cached_tokens: 3200,
      total_completion_tokens: 150,
      total_steps: 3,
      extra: { source: 'proxy ledger', total_cache_write_tokens: 1000 },
    })
    expect(doc.final_metrics?.total_cost_usd).toBeCloseTo(0.06, 12)
  })

  it('an empty trajectory is a valid document with no steps and a stated reason', () => {
    const doc = toAtif({
      sessionId: 's',
      harness: 'codex',
      harnessVersion: null,
      model: null,
      startedAtMs: null,
      trajectory: {
        ...trajectory([]),
        issues: [{ code: 'missing', detail: 'trajectory.jsonl is missing', line: null }],
      },
      requests: [],
    })
    expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true)
    expect(doc.steps).toEqual([])
    expect(doc.notes).toMatch(/holds no events \(missing: trajectory\.jsonl is missing\)/)
    expect(doc.final_metrics).toEqual({ total_steps: 0, extra: expect.objectContaining({ requests: 0 }) })
  })

  it("the schema enforces ATIF's field rules", () => {
    const ok = {
      schema_version: 'ATIF-v1.7',
      session_id: 's',
      agent: { name: 'x', version: '1' },
      steps: [
        { step_id: 1, source: 'user', message: 'fix it' },
        {
          step_id: 2,
          source: 'agent',
          message: '',
          tool_calls: [{ tool_call_id: 'c1', function_name: 'bash', arguments: { command: 'ls' } }],
          observation: { results: [{ source_call_id: 'c1', content: 'a.txt' }] },
          metrics: { prompt_tokens: 10, completion_tokens: 2 },
        },
      ],
    }
    expect(AtifTrajectorySchema.safeParse(ok).success).toBe(true)
    const bad = (f: (d: typeof ok) => unknown) => {
      const d = structuredClone(ok)
      f(d)
      const r = AtifTrajectorySchema.safeParse(d)
      return r.success ? null : r.error.issues[0]?.message
    }
    expect(bad((d) => (d.schema_version = 'ATIF-v1.6'))).toMatch(/ATIF-v1\.7/)
    expect(bad((d) => ((d.steps[1] as { step_id: number }).step_id = 3))).toMatch(/expected 2, got 3/)
    expect(bad((d) => ((d.steps[0] as Record<string, unknown>).metrics = { prompt_tokens: 1 }))).toMatch(
      /only an agent step/,
    )
    expect(
      bad(
        (d) =>
          ((d.steps[1] as { observation: { results: { source_call_id: string }[] } }).observation
            .results[0]!.source_call_id = 'zz'),
      ),
    ).toMatch(/answers no tool call/)
    expect(
      bad((d) => ((d.steps[1] as { metrics: { prompt_tokens: number } }).metrics.prompt_tokens = -1)),
    ).toBeTruthy()
    expect(bad((d) => ((d.steps[0] as Record<string, unknown>).timestamp = 'yesterday'))).toBeTruthy()
  })

  it("reads a Harbor trial's agent/trajectory.json into events diagnose can use", () => {
    const file = path.join(
      import.meta.dirname,
      '../compare/fixtures/harbor-job/fix-git__cl03xQz/agent/trajectory.json',
    )
    const n = normalizeAtif(readFileSync(file, 'utf8'), 'claude-code', ref)
    expect(n.issues).toEqual([])
    expect(n.events.map((e) => [e.kind, e.tool])).toEqual([
      ['other', 'atif_user'],
      ['message', null],
      ['search', 'Bash'],
      ['edit', 'Edit'],
      ['test', 'Bash'],
      ['message', null],
    ])
    expect(n.events[2]).toMatchObject({ command: 'git status', output_bytes: 30 })
    expect(n.events[4]?.t_ms).toBe(40_000)
    const cut = normalizeAtif(readFileSync(file, 'utf8').slice(0, 200), 'claude-code', ref)
    expect(cut.events).toEqual([])
    expect(cut.issues[0]?.code).toBe('truncated')
  })

  it('diagnose writes every loaded attempt as a valid ATIF document and links them from the dossier', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    const a2 = run.attempts.find((a) => a.cell_id === 'a' && a.instance_id === 't-2')!
    run.write(a2, {
      trajectory: jsonl(piEvents(a2, [{ s: 2, tool: 'bash', args: { command: 'npm test' }, output: 'ok' }])),
      ledger: rowsEvery(a2, 3, 1),
    })
    await run.aggregate()
    const r = await diagnoseRun({ dir: run.dir })
    const dir = path.join(path.dirname(r.dossierJson), 'atif')
    const files = readdirSync(dir).sort()
    expect(files).toEqual(['a_t-1_0-1.json', 'a_t-2_0-1.json', 'b_t-1_0-1.json', 'b_t-2_0-1.json'])
    for (const f of files) {
      const doc = JSON.parse(readFileSync(path.join(dir, f), 'utf8'))
      expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true)
    }
    const a = JSON.parse(readFileSync(path.join(dir, 'a_t-2_0-1.json'), 'utf8'))
    expect(a.steps).toHaveLength(3)
    expect(a.final_metrics.total_prompt_tokens).toBe(3000)
    expect(a.final_metrics.total_cached_tokens).toBe(2400)
    const b = JSON.parse(readFileSync(path.join(dir, 'b_t-2_0-1.json'), 'utf8'))
    // b's trajectory file is missing: its model calls (from the ledger) are still steps, with no tool calls.
    expect(b.steps.length).toBeGreaterThan(0)
    expect(b.steps.every((s: { tool_calls?: unknown }) => s.tool_calls === undefined)).toBe(true)
    expect(b.notes).toMatch(/no events \(missing: trajectory\.jsonl is missing\)/)
    expect(readFileSync(r.dossierMd, 'utf8')).toMatch(
      /## Trajectories \(ATIF v1\.7\)[\s\S]*\(atif\/a_t-2_0-1\.json\)/,
    )
  })
})
