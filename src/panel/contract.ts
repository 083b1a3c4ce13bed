import type { VerifierSpec } from '../manifest/schema.js'

/**
 * A verifier's declared contract: how it states a verdict, so that a grader that crashes is never
 * read as "tests failed" (pure).
 * - `report`: a run report naming the instance decides; none is a grader error;
 * - `reward_file`: a reward written to HW_REWARD_FILE decides; none is a grader error;
 * - `exit_codes`: a reward or a report naming the instance when written, else the declared pass and
 *   fail codes; any other exit, or a signal, is a grader error;
 * - `legacy`: task-tests without a declaration (Harbor's tests/test.sh): a reward when written, else
 *   exit 0 pass, 126/127 error, other codes fail — the exit code cannot tell a crash from a failure.
 */
export type VerifierContract =
  | { kind: 'report' }
  | { kind: 'reward_file' }
  | { kind: 'exit_codes'; pass: number[]; fail: number[] }
  | { kind: 'legacy' }

/** The contract a manifest's verifier declares, or its default. */
export function verifierContract(v: VerifierSpec): VerifierContract {
  const declared = v.contract ?? (v.reports ? 'report' : v.kind === 'command' ? 'reward_file' : null)
  if (declared === 'exit_codes')
    return { kind: 'exit_codes', pass: v.exit_codes?.pass ?? [0], fail: v.exit_codes?.fail ?? [] }
  if (declared === 'report' || declared === 'reward_file') return { kind: declared }
  return { kind: 'legacy' }
}

/** The contract in one line, as `validate` shows it. */
export function describeContract(c: VerifierContract, kind: VerifierSpec['kind']): string {
  switch (c.kind) {
    case 'report':
      return 'report: a run report under {out} naming the instance decides; no report is grader_error'
    case 'reward_file':
      return `reward_file: a reward in 0..1 written to HW_REWARD_FILE decides${kind === 'command' ? ' (a SWE-bench report under {out} is read too)' : ''}; none is grader_error`
    case 'exit_codes':
      return `exit_codes: pass ${c.pass.join(',')}, fail ${c.fail.join(',')}; any other exit or a signal is grader_error`
    case 'legacy':
      return 'undeclared (Harbor default): a reward file when written, else exit 0 pass, 126/127 error, other codes fail — a crash cannot be told from a failure; declare contract: exit_codes or reward_file'
  }
}

export interface GraderOutput {
  exitCode: number | null
  signal: string | null
  /** The reward file's verdict when one was written (null: none written). */
  reward: { status: 'pass' | 'fail' | 'error'; reward: number | null; reason: string | null } | null
  /** A report's verdict naming the instance (null: no report names it). */
  report: { status: 'pass' | 'fail' | 'error'; reason: string | null } | null
}

export interface ContractVerdict {
  status: 'pass' | 'fail' | 'error'
  reward: number | null
  reason: string | null
}

/** The verdict the contract reads from what the grader left. */
export function readByContract(
  c: VerifierContract,
  out: GraderOutput,
  what = 'verifier',
  instance = 'the instance',
): ContractVerdict {
  const exit = out.signal ? `ended by ${out.signal}` : `exited ${out.exitCode ?? 'unknown'}`
  const code = out.signal ?? out.exitCode ?? 'unknown'
  const fromReward = out.reward && {
    status: out.reward.status,
    reward: out.reward.reward,
    reason: out.reward.reason,
  }
  const fromReport = out.report && { status: out.report.status, reward: null, reason: out.report.reason }
  switch (c.kind) {
    case 'report':
      return (
        fromReport ?? {
          status: 'error',
          reward: null,
          reason: `the grader wrote no report naming ${instance} (exit ${code}): grader error, no exit-code fallback`,
        }
      )
    case 'reward_file':
      return (
        fromReward ??
        fromReport ?? {
          status: 'error',
          reward: null,
          reason: `the ${what} wrote no reward (${exit}): grader error, never read as a failure (contract reward_file)`,
        }
      )
    case 'exit_codes': {
      if (fromReward) return fromReward
      if (fromReport) return fromReport
      if (out.signal === null && out.exitCode !== null && c.pass.includes(out.exitCode))
        return { status: 'pass', reward: null, reason: null }
      if (out.signal === null && out.exitCode !== null && c.fail.includes(out.exitCode))
        return { status: 'fail', reward: null, reason: null }
      return {
        status: 'error',
        reward: null,
        reason: `the ${what} ${exit}, outside the declared pass (${c.pass.join(',')}) and fail (${c.fail.join(',')}) codes: grader error, not a verdict`,
      }
    }
    case 'legacy': {
      if (fromReward) return fromReward
      if (fromReport) return fromReport
      if (out.signal) return { status: 'error', reward: null, reason: `${what} ${exit}` }
      if (out.exitCode === 0) return { status: 'pass', reward: null, reason: null }
      if (out.exitCode === 126 || out.exitCode === 127)
        return {
          status: 'error',
          reward: null,
          reason: `${what} exited ${out.exitCode} (command not runnable)`,
        }
      return { status: 'fail', reward: null, reason: null }
    }
  }
}
