import type { VerifierSpec } from '../manifest/schema.js'
import { uncaughtException } from './crash.js'

/**
 * A verifier's declared contract: how it states a verdict, so that a grader that crashes is never
 * read as "tests failed" (pure).
 * - `report`: a run report naming the instance decides; none is a grader error;
 * - `reward_file`: a reward written to HW_REWARD_FILE decides; none is a grader error;
 * - `exit_codes`: a reward or a report naming the instance when written, else the declared pass and
 *   fail codes; any other exit, or a signal, is a grader error;
 * - `default`: task-tests without a declaration (Harbor's tests/test.sh): a reward (or a report
 *   naming the instance) when written, else exit 0 passed and exit 1 tests failed — the code test
 *   runners give for failed tests (pytest, unittest, node --test, a failed `test`/`grep`); any other
 *   exit (2–255: pytest's 2 interrupted, 3 internal error, 4 usage error, 5 no tests collected;
 *   126/127 not runnable; 128+n a child killed by a signal) or a signal is a grader error.
 * Under `exit_codes` and `default`, a fail code whose error output ends in an uncaught exception
 * raised outside the workspace (crash.ts: a Python traceback, a Node.js stack; not an assertion) is
 * a grader error too: an interpreter that dies of an exception exits 1 like failed tests.
 */
export type VerifierContract =
  | { kind: 'report' }
  | { kind: 'reward_file' }
  | { kind: 'exit_codes'; pass: number[]; fail: number[] }
  | { kind: 'default' }

/** The contract a manifest's verifier declares, or its default. */
export function verifierContract(v: VerifierSpec): VerifierContract {
  const declared = v.contract ?? (v.reports ? 'report' : v.kind === 'command' ? 'reward_file' : null)
  if (declared === 'exit_codes')
    return { kind: 'exit_codes', pass: v.exit_codes?.pass ?? [0], fail: v.exit_codes?.fail ?? [] }
  if (declared === 'report' || declared === 'reward_file') return { kind: declared }
  return { kind: 'default' }
}

/** The contract in one line, as `validate` shows it. */
export function describeContract(c: VerifierContract, kind: VerifierSpec['kind']): string {
  switch (c.kind) {
    case 'report':
      return 'report: a run report under {out} naming the instance decides; no report is grader_error'
    case 'reward_file':
      return `reward_file: a reward in 0..1 written to HW_REWARD_FILE decides${kind === 'command' ? ' (a SWE-bench report under {out} is read too)' : ''}; none is grader_error`
    case 'exit_codes':
      return `exit_codes: pass ${c.pass.join(',')}, fail ${c.fail.join(',')}${CRASH_NOTE}; any other exit or a signal is grader_error`
    case 'default':
      return `default (none declared): a reward file or a report naming the instance decides; else exit 0 pass, exit 1 tests failed${CRASH_NOTE}; any other exit (2–255, e.g. pytest's 2–5, 126/127 not runnable) or a signal is grader_error`
  }
}

/** How both exit-code contracts read a fail code, as `validate` says it. */
const CRASH_NOTE =
  ' (unless the error output ends in an uncaught exception raised outside the workspace: grader_error)'

export interface GraderOutput {
  exitCode: number | null
  signal: string | null
  /** The reward file's verdict when one was written (null: none written). */
  reward: { status: 'pass' | 'fail' | 'error'; reward: number | null; reason: string | null } | null
  /** A report's verdict naming the instance (null: no report names it). */
  report: { status: 'pass' | 'fail' | 'error'; reason: string | null } | null
  /** The end of the grader's error output (stderr), for evidence of a crash; absent: none read. */
  errorOutput?: string | null
  /** The workspace as the grader saw it: an exception raised through code there is the agent's. */
  workspace?: string | null
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
        return crashed(out, what) ?? { status: 'fail', reward: null, reason: null }
      return {
        status: 'error',
        reward: null,
        reason: `the ${what} ${exit}, outside the declared pass (${c.pass.join(',')}) and fail (${c.fail.join(',')}) codes: grader error, not a verdict`,
      }
    }
    case 'default': {
      if (fromReward) return fromReward
      if (fromReport) return fromReport
      if (out.signal) return { status: 'error', reward: null, reason: `${what} ${exit}: grader error` }
      if (out.exitCode === 0) return { status: 'pass', reward: null, reason: null }
      if (out.exitCode === 1) return crashed(out, what) ?? { status: 'fail', reward: null, reason: null }
      if (out.exitCode === 126 || out.exitCode === 127)
        return {
          status: 'error',
          reward: null,
          reason: `${what} exited ${out.exitCode} (command not runnable)`,
        }
      return {
        status: 'error',
        reward: null,
        reason: `${what} ${exit}: not 0 (passed) or 1 (tests failed), so the grader itself failed (no contract declared): grader error, not a verdict`,
      }
    }
  }
}

/** A fail code with a crash in the error output: the grader error it is, or null. */
function crashed(out: GraderOutput, what: string): ContractVerdict | null {
  const exception = out.errorOutput ? uncaughtException(out.errorOutput, out.workspace ?? null) : null
  if (exception === null) return null
  return {
    status: 'error',
    reward: null,
    reason: `the ${what} exited ${out.exitCode} on an uncaught exception outside the workspace (${exception}): grader error, not a verdict`,
  }
}
