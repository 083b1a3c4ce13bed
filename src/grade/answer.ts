import { z } from 'zod'
import { type Evidence, fail, type Grade, type Grader, pass, ungraded } from './types.js'

/**
 * answer: the final answer text, matched by exactly one of `exact` (after trimming; `ignore_case`
 * optional), `regex` (JavaScript, searched anywhere) or `number` (the last number in the answer within
 * `tolerance`, absolute). No captured answer is ungraded.
 */
export const AnswerSpec = z
  .strictObject({
    exact: z.string().optional(),
    ignore_case: z.boolean().default(false),
    regex: z
      .string()
      .refine((r) => {
        try {
          new RegExp(r)
          return true
        } catch {
          return false
        }
      }, 'not a valid regular expression')
      .optional(),
    number: z.number().optional(),
    tolerance: z.number().nonnegative().default(0),
  })
  .refine((s) => [s.exact, s.regex, s.number].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of exact, regex, number',
  })
export type AnswerSpec = z.output<typeof AnswerSpec>

export const answer: Grader<AnswerSpec> = {
  name: 'answer',
  spec: AnswerSpec,
  async grade(spec, ev) {
    return gradeAnswer(spec, ev)
  },
}

export function gradeAnswer(spec: AnswerSpec, ev: Pick<Evidence, 'answer'>): Grade {
  if (ev.answer === null) return ungraded('answer:none', 'no final answer was captured')
  const text = ev.answer.trim()
  if (spec.exact !== undefined) {
    const same = spec.ignore_case
      ? text.toLowerCase() === spec.exact.trim().toLowerCase()
      : text === spec.exact.trim()
    return same
      ? pass('the answer is the expected text')
      : fail('answer:differs', 'the answer is not the expected text')
  }
  if (spec.regex !== undefined) {
    return new RegExp(spec.regex, spec.ignore_case ? 'i' : '').test(text)
      ? pass('the answer matches the pattern')
      : fail('answer:no_match', 'the answer does not match the pattern')
  }
  const nums = text.replace(/(\d),(?=\d{3}\b)/g, '$1').match(/-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g)
  const last = nums?.[nums.length - 1]
  if (last === undefined) return fail('answer:no_number', 'the answer holds no number')
  const v = Number(last)
  return Math.abs(v - (spec.number as number)) <= spec.tolerance
    ? pass('the answer is within tolerance')
    : fail('answer:out_of_tolerance', 'the answer is outside the tolerance')
}
