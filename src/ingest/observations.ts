import type { AnomalyKind, ClassFinding, OutcomeClass, TelemetryClass } from '../classify/classes.js'
import type { BlockReason, EnvironmentStamp, MetricName } from '../records/comparison.js'
import type { Coverage } from '../records/ledger.js'
import type { InputError } from './jsonl.js'
import type { TrialRequests } from './trial-requests.js'

/**
 * The one shape both front doors reduce their input to before any statistic: experiment artifacts
 * (attempts.jsonl of every leg) and published per-instance results. Blocks and statistics are built
 * from these only, so both paths share every line of the comparison.
 */

export type FinalOutcome = 'resolved' | 'unresolved' | 'infra_error' | 'ungraded'

/** What is known about one cell's one trial on one instance: the final attempt's outcome, resources summed. */
export interface TrialObservation {
  cell: string
  instance: string
  trial: number
  /** Outcome of the final attempt (retries are new attempts; the last one counts). */
  outcome: FinalOutcome
  exitClass: string | null
  /** Attempts run in this trial (intent-to-treat: all of them are summed into `metrics`). */
  attempts: number
  /** Worst telemetry coverage over the trial's attempts. */
  coverage: Coverage
  coverageDetail: string | null
  /** Attempts of this trial by telemetry coverage. */
  attemptCoverage: Record<Coverage, number>
  /** Sums over every attempt of the trial; null when any attempt did not report the value. */
  metrics: Record<MetricName, number | null>
  /** The trial's proxy requests by role and their parts, over every attempt (absent: not read). */
  requests?: TrialRequests | null
  /** Request shape of the trial's final attempt (sizes and counts at the proxy). */
  shape: {
    firstRequestBytes: number | null
    firstRequestTools: number | null
    auxRequests: number | null
  }
  /** Identity seen in the rows, for the header (versions, config hashes and models observed). */
  identity: {
    harnessVersion: string | null
    configHash: string | null
    models: string[]
    /** Container backend: the image id (sha256:…) the final attempt ran in; absent elsewhere. */
    imageId?: string | null
  }
  /** Problems that make the block incomplete (duplicates, drift, model mismatch, quarantine…). */
  reasons: BlockReason[]
  /** Earliest start / latest end over the trial's attempts (ISO-8601, from the rows). */
  startedAt: string | null
  endedAt: string | null
  /** Each attempt's failure class (src/classify); absent for published results, which carry none. */
  classes?: AttemptClassView[]
  /** Bridge tasks: tool calls over the trial's attempts and how many failed (error or invalid_arguments). */
  tools?: { calls: number; failed: number } | null
  /**
   * Multi-turn bridge tasks: the simulated user's proxy requests and spend (USD; null when unpriced or
   * unmeasured) over the trial's attempts. Never part of `metrics` (the cell's spend).
   */
  userSimulation?: { dialogues: number; requests: number; spend_usd: number | null } | null
  /**
   * Each attempt's ATIF trajectory file, relative to the artifacts folder (`<artifact>/<logs_dir>/
   * trajectory.atif.json`), in attempt order; only paths that stay inside the artifact.
   */
  atif?: string[]
}

/** One attempt's classification as the comparison keeps it. */
export interface AttemptClassView {
  attempt: number
  final: boolean
  outcome_class: OutcomeClass | null
  reason: string | null
  telemetry_class: TelemetryClass
  anomaly: AnomalyKind | null
  partial_usage: boolean
  /** Malformed UTF-8 sequences in the attempt's diff, replaced with U+FFFD (deliverable.non_utf8; 0: none). */
  non_utf8?: number
  /** Spend as logged (raw) and without suspected duplicates; null when unknown. */
  raw_spend_usd: number | null
  dedup_spend_usd: number | null
}

export type CellRole = 'baseline' | 'treatment' | 'other'

/** A compared cell (or a published system) as declared. */
export interface CellInput {
  id: string
  role: CellRole
  label: string
  harness: string
  versionDeclared: string | null
  configHash: string | null
  api: string | null
  modelDeclared: string | null
  /**
   * Several-model experiments: the cell's model route name (null = the top-level route) and its harness
   * configuration key (src/manifest/models.ts). Absent: one model, every cell pairs with every other.
   */
  modelRoute?: string | null
  harnessKey?: string
  /** Trials planned per instance (k). */
  trials: number
}

/** Everything `buildComparison` needs; produced by the artifact reader or the published-results reader. */
export interface ComparisonInput {
  kind: 'experiment' | 'published'
  experimentId: string
  runId: string | null
  round: number
  cells: CellInput[]
  baseline: string
  treatments: string[]
  /** Planned instances (the panel), quarantined ones included. */
  instances: string[]
  quarantine: string[]
  observations: TrialObservation[]
  /** Reasons known before reading rows, e.g. a missing leg: every (cell, instance) it covered. */
  preReasons: Array<{ instance: string; reason: BlockReason }>
  missingLegs: Array<{ leg: string; cell: string; shard: number; artifact: string; reason: string }>
  inputErrors: InputError[]
  inputs: Array<{ path: string; sha256: string }>
  stamp: {
    manifestSha256: string | null
    planSha256: string | null
    model: { declared: string | null; provider: string | null; api: string | null }
    panel: { family: string | null; revision: string | null; source: string | null }
    verifier: string | null
    budgets: string | null
    retries: string | null
    telemetrySource: string | null
    thresholds: Record<string, number> | null
    /** Sandbox backends the legs ran in, with their canary result and leg count (leg.json). */
    isolation?: Array<{ backend: string; canary: string | null; legs: number }>
    /** Container backend: the distinct environments of the final attempts. */
    environments?: EnvironmentStamp[]
  }
  options: {
    resamples: number
    seed: number
    level: number
    /** USD a resolution is worth (manifest reporting.value_per_resolution_usd), for the net benefit. */
    valuePerResolutionUsd?: number | null
    /** Adjustment across every comparison and metric (manifest reporting.multiplicity); default holm. */
    multiplicity?: 'holm' | 'benjamini-hochberg'
  }
  notes: string[]
  /**
   * Confirmation rounds: split each block's trials into decision and estimation trials, seeded by
   * the plan's seed (compare/trial-halves.ts); absent: no split.
   */
  trialSplit?: { seed: number }
  /** Legs read from a re-upload of a later run attempt in place of earlier uploads. */
  reuploads?: Array<{ leg: string; read: string; run_attempt: number; replaces: string[] }>
  /** Legs that ran under another manifest version or config hash than the plan (experiments only). */
  drift?: LegDrift[]
  /** Findings across attempts from the classifier (clustered timeouts, shared signatures, thin cells). */
  classFindings?: ClassFinding[]
}

/** A leg whose leg.json disagrees with the plan: the values it states where they differ, else null. */
export interface LegDrift {
  leg: string
  cell: string
  /** leg.json, relative to the artifacts folder. */
  file: string
  /** The manifest sha256 the leg states, when it is not the plan's. */
  manifest_sha256: string | null
  /** The config hash the leg states, when it is not the planned one for its cell. */
  config_hash: string | null
}

/** All metric values null: a trial that reported nothing. */
export function emptyMetrics(): Record<MetricName, number | null> {
  return {
    spend_usd: null,
    proxy_requests: null,
    input_tokens: null,
    input_fresh_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    wall_s: null,
  }
}
