import type { RawRun } from './contract.js'

/** Lines that are noise rather than the reason a harness stopped. */
const NOISE = /^(\s*at |\s*$|node:internal|Node\.js v\d|\s*\^+\s*$|npm warn)/

/**
 * The reason a harness stopped before any model request succeeded: the harness's own error messages
 * when it reported some (even with exit 0), else the last meaningful stderr line of a non-zero exit.
 * Null when it exited 0 without an error, or was killed by a signal (a timeout is the run stage's to
 * classify). Callers decide "no model request succeeded" from the harness's own usage figures.
 */
export function startupFailure(run: RawRun, messages: string[] = []): string | null {
  if (run.signal !== null) return null
  const own = messages.map((m) => m.trim()).filter((m) => m !== '')
  // Some harnesses (Pi) report a failed request and still exit 0: their own error message counts.
  if (own.length > 0) return clip(`exit ${run.exitCode}: ${own.join('; ')}`)
  if (run.exitCode === 0) return null
  const lines = run.stderr.split(/\r?\n/).filter((l) => !NOISE.test(l))
  const errorLine = [...lines]
    .reverse()
    .find((l) => /error|invalid|denied|not found|cannot|failed|unable/i.test(l))
  const why = (errorLine ?? lines.at(-1) ?? '').trim()
  return clip(why ? `exit ${run.exitCode}: ${why}` : `exit ${run.exitCode} before any model request`)
}

function clip(s: string, n = 500): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s
}
