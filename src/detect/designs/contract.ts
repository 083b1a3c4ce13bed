import type { SeededRng } from '../../stats/index.js'
import type { PairedBlock } from '../pairs.js'
import type { RerunTest, Signal } from '../schema.js'

/** What a design selects for a confirmation round, from the first run only. */
export interface SelectInput {
  /** Unconfirmed signals of breached comparisons, in decision order. */
  signals: readonly Signal[]
  /** The first run's pairs of a signal's comparison (whole panel). */
  pairs: (s: Signal) => readonly PairedBlock[]
  /** Quarantined, mixed-trial or otherwise unstable instances (F07). */
  unstable: ReadonlySet<string>
  /** confirmation.max_blocks. */
  maxBlocks: number
  /** confirmation.trials: rerun trials per block and cell (absent: the design's default). */
  trials?: number
}

export interface Selection {
  /** Instances to rerun, at most maxBlocks, in priority order. */
  instances: string[]
  /**
   * The blocks drawn at random, independently of any outcome or cost (known inclusion): the only
   * blocks a ratio signal is tested on. A prefix of a seeded permutation of the candidate pool.
   */
  sample: string[]
  /**
   * The estimation half: blocks of `sample` held out of the decision, on which the figure shown
   * after a confirmation is estimated (empty for designs that do not split).
   */
  estimate: string[]
  /** More blocks were wanted than maxBlocks. */
  capped: boolean
}

export interface DecideInput {
  /** The first-run signal being confirmed. */
  signal: Signal
  /** Its rerun blocks complete for the signal's metric (fresh draws, rerun data only). */
  rerun: readonly PairedBlock[]
  /** Rerun blocks complete for the outcome (the resolved-advantage excuse is tested on these). */
  outcome: readonly PairedBlock[]
  /** The random sample of the selection (ratio signals are tested only on these blocks). */
  sample: ReadonlySet<string>
  unstable: ReadonlySet<string>
  /** Declared one-sided level (confirmation.alpha). */
  alpha: number
  /** The first run's pairs of the signal's comparison (whole panel): the first stage of two-stage designs. */
  first: readonly PairedBlock[]
  /** The planned blocks of the rerun (known before it ran; fixes a two-stage design's weights). */
  decide: ReadonlySet<string>
  /** The estimation half (never used by the decision). */
  estimate: ReadonlySet<string>
  /** `rerun` holds each block's decision trials only (a trial split); absent: the whole rerun. */
  splitTrials?: boolean
}

export interface Verdict {
  holds: boolean
  test: RerunTest
  reason: string
}

/**
 * A confirmation design: how the blocks of a rerun are chosen and how the rerun decides.
 * `select` sees only the first run; `decide` sees only the rerun (and the signal it must confirm),
 * so a design's error rate can be measured by simulation (src/calibrate/) through these same calls.
 */
export interface ConfirmationDesign {
  name: string
  version: number
  /**
   * Attempts per block and cell of the rerun the design's measured error rates assume: the default of
   * confirmation.trials.
   */
  trials: number
  /**
   * The figure shown is estimated on half of each sampled block's rerun trials and the decision sees
   * only the other half (`decide` then receives the decision trials' blocks as `rerun`).
   */
  splitTrials?: boolean
  /** One sentence for the report, naming the test and the declared α. */
  statement(alpha: number): string
  select(input: SelectInput, rng: SeededRng): Selection
  decide(input: DecideInput): Verdict
}
