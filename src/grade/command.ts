import { z } from 'zod'
import { runBash } from '../bridge/builtins/bash.js'
import { type Evidence, fail, type Grade, type Grader, pass, ungraded } from './types.js'

/**
 * command: a check command run with `bash -c` in the workspace (allowlisted environment, own process
 * group, timeout) passes on exit 0 and fails on any other exit; a timeout or a command that cannot
 * start (126, 127) is ungraded.
 */
export const CommandSpec = z.strictObject({
  command: z.string().min(1),
  timeout_s: z.number().positive().max(600).default(30),
})
export type CommandSpec = z.output<typeof CommandSpec>

export const command: Grader<CommandSpec> = {
  name: 'command',
  spec: CommandSpec,
  async grade(spec, ev) {
    return gradeCommand(spec, ev)
  },
}

export async function gradeCommand(spec: CommandSpec, ev: Pick<Evidence, 'workspace'>): Promise<Grade> {
  const r = await runBash(ev.workspace, spec.command, spec.timeout_s)
  if (r.spawnError) return ungraded('command:spawn_failed', r.spawnError)
  if (r.timedOut) return ungraded('command:timeout', `the check ran over ${spec.timeout_s} s`)
  if (r.exitCode === 126 || r.exitCode === 127)
    return ungraded('command:not_runnable', `the check exited ${r.exitCode}`)
  if (r.exitCode === 0) return pass('the check exited 0')
  return fail(
    'command:failed',
    `the check ${r.exitCode === null ? `ended by ${r.signal}` : `exited ${r.exitCode}`}`,
  )
}
