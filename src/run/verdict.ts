import type { CallSummary } from '../bridge/calls.js'
import type { ContainerNetwork } from '../records/isolation.js'
import type { Sandbox } from '../sandbox/contract.js'
import type { VerifierStatus } from './outcome.js'

/** The verifier's verdict on one attempt. */
export interface Verdict {
  status: Exclude<VerifierStatus, 'skipped'>
  exitCode: number | null
  reward: number | null
  durationMs: number
  /** Why the status is error/timeout, or null. */
  reason: string | null
  /** Bridge tasks: the attempt's tool calls by status (from calls.jsonl). */
  tools?: CallSummary
  /** Container backend: the verifier container's network. */
  network?: ContainerNetwork
  /** Container backend: where tests/test.sh ran (the agent's container, or a fresh one and why). */
  container?: { where: 'agent' | 'fresh'; reason: string | null }
}

/** The folders of one attempt an instance source works in (all absolute). */
export interface SourceDirs {
  /** Empty before `prepare`; the harness's working directory afterwards. */
  workspace: string
  /** Private scratch folder outside workspace and home (setup output, predictions, grader reports). */
  scratch: string
  /** The attempt's logs folder in the artifact (setup.log, verifier.log are written here). */
  logsDir: string
}

/** The agent's container kept after the harness exited (container backend), for the verifier. */
export interface AgentContainer {
  box: Sandbox
  /** Whether it still runs (Sandbox.settle): one killed at its limit cannot host the verifier. */
  alive: boolean
}
