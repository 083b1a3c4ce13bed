// A harness process tree that resists stopping, and how to see what is left of it: shared by the
// signal tests of the CLI's `run` and of the action's `run`.
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * A command harness that ignores SIGTERM and leaves a background child, a `setsid nohup` grandchild
 * that left the group and a SIGTERM-ignoring subshell, then waits. `mark` is the sleeps' argument
 * (seconds, made unique per test so `sleeps` finds only this tree).
 */
export function treeCommand(mark: string): string {
  return [
    "trap '' TERM",
    `sleep ${mark} &`,
    `setsid nohup sleep ${mark} > /dev/null 2>&1 &`,
    `bash -c "trap '' TERM; sleep ${mark}; :" &`,
    'wait',
  ].join('\n')
}

/** A mark no other test uses at the same time: `<base + random>.<pid>`. */
export function uniqueMark(base: number): string {
  return `${base + Math.floor(Math.random() * 1000)}.${process.pid}`
}

/** Pids of the `sleep <mark>` processes themselves (not the shells whose script mentions them). */
export function sleeps(mark: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === `sleep\0${mark}\0`) out.push(Number(name))
    } catch {
      // exited meanwhile
    }
  }
  return out
}

/** Poll `check` every 100 ms for up to `ms`; its last value. */
export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await sleep(100)
  }
  return check()
}
