import type { ZodType } from 'zod'
import type { TracedCall } from '../bridge/calls.js'
import type { World } from '../bridge/effects.js'
import type { Environment } from '../bridge/env-schema.js'

/**
 * A grader's verdict. `reward` in [0, 1], or null when the attempt could not be graded (missing
 * evidence, a broken check): null is never a 0. `code` is stable (`tool_calls:wrong_value`, `ok`);
 * `reason` is for a person.
 */
export interface Grade {
  reward: number | null
  code: string
  reason: string
}

/** One reference call of solution/calls.json. */
export interface ReferenceCall {
  tool: string
  arguments: Record<string, unknown>
}

/** What graders see after an attempt; all of it private to the verify step. */
export interface Evidence {
  env: Environment
  /** The environment's initial world. */
  initialWorld: World
  /** The world after the attempt (state/world.json). */
  world: World
  /** Every call the harness made, in order, with its arguments (the private trace). */
  calls: TracedCall[]
  /** solution/calls.json. */
  reference: ReferenceCall[]
  /** The attempt's workspace (the sandbox folder), a real path. */
  workspace: string
  /** The harness's final answer text, or null when none was captured. */
  answer: string | null
}

/** A named grading function with the schema of its task-file spec. Pure except `command`. */
export interface Grader<S> {
  name: string
  spec: ZodType<S>
  grade(spec: S, ev: Evidence): Promise<Grade>
}

export const pass = (reason: string): Grade => ({ reward: 1, code: 'ok', reason })
export const fail = (code: string, reason: string): Grade => ({ reward: 0, code, reason })
export const ungraded = (code: string, reason: string): Grade => ({ reward: null, code, reason })
