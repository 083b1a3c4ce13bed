import type { AttemptRecord } from '../records/attempt.js'

/**
 * Failure classes: what every attempt is before any comparison (the rules are in `classify.ts`, the
 * one place they are stated; README "Classification" repeats them for users).
 *
 * Two axes per attempt:
 * - the **outcome class**: an agent outcome (`resolved`, `unresolved`) that enters the paired outcome
 *   statistics, or a class that does not (infrastructure, grading, input) and is never a harness loss;
 * - the **telemetry class**: `ok`, `telemetry_anomaly` (the ledger and the proxy disagree: suspected
 *   duplicate logging, rows lost, bypass) or `telemetry_suspect` (implausibly thin against the
 *   harness's own count or the other cells). Either keeps the attempt out of every resource metric.
 */

/** Outcome classes. The first two are agent outcomes; every other one keeps the attempt out of the outcome statistics. */
export const OUTCOME_CLASSES = [
  'resolved',
  'unresolved',
  'harness_startup',
  'auth',
  'quota',
  'route',
  'sandbox',
  'timeout',
  'grader_error',
  'ungraded',
  'telemetry_suspect',
  'contradictory',
] as const
export type OutcomeClass = (typeof OUTCOME_CLASSES)[number]

/** Where a class belongs: a harness result, our infrastructure, the grader, the telemetry, or the input files. */
export type ClassGroup = 'agent' | 'infrastructure' | 'grading' | 'telemetry' | 'input'

export const CLASS_GROUP: Record<OutcomeClass, ClassGroup> = {
  resolved: 'agent',
  unresolved: 'agent',
  harness_startup: 'infrastructure',
  auth: 'infrastructure',
  quota: 'infrastructure',
  route: 'infrastructure',
  sandbox: 'infrastructure',
  timeout: 'infrastructure',
  grader_error: 'grading',
  ungraded: 'grading',
  telemetry_suspect: 'telemetry',
  contradictory: 'input',
}

export const TELEMETRY_CLASSES = ['ok', 'telemetry_anomaly', 'telemetry_suspect'] as const
export type TelemetryClass = (typeof TELEMETRY_CLASSES)[number]

/** What a telemetry anomaly is, named. */
export type AnomalyKind =
  | 'suspected_duplicate_logging'
  | 'rows_above_forwarded'
  | 'rows_lost'
  | 'bypass'
  | 'thin_vs_self_report'
  | 'self_report_above_proxy'
  | 'thin_vs_cells'

/** Raw and de-duplicated figures of one attempt's ledger (de-duplicated: null when not computable). */
export interface LedgerFigures {
  rows: number
  spend_usd: number | null
  dedup_rows: number | null
  dedup_spend_usd: number | null
  /** Requests the front proxy forwarded, when an independent count exists. */
  forwarded: number | null
}

/** One attempt, classified. */
export interface AttemptClass {
  outcome_class: OutcomeClass
  group: ClassGroup
  /** Why, in words a person can check against the attempt's files. */
  reason: string
  telemetry_class: TelemetryClass
  anomaly: AnomalyKind | null
  telemetry_reason: string | null
  /** True when the attempt's usage was cut off mid-way (partial usage: shown, never summed into cost). */
  partial_usage: boolean
  ledger: LedgerFigures
}

/** Whether an outcome class is a harness result (enters the paired outcome statistics). */
export function isAgentOutcome(c: OutcomeClass): c is 'resolved' | 'unresolved' {
  return c === 'resolved' || c === 'unresolved'
}

/** One attempt row with where it was read. */
export interface AttemptInput {
  record: AttemptRecord
  file: string
  line: number
  /** Rows ledger.jsonl holds for the attempt, when the ledger was read. */
  ledgerRows: number | null
  /** classKey(record), when the caller has made it already (it is then not made again). */
  key?: string
}

/** Something seen across attempts: an evaluation-health finding, never a harness result. */
export interface ClassFinding {
  code: 'timeouts_clustered' | 'shared_error_signature' | 'telemetry_thin_cell'
  cell: string | null
  message: string
  attempts: number
}

export interface Classification {
  /** By attemptKey(cell, instance, trial, attempt). */
  byKey: Map<string, AttemptClass>
  inputErrors: Array<{ file: string; line: number; message: string }>
  findings: ClassFinding[]
}

/** The key attempts are classified under (the same as ingest/artifacts.ts attemptKey). */
export function classKey(a: Pick<AttemptRecord, 'cell_id' | 'instance_id' | 'trial' | 'attempt'>): string {
  return `${a.cell_id}\u0000${a.instance_id}\u0000${a.trial}\u0000${a.attempt}`
}
