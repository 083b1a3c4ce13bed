import type { LedgerRow } from '../records/ledger.js'
import { type AtifStep, type AtifTrajectory, AtifTrajectorySchema } from './atif-schema.js'
import type { NormalizedTrajectory } from './read.js'
import type { TrajectoryEvent } from './schema.js'

/** What an ATIF document is written from: one attempt's normalized trajectory and its proxy requests. */
export interface AtifSource {
  sessionId: string
  harness: string
  harnessVersion: string | null
  model: string | null
  /** Attempt start (UTC ms), to place events in time; null when unknown. */
  startedAtMs: number | null
  trajectory: NormalizedTrajectory
  /** The attempt's proxy ledger rows (one per model request). */
  requests: LedgerRow[]
}

/**
 * One attempt as ATIF v1.7. Each proxy request is an agent step (a step is one model call) carrying
 * the ledger's tokens — `prompt_tokens` including cached, cache writes in `metrics.extra` — and the
 * tool calls the harness ran after that answer and before the next request, each with its observation
 * (exit code and output size; output text is not kept). Events without a time, or before the first
 * request, go to the first step; without any request every event is a step of its own with no metrics.
 * `final_metrics` sums the ledger: measured at the proxy, not reported by the harness. Pure.
 */
export function toAtif(src: AtifSource): AtifTrajectory {
  const requests = [...src.requests].sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))
  const events = src.trajectory.events
  const notes: string[] = []
  if (events.length === 0) {
    const why = src.trajectory.issues.map((i) => `${i.code}: ${i.detail}`).join('; ')
    notes.push(`the attempt's trajectory holds no events${why ? ` (${why})` : ''}`)
  }
  const abs = (e: TrajectoryEvent): number | null =>
    e.t_ms !== null && src.startedAtMs !== null ? src.startedAtMs + e.t_ms : null
  const groups: TrajectoryEvent[][] = requests.map(() => [])
  if (requests.length > 0) {
    const ends = requests.map((r) => Date.parse(r.ended_at ?? r.started_at))
    for (const e of events) {
      const t = abs(e)
      let k = 0
      if (t !== null) for (let i = 0; i < ends.length; i++) if ((ends[i] as number) <= t) k = i
      ;(groups[k] as TrajectoryEvent[]).push(e)
    }
  }
  const steps: AtifStep[] = []
  if (requests.length > 0) {
    requests.forEach((r, i) => {
      steps.push(agentStep(steps.length + 1, groups[i] as TrajectoryEvent[], r, src.startedAtMs))
    })
  } else {
    if (events.length > 0) notes.push('no proxy requests recorded for the attempt: steps carry no metrics')
    for (const e of events) steps.push(agentStep(steps.length + 1, [e], null, src.startedAtMs))
  }
  const sum = (f: (r: LedgerRow) => number | null): number | undefined => {
    if (requests.length === 0) return undefined
    let s = 0
    for (const r of requests) {
      const v = f(r)
      if (v === null) return undefined
      s += v
    }
    return s
  }
  const finalMetrics = {
    total_prompt_tokens: sum((r) => r.tokens.input_total),
    total_completion_tokens: sum((r) => r.tokens.output),
    total_cached_tokens: sum((r) => r.tokens.cache_read),
    total_cost_usd: sum((r) => r.spend_usd),
    total_steps: steps.length,
    extra: {
      source: 'proxy ledger',
      total_cache_write_tokens: sum((r) => r.tokens.cache_write) ?? null,
      requests: requests.length,
      failed_requests: requests.filter((r) => r.status === 'failure').length,
    },
  }
  return {
    schema_version: 'ATIF-v1.7',
    session_id: src.sessionId,
    agent: {
      name: src.harness,
      version: src.harnessVersion ?? 'unknown',
      ...(src.model ? { model_name: src.model } : {}),
    },
    steps,
    ...(notes.length > 0 ? { notes: notes.join('; ') } : {}),
    final_metrics: Object.fromEntries(
      Object.entries(finalMetrics).filter(([, v]) => v !== undefined),
    ) as AtifTrajectory['final_metrics'],
    extra: { mapper_version: src.trajectory.mapper_version, raw_events: src.trajectory.raw_count },
  }
}

/**
 * `toAtif`, checked against ATIF's field rules: the document, or why it breaks a rule (it is then not
 * to be written). Pure.
 */
export function checkedAtif(
  src: AtifSource,
): { doc: AtifTrajectory; error: null } | { doc: null; error: string } {
  const doc = toAtif(src)
  const ok = AtifTrajectorySchema.safeParse(doc)
  if (ok.success) return { doc, error: null }
  const i = ok.error.issues[0]
  return { doc: null, error: `${i?.path.join('.') || 'document'}: ${i?.message ?? 'invalid'}` }
}

function iso(ms: number | null): string | undefined {
  return ms !== null && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}

function agentStep(
  id: number,
  events: TrajectoryEvent[],
  r: LedgerRow | null,
  startedAtMs: number | null,
): AtifStep {
  const calls = events.filter((e) => e.kind !== 'message' && e.kind !== 'finish')
  const text = events
    .filter((e) => (e.kind === 'message' || e.kind === 'finish') && e.text)
    .map((e) => e.text)
    .join('\n')
  const first = events[0]
  const ts = r
    ? iso(Date.parse(r.ended_at ?? r.started_at))
    : first && first.t_ms !== null && startedAtMs !== null
      ? iso(startedAtMs + first.t_ms)
      : undefined
  const step: AtifStep = {
    step_id: id,
    ...(ts ? { timestamp: ts } : {}),
    source: 'agent',
    message: text,
  }
  const model = r?.model_observed ?? r?.model
  if (model) step.model_name = model
  if (calls.length > 0) {
    step.tool_calls = calls.map((e) => ({
      tool_call_id: e.event_id,
      function_name: e.tool ?? e.kind,
      arguments: {
        ...(e.command !== null ? { command: e.command } : {}),
        ...(e.paths.length > 0 ? { paths: e.paths } : {}),
      },
    }))
    step.observation = {
      results: calls.map((e) => ({ source_call_id: e.event_id, content: observation(e) })),
    }
  }
  if (r) {
    step.metrics = {
      ...(r.tokens.input_total !== null ? { prompt_tokens: r.tokens.input_total } : {}),
      ...(r.tokens.output !== null ? { completion_tokens: r.tokens.output } : {}),
      ...(r.tokens.cache_read !== null ? { cached_tokens: r.tokens.cache_read } : {}),
      ...(r.spend_usd !== null ? { cost_usd: r.spend_usd } : {}),
      extra: {
        cache_write_tokens: r.tokens.cache_write,
        reasoning_tokens: r.tokens.reasoning,
        request_id: r.request_id,
        status: r.status,
        source: 'proxy ledger',
      },
    }
    step.llm_call_count = 1
  }
  step.extra = { kinds: events.map((e) => e.kind) }
  return step
}

/** What is known of a tool's result (the text itself is not kept: only its size and digest). */
function observation(e: TrajectoryEvent): string {
  const parts = [`kind ${e.kind}`]
  if (e.exit_code !== null) parts.push(`exit ${e.exit_code}`)
  if (e.ok !== null) parts.push(e.ok ? 'ok' : 'failed')
  if (e.output_bytes !== null) parts.push(`${e.output_bytes} bytes of output (sha256 ${e.output_sha256})`)
  return parts.join(', ')
}
