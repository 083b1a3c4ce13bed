import { z } from 'zod'
import { Id, InstanceId } from '../manifest/schema.js'
import { MAX_SEED } from '../stats/index.js'

export const PLAN_SCHEMA_VERSION = 1

/** A workflow call's key as it appears in artifact names; empty = none. */
export const CallKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]{0,40}$/, 'a call key is at most 40 letters, digits, "_" or "-"')

/** One matrix job: one cell on one shard. */
export const LegSchema = z.strictObject({
  leg: z.string().describe('leg id, "<cell>-s<shard>"'),
  cell: Id,
  shard: z.number().int().nonnegative(),
  artifact: z.string().describe('unique artifact name the leg uploads'),
  instances: z.array(InstanceId).describe("this leg's instances in seeded order"),
})
export type Leg = z.infer<typeof LegSchema>

export const MatrixEntrySchema = LegSchema.omit({ instances: true })
export type MatrixEntry = z.infer<typeof MatrixEntrySchema>

export const PlanCellSchema = z.strictObject({
  id: Id,
  harness: z.string(),
  version: z.string(),
  api: z.enum(['chat', 'responses', 'anthropic', 'gemini']),
  config_hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** Several-model experiments: the cell's route name (null = the top-level `model`) and its model id. */
  model: Id.nullable().optional(),
  model_id: z.string().min(1).optional(),
})

/**
 * plan.json: everything a leg needs to know what to run, reproducible byte for byte from the same
 * manifest and seed. `kind: confirmation` plans cover only the blocks a breach touched.
 */
export const PlanSchema = z.strictObject({
  schema_version: z.literal(PLAN_SCHEMA_VERSION),
  kind: z.enum(['plan', 'confirmation']),
  experiment_id: Id,
  /**
   * Key of the workflow call that planned this run (letters, digits, `_`, `-`; empty outside a
   * workflow): part of every artifact name, so two calls in one workflow run never read each other's.
   */
  call_key: CallKey.default(''),
  manifest_file: z.string(),
  manifest_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The manifest with every default filled in (a JSON object). */
  manifest: z.record(z.string(), z.unknown()),
  seed: z.number().int().nonnegative().max(MAX_SEED),
  /** Confirmation round (0 for the first run). */
  round: z.number().int().nonnegative(),
  panel: z.strictObject({
    instances: z.array(InstanceId),
    quarantine: z.array(InstanceId),
  }),
  cells: z.array(PlanCellSchema),
  baseline: Id,
  treatments: z.array(Id),
  trials: z.number().int().positive(),
  shards: z.strictObject({
    requested: z.union([z.strictObject({ count: z.number() }), z.strictObject({ size: z.number() })]),
    count: z.number().int().nonnegative(),
    packed: z.boolean(),
    note: z.string().nullable(),
  }),
  legs: z.array(LegSchema),
  matrix: z.strictObject({ include: z.array(MatrixEntrySchema) }),
})
export type Plan = z.infer<typeof PlanSchema>
