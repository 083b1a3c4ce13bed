import { z } from 'zod'
import { applyEffect, isToolError, type World } from '../bridge/effects.js'
import { isBuiltin } from '../bridge/env-schema.js'
import { type Evidence, fail, type Grade, type Grader, pass, ungraded } from './types.js'
import { subsetMismatch } from './values.js'

/**
 * end_state: the final world contains the expected one. The expectation is derived, as τ²-bench does,
 * by replaying solution/calls.json through the effects on a fresh copy of the initial world (builtin
 * calls change files, not the world, and are skipped). `paths` narrows the comparison to some top-level
 * or dotted parts; objects may hold extra keys, lists and values must be equal. A reference call that
 * fails is a broken task: ungraded, never 0.
 */
export const EndStateSpec = z.strictObject({
  paths: z.array(z.string().regex(/^[^.{}]+(\.[^.{}]+)*$/, 'a dotted path without placeholders')).optional(),
})
export type EndStateSpec = z.output<typeof EndStateSpec>

export const endState: Grader<EndStateSpec> = {
  name: 'end_state',
  spec: EndStateSpec,
  async grade(spec, ev) {
    return gradeEndState(spec, ev)
  },
}

export function gradeEndState(
  spec: EndStateSpec,
  ev: Pick<Evidence, 'env' | 'initialWorld' | 'world' | 'reference'>,
): Grade {
  const expected = replayReference(ev)
  if (typeof expected === 'string') return ungraded('end_state:bad_reference', expected)
  const parts = spec.paths ?? ['']
  for (const p of parts) {
    const want = p === '' ? expected : at(expected, p)
    if (want === undefined)
      return ungraded('end_state:bad_reference', `the reference world has nothing at ${p}`)
    const got = p === '' ? ev.world : at(ev.world, p)
    const m = subsetMismatch(want, got, p)
    if (m) {
      return fail(
        'end_state:mismatch',
        `${m.path}: ${m.actual === undefined ? 'missing' : 'differs from the reference'}`,
      )
    }
  }
  return pass(
    spec.paths
      ? `${parts.length} part(s) of the world as the reference leaves them`
      : 'the world as the reference leaves it',
  )
}

/** The world the reference calls leave, or a message when one of them fails. */
export function replayReference(ev: Pick<Evidence, 'env' | 'initialWorld' | 'reference'>): World | string {
  const tools = new Map(ev.env.tools.map((t) => [t.name, t]))
  let world = structuredClone(ev.initialWorld)
  for (const [i, call] of ev.reference.entries()) {
    const t = tools.get(call.tool)
    if (!t) return `reference call ${i + 1}: unknown tool ${call.tool}`
    if (isBuiltin(t)) continue
    const r = applyEffect(world, t.effect, call.arguments)
    if (isToolError(r)) return `reference call ${i + 1} (${call.tool}) fails: ${r.message}`
    world = r.world
  }
  return world
}

function at(v: unknown, p: string): unknown {
  let cur = v
  for (const k of p.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined
    cur = (cur as Record<string, unknown>)[k]
  }
  return cur
}
