import { z } from 'zod'
import { answer } from './answer.js'
import { bfcl } from './bfcl.js'
import { command } from './command.js'
import { endState } from './end-state.js'
import { files } from './files.js'
import { toolCalls } from './tool-calls.js'
import type { Evidence, Grade, Grader } from './types.js'
import { ungraded } from './types.js'

export type GraderName = 'tool_calls' | 'bfcl' | 'end_state' | 'files' | 'command' | 'answer'

/** Every grader by name. A missing entry fails to compile. */
// biome-ignore lint/suspicious/noExplicitAny: each entry's spec type differs; specs are parsed by the entry's own schema
export const GRADERS: Record<GraderName, Grader<any>> = {
  tool_calls: toolCalls,
  bfcl,
  end_state: endState,
  files,
  command,
  answer,
}

export const GRADER_NAMES = Object.keys(GRADERS) as GraderName[]

/** One grader selected in a task: its name and its spec's fields. */
export interface GraderUse {
  name: GraderName
  spec: unknown
}

/**
 * Parse a task's grader list (`[{ "name": "tool_calls", …spec }]`). Returns the uses or the problems
 * as `[index].field: message`.
 */
export function parseGraderUses(raw: unknown): { uses: GraderUse[] } | { problems: string[] } {
  const list = z
    .array(z.looseObject({ name: z.string() }))
    .min(1)
    .safeParse(raw)
  if (!list.success)
    return { problems: list.error.issues.map((i) => `${i.path.join('.') || '(list)'}: ${i.message}`) }
  const problems: string[] = []
  const uses: GraderUse[] = []
  list.data.forEach((entry, i) => {
    const { name, ...rest } = entry
    if (!Object.hasOwn(GRADERS, name)) {
      problems.push(`[${i}].name: unknown grader "${name}" (expected one of ${GRADER_NAMES.join(', ')})`)
      return
    }
    const parsed = GRADERS[name as GraderName].spec.safeParse(rest)
    if (!parsed.success) {
      for (const is of parsed.error.issues)
        problems.push(`[${i}].${is.path.join('.') || name}: ${is.message}`)
      return
    }
    uses.push({ name: name as GraderName, spec: parsed.data })
  })
  return problems.length > 0 ? { problems } : { uses }
}

/**
 * Grade with every selected grader. The reward is the product of the parts (τ²-bench's rule: every
 * part must hold); any ungraded part makes the whole ungraded; a grader that throws is ungraded.
 */
export async function gradeAll(
  uses: GraderUse[],
  ev: Evidence,
): Promise<{ grade: Grade; parts: (Grade & { grader: GraderName })[] }> {
  const parts: (Grade & { grader: GraderName })[] = []
  for (const u of uses) {
    let g: Grade
    try {
      g = await GRADERS[u.name].grade(u.spec, ev)
    } catch (e) {
      g = ungraded(`${u.name}:crashed`, (e as Error).message)
    }
    parts.push({ ...g, grader: u.name })
  }
  const none = parts.find((p) => p.reward === null)
  if (none)
    return { grade: { reward: null, code: none.code, reason: `${none.grader}: ${none.reason}` }, parts }
  const reward = parts.reduce((r, p) => r * (p.reward as number), 1)
  const firstFail = parts.find((p) => (p.reward as number) < 1)
  return {
    grade: firstFail
      ? { reward, code: firstFail.code, reason: `${firstFail.grader}: ${firstFail.reason}` }
      : { reward, code: 'ok', reason: parts.map((p) => `${p.grader}: ${p.reason}`).join('; ') },
    parts,
  }
}
