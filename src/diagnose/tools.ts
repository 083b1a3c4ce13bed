import type { ToolOutcome, ToolProvider, ToolSpec } from '../bridge/provider.js'
import type { AttemptView, Dossier } from './schema.js'

const ATTEMPT = { type: 'string', description: 'attempt id, e.g. "b/t-3/0-1" (from list_pairs)' }

const SPECS: ToolSpec[] = [
  {
    name: 'list_pairs',
    description:
      'The comparisons of the dossier and their driving instances (discordant first, then resource residuals), with the attempt ids of both cells.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'view_timeline',
    description:
      'Normalized trajectory events of one attempt, from index `from` (default 0), at most `limit` (default 50, max 200).',
    inputSchema: {
      type: 'object',
      properties: {
        attempt: ATTEMPT,
        from: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 200 },
      },
      required: ['attempt'],
      additionalProperties: false,
    },
  },
  {
    name: 'view_patch',
    description:
      'The final patch of one attempt (unified diff, at most 20,000 characters) and the files it touches.',
    inputSchema: {
      type: 'object',
      properties: { attempt: ATTEMPT },
      required: ['attempt'],
      additionalProperties: false,
    },
  },
  {
    name: 'view_test_progress',
    description:
      'Test runs of one attempt, its milestones (first relevant read … final verification, with time, requests and spend until each), the verification summary and the verifier result.',
    inputSchema: {
      type: 'object',
      properties: { attempt: ATTEMPT },
      required: ['attempt'],
      additionalProperties: false,
    },
  },
  {
    name: 'view_request_curve',
    description:
      'Per proxy request of one attempt: time, input tokens, cache reads, output, spend, tools offered, and the trajectory event before it; plus the request totals and behaviour measures.',
    inputSchema: {
      type: 'object',
      properties: { attempt: ATTEMPT },
      required: ['attempt'],
      additionalProperties: false,
    },
  },
]

/**
 * The dossier served as read-only tools (a bridge `ToolProvider`; bridge/server.ts serves it over MCP).
 * Every answer is JSON text holding only dossier content; an unknown attempt id is an `error` outcome
 * with code `unknown_attempt`.
 */
export class DossierProvider implements ToolProvider {
  constructor(private readonly dossier: Dossier) {}

  tools(): ToolSpec[] {
    return SPECS
  }

  async call(name: string, args: unknown): Promise<ToolOutcome> {
    const a = (args ?? {}) as { attempt?: string; from?: number; limit?: number }
    if (name === 'list_pairs') return ok(this.pairs())
    const spec = SPECS.find((s) => s.name === name)
    if (!spec) return { status: 'invalid_arguments', text: `unknown tool "${name}"`, code: 'unknown_tool' }
    const view = typeof a.attempt === 'string' ? this.dossier.attempts[a.attempt] : undefined
    if (!view) {
      return {
        status: 'error',
        text: `no attempt "${String(a.attempt)}" in the dossier; list_pairs gives the ids`,
        code: 'unknown_attempt',
      }
    }
    switch (name) {
      case 'view_timeline': {
        const from = a.from ?? 0
        const limit = Math.min(a.limit ?? 50, 200)
        const events = view.trajectory.events.slice(from, from + limit)
        return ok({
          attempt: view.id,
          total: view.trajectory.events.length,
          issues: view.trajectory.issues,
          events,
        })
      }
      case 'view_patch':
        return ok({
          attempt: view.id,
          files: view.patch.files,
          bytes: view.patch.bytes,
          truncated: view.patch.truncated,
          diff: view.patch.text,
        })
      case 'view_test_progress':
        return ok({
          attempt: view.id,
          outcome: view.outcome,
          verifier: view.verifier,
          milestones: view.measures.milestones,
          verification: view.measures.verification,
          tests: view.trajectory.events.filter((e) => e.kind === 'test'),
        })
      default:
        return ok(curve(view))
    }
  }

  private pairs() {
    return this.dossier.comparisons.map((c) => ({
      id: c.id,
      baseline: c.baseline,
      treatment: c.treatment,
      status: c.status,
      confirmed: c.confirmed,
      instances: c.instances.map((i) => ({
        id: i.id,
        instance: i.instance,
        reason: i.reason,
        metric: i.metric,
        baseline_value: i.baseline_value,
        treatment_value: i.treatment_value,
        baseline_attempts: i.baseline,
        treatment_attempts: i.treatment,
        notes: i.notes,
      })),
    }))
  }
}

function curve(view: AttemptView) {
  const m = view.measures
  return {
    attempt: view.id,
    cell: view.cell,
    harness: view.harness,
    requests: m.requests,
    composition: m.composition,
    repeats: m.repeats,
    churn: m.churn,
    failing_loops: m.failing_loops,
    curve: view.curve,
  }
}

function ok(v: unknown): ToolOutcome {
  return { status: 'ok', text: JSON.stringify(v) }
}
