import type { AttemptRecord } from '../records/attempt.js'
import { HwError } from '../util/errors.js'

/** `<instance>\u0000<trial>`: one (instance, trial) pair of a leg. */
export function pairKey(instance: string, trial: number): string {
  return `${instance}\u0000${trial}`
}

/** What earlier runs of the same leg left in attempts.jsonl. */
export interface ResumeState {
  /** Pairs whose final attempt is recorded: skipped on rerun. */
  done: Map<string, AttemptRecord>
  /** Per pair: the highest attempt number recorded (the next attempt is this + 1). */
  lastAttempt: Map<string, number>
  /** Every recorded (instance, trial, attempt), to keep the ledger consistent with the records. */
  recorded: Set<string>
}

/** `<instance>\u0000<trial>\u0000<attempt>`. */
export function attemptKey(instance: string, trial: number, attempt: number): string {
  return `${instance}\u0000${trial}\u0000${attempt}`
}

export interface LegIdentity {
  experiment_id: string
  leg: string
  cell_id: string
  config_hash: string
  round: number
}

/**
 * Read the state a rerun resumes from (pure). Records of another experiment, leg, cell, config or
 * round mean the folder holds a different leg's results: HwError `resume_mismatch` (rerun with
 * --fresh). A pair is done when an attempt with `final: true` is recorded for it.
 */
export function resumeState(records: readonly AttemptRecord[], id: LegIdentity, where: string): ResumeState {
  const done = new Map<string, AttemptRecord>()
  const lastAttempt = new Map<string, number>()
  const recorded = new Set<string>()
  for (const r of records) {
    const other = (
      [
        ['experiment', r.experiment_id, id.experiment_id],
        ['leg', r.leg, id.leg],
        ['cell', r.cell_id, id.cell_id],
        ['config hash', r.config_hash, id.config_hash],
        ['round', r.round, id.round],
      ] as const
    ).find(([, a, b]) => a !== b)
    if (other) {
      throw new HwError(
        'resume_mismatch',
        `the output folder holds attempts of another ${other[0]} (${String(other[1]).slice(0, 16)}, expected ${String(other[2]).slice(0, 16)})`,
        { where, help: 'use another --out folder, or --fresh to move the old results aside' },
      )
    }
    const key = pairKey(r.instance_id, r.trial)
    recorded.add(attemptKey(r.instance_id, r.trial, r.attempt))
    lastAttempt.set(key, Math.max(lastAttempt.get(key) ?? 0, r.attempt))
    if (r.final) done.set(key, r)
  }
  return { done, lastAttempt, recorded }
}
