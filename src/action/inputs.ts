import * as core from '@actions/core'
import { z } from 'zod'
import { MAX_SEED } from '../stats/index.js'
import { HwError } from '../util/errors.js'

/** The action's inputs, read once and validated into a typed object (names as in action.yml). */
export const ActionInputsSchema = z.object({
  command: z.enum(['plan', 'run', 'aggregate', 'publish']),
  manifest: z.string(),
  out: z.string().min(1),
  seed: z
    .string()
    .regex(/^\d*$/, 'expected an integer')
    .refine((s) => s === '' || Number(s) <= MAX_SEED, `a seed is an integer from 0 to ${MAX_SEED}`),
  cells: z.string(),
  plan: z.string(),
  leg: z.string(),
  artifacts: z.string(),
  previous: z.string(),
  comparison: z.string(),
  token: z.string(),
  'report-url': z.string(),
  'history-url': z.string(),
  'history-artifact': z.string(),
  'pr-number': z.string().regex(/^\d*$/, 'expected a pull request number'),
  'call-key': z.string().regex(/^[A-Za-z0-9_-]{0,40}$/, 'expected at most 40 letters, digits, "_" or "-"'),
  'dry-run': z.enum(['true', 'false', '']),
})
export type ActionInputs = z.infer<typeof ActionInputsSchema>

export function readInputs(): ActionInputs {
  const raw = Object.fromEntries(
    Object.keys(ActionInputsSchema.shape).map((name) => [
      name,
      core.getInput(name, { trimWhitespace: true }),
    ]),
  )
  const parsed = ActionInputsSchema.safeParse(raw)
  if (!parsed.success) {
    throw new HwError('inputs_invalid', `invalid action inputs:\n${z.prettifyError(parsed.error)}`, {
      help: 'see action.yml for the inputs each command takes',
    })
  }
  return parsed.data
}

/** An input a command cannot do without. */
export function required(inputs: ActionInputs, name: keyof ActionInputs): string {
  const v = inputs[name]
  if (!v) throw new HwError('inputs_invalid', `input "${name}" is required for command "${inputs.command}"`)
  return v
}
