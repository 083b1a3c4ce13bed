import { z } from 'zod'

/**
 * comparison.json's sections for several models in one experiment and for the adjustment across
 * every test the report states. Both optional: absent in files written before them.
 */

const Count = z.number().int().nonnegative()

export const ModelGroupSchema = z.strictObject({
  route: z.string().nullable().describe('the route name (null: the top-level `model`)'),
  model_id: z.string().nullable(),
  cells: z.array(z.string()),
  baseline: z
    .string()
    .nullable()
    .describe("this model's cell running the baseline's harness configuration; null: none, no comparison"),
  blocks: z.strictObject({ planned: Count, outcome_complete: Count }),
})

export const InteractionSchema = z.strictObject({
  baseline_harness: z.string().describe('harness@version of the baseline configuration'),
  treatment_harness: z.string(),
  model_a: z.string(),
  model_b: z.string(),
  cells: z.strictObject({
    baseline_a: z.string(),
    treatment_a: z.string(),
    baseline_b: z.string(),
    treatment_b: z.string(),
  }),
  n: Count.describe('instances outcome-complete on both models'),
  gap_a_pp: z
    .number()
    .nullable()
    .describe('treatment − baseline resolve rate on model A over the shared instances, percentage points'),
  gap_b_pp: z.number().nullable(),
  estimate_pp: z.number().nullable().describe('gap_a_pp − gap_b_pp: the interaction'),
  interval_pp: z.tuple([z.number(), z.number()]).nullable().describe('percentile bootstrap over instances'),
  p: z.number().nullable().describe('exact sign-flip test of no interaction, two-sided'),
  reverses: z.boolean().describe('the gap has opposite signs on the two models'),
  not_evaluated: z.string().nullable().describe('why there is no estimate (no shared instance…)'),
})
export type Interaction = z.infer<typeof InteractionSchema>

export const ModelsSectionSchema = z.strictObject({
  groups: z.array(ModelGroupSchema),
  interactions: z.array(InteractionSchema),
  notes: z.array(z.string()),
})
export type ModelsSection = z.infer<typeof ModelsSectionSchema>

export const FamilyTestSchema = z.strictObject({
  comparison: z
    .string()
    .describe('"<baseline> → <treatment>" or "interaction <harness pair> <model A>/<model B>"'),
  model: z.string().nullable(),
  id: z.string().describe('"mcnemar", "sign:<metric>" or "interaction"'),
  p: z.number(),
  p_adjusted: z.number(),
  reject: z.boolean(),
})

export const MultiplicitySchema = z.strictObject({
  method: z.enum(['holm', 'benjamini-hochberg']),
  alpha: z.number(),
  tests: z.array(FamilyTestSchema),
  statement: z.string().describe('the one sentence the report states'),
})
export type Multiplicity = z.infer<typeof MultiplicitySchema>
