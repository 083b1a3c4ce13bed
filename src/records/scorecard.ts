import { z } from 'zod'

/** comparison.json `scorecard`: one entry per cell (definitions in scorecard.ts). */
const Rate = z.number().min(0).max(1).nullable()

export const CellScorecardSchema = z.strictObject({
  cell: z.string(),
  trials: z.number().int().nonnegative(),
  graded_trials: z.number().int().nonnegative(),
  resolved_trials: z.number().int().nonnegative(),
  pass_at_1: Rate,
  pass_hat_k: z.array(
    z.strictObject({
      k: z.number().int().positive(),
      value: Rate,
      instances: z.number().int().nonnegative(),
    }),
  ),
  cost_per_solved_usd: z.number().nonnegative().nullable(),
  tool_calls: z.number().int().nonnegative().nullable(),
  tool_call_error_rate: Rate,
  exits: z.record(z.string(), z.number().int().nonnegative()),
  /** Multi-turn tasks: the simulated user's dialogues, proxy requests and spend, apart from the cell's cost. */
  user_simulation: z
    .strictObject({
      dialogues: z.number().int().nonnegative(),
      requests: z.number().int().nonnegative(),
      spend_usd: z.number().nonnegative().nullable(),
    })
    .nullable()
    .optional(),
  /** Per instance: resolved / graded trials (the basis of diff's per-task regressions and fixes). */
  tasks: z.record(
    z.string(),
    z.strictObject({ resolved: z.number().int().nonnegative(), graded: z.number().int().nonnegative() }),
  ),
})
export type CellScorecard = z.output<typeof CellScorecardSchema>
export const ScorecardSchema = z.array(CellScorecardSchema)
export type Scorecard = z.output<typeof ScorecardSchema>

const OldNew = z.strictObject({ old: z.number().nullable(), new: z.number().nullable() })
/** diff's `scorecards`: per cell in both runs, the headline metrics and per-task pass-rate changes. */
export const ScorecardDiffSchema = z.strictObject({
  cell: z.string(),
  pass_at_1: OldNew,
  tool_call_error_rate: OldNew,
  cost_per_solved_usd: OldNew,
  regressions: z.array(z.string()).describe('tasks whose pass rate fell'),
  fixes: z.array(z.string()).describe('tasks whose pass rate rose'),
})
export type ScorecardDiff = z.output<typeof ScorecardDiffSchema>
