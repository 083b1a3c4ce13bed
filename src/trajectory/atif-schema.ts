import { z } from 'zod'

/**
 * ATIF v1.7, the Agent Trajectory Interchange Format (Harbor RFC 0001), as its field rules state them:
 * a root with `schema_version` "ATIF-v1.7", `session_id`, `agent{name, version, model_name,
 * tool_definitions, extra}`, `steps[]`, `notes`, `final_metrics`, `extra`, `subagent_trajectories`;
 * steps numbered 1, 2, 3… in order, each a `system`, `user` or `agent` step with an ISO 8601
 * timestamp; model name, reasoning, tool calls and metrics only on agent steps; every observation
 * result answering a tool call of its own step. `prompt_tokens` includes cached tokens; a cache write
 * has no field and goes in `metrics.extra`.
 */

const Extra = z.record(z.string(), z.unknown())
const Tokens = z.number().int().nonnegative()
const Iso = z.iso.datetime({ offset: true })

const ContentPart = z.looseObject({ type: z.string().min(1) })

export const AtifToolCallSchema = z.strictObject({
  tool_call_id: z.string().min(1),
  function_name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
})

export const AtifMetricsSchema = z.strictObject({
  prompt_tokens: Tokens.optional(),
  completion_tokens: Tokens.optional(),
  cached_tokens: Tokens.optional(),
  cost_usd: z.number().nonnegative().optional(),
  logprobs: z.array(z.number()).optional(),
  completion_token_ids: z.array(z.number().int()).optional(),
  prompt_token_ids: z.array(z.number().int()).optional(),
  extra: Extra.optional(),
})

export const AtifStepSchema = z
  .strictObject({
    step_id: z.number().int().positive(),
    timestamp: Iso.optional(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().optional(),
    reasoning_effort: z.union([z.string(), z.number()]).optional(),
    message: z.union([z.string(), z.array(ContentPart)]),
    reasoning_content: z.string().optional(),
    tool_calls: z.array(AtifToolCallSchema).optional(),
    observation: z
      .strictObject({
        results: z.array(
          z.strictObject({
            source_call_id: z.string().nullable().optional(),
            content: z
              .union([z.string(), z.array(ContentPart)])
              .nullable()
              .optional(),
            subagent_trajectory_ref: z.array(Extra).nullable().optional(),
          }),
        ),
      })
      .optional(),
    metrics: AtifMetricsSchema.optional(),
    llm_call_count: z.number().int().nonnegative().optional(),
    is_copied_context: z.boolean().optional(),
    extra: Extra.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.source !== 'agent') {
      for (const k of [
        'model_name',
        'reasoning_content',
        'tool_calls',
        'metrics',
        'reasoning_effort',
      ] as const) {
        if (s[k] !== undefined)
          ctx.addIssue({ code: 'custom', path: [k], message: `only an agent step carries ${k}` })
      }
    }
    const ids = new Set((s.tool_calls ?? []).map((c) => c.tool_call_id))
    if (ids.size !== (s.tool_calls ?? []).length)
      ctx.addIssue({ code: 'custom', path: ['tool_calls'], message: 'tool_call_id repeated in one step' })
    ;(s.observation?.results ?? []).forEach((r, i) => {
      if (r.source_call_id != null && !ids.has(r.source_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', i, 'source_call_id'],
          message: `answers no tool call of step ${s.step_id}`,
        })
    })
  })
export type AtifStep = z.output<typeof AtifStepSchema>

export const AtifFinalMetricsSchema = z.strictObject({
  total_prompt_tokens: Tokens.optional(),
  total_completion_tokens: Tokens.optional(),
  total_cached_tokens: Tokens.optional(),
  total_cost_usd: z.number().nonnegative().optional(),
  total_steps: Tokens.optional(),
  extra: Extra.optional(),
})

export const AtifTrajectorySchema = z
  .strictObject({
    schema_version: z.literal('ATIF-v1.7'),
    session_id: z.string().min(1),
    trajectory_id: z.string().min(1).optional(),
    agent: z.strictObject({
      name: z.string().min(1),
      version: z.string().min(1),
      model_name: z.string().optional(),
      tool_definitions: z.array(Extra).optional(),
      extra: Extra.optional(),
    }),
    steps: z.array(AtifStepSchema),
    notes: z.string().optional(),
    final_metrics: AtifFinalMetricsSchema.optional(),
    continued_trajectory_ref: z.string().optional(),
    subagent_trajectories: z.array(z.unknown()).optional(),
    extra: Extra.optional(),
  })
  .superRefine((t, ctx) => {
    t.steps.forEach((s, i) => {
      if (s.step_id !== i + 1)
        ctx.addIssue({
          code: 'custom',
          path: ['steps', i, 'step_id'],
          message: `steps are numbered 1, 2, 3… in order: expected ${i + 1}, got ${s.step_id}`,
        })
    })
    if (t.final_metrics?.total_steps !== undefined && t.final_metrics.total_steps !== t.steps.length)
      ctx.addIssue({
        code: 'custom',
        path: ['final_metrics', 'total_steps'],
        message: `total_steps ${t.final_metrics.total_steps} but ${t.steps.length} step(s)`,
      })
  })
export type AtifTrajectory = z.output<typeof AtifTrajectorySchema>
