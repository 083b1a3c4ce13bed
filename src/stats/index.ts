/**
 * Harness Watch statistics: pure, deterministic functions over arrays, no I/O.
 * The specification and reference values are in shared/design/statistics.md.
 */

export { benjaminiHochberg } from './bh.js'
export {
  type BootstrapInterval,
  type BootstrapMethod,
  type BootstrapOptions,
  type BootstrapResult,
  type BootstrapUnavailable,
  bootstrapCostPerResolutionRatio,
  bootstrapMeanDifference,
  bootstrapRatioOfMeans,
  bootstrapRatiosOfMeans,
  type CostPerResolutionBlocks,
  chosenInterval,
  DEFAULT_B,
  DEFAULT_LEVEL,
  DEFAULT_SEED,
  MEAN_REASONS,
  type PairedBootstrap,
  type PairedMetric,
  type PairedStatistic,
  pairedBootstrap,
  pairedDifferenceColumn,
  ratioMomentColumns,
} from './bootstrap.js'
export {
  type BcaOutcome,
  bcaInterval,
  biasCorrection,
  type IntervalOutcome,
  jackknifeAcceleration,
  leaveOneOutMeans,
  percentileInterval,
  type Replicates,
} from './bootstrap-intervals.js'
export {
  bootstrapMean,
  type CostRatePoint,
  meanColumn,
  netBenefitColumn,
  pairedNetBenefit,
  paretoFrontier,
} from './cost-effectiveness.js'
export {
  costConditionalOnSuccess,
  expectedCostPerAttempt,
  portfolioCostPerResolution,
} from './cost-per-resolution.js'
export { RATIO_INTERVAL_COVERAGE, ratioIntervalCoverageNote } from './coverage.js'
export {
  describe,
  QUANTILE_METHOD,
  quantile,
  quantileSorted,
  type Summary,
  sortedCopy,
} from './descriptive.js'
export {
  type PairedOutcomeTable,
  RESOLVE_RATE_DIFFERENCE_METHOD,
  type ResolveRateDifference,
  resolveRateDifference,
  wilson,
} from './difference.js'
export {
  adaptiveAlternative,
  type DiscordantEValue,
  deficitAlternative,
  discordantEValue,
  discordantLikelihoodRatio,
} from './evalue.js'
export { halfBinomialCdf, halfBinomialSf, ratioToNumber } from './exact.js'
export {
  type ObfPlan,
  type ObfPlanInput,
  obfConstant,
  obfLook,
  obfPower,
  planObf,
} from './group-sequential.js'
export { type HolmResult, holm } from './holm.js'
export {
  type InteractionBlock,
  type InteractionOptions,
  type InteractionResult,
  pairedInteraction,
  signFlipP,
} from './interaction.js'
export {
  type McNemarDirection,
  type McNemarResult,
  mcnemarExact,
  mcnemarPMidTwoSided,
  mcnemarPOneSided,
  mcnemarPTwoSided,
} from './mcnemar.js'
export { normalCdf, normalQuantile } from './normal.js'
export {
  differences,
  geometricMeanOfRatios,
  logRatios,
  meanOfRatios,
  type PairedDifferenceSummary,
  pairedDifferences,
  type RatioSummary,
  ratioOfMeans,
} from './paired.js'
export { type PairedTResult, pairedTTest } from './paired-t.js'
export {
  type AveragedPassK,
  meanPassAtK,
  meanPassHatK,
  passAtK,
  passHatK,
  type TrialCounts,
} from './passk.js'
export {
  type ConnorInput,
  type ConnorResult,
  connorSampleSize,
  type McNemarPowerInput,
  type MdeInput,
  type MdeResult,
  mcnemarPower,
  minimumDetectableEffect,
} from './power.js'
export {
  createResamplePlan,
  forEachReplicateChunk,
  getResamplePlan,
  MAX_MATERIALIZED_INDICES,
  type ResamplePlan,
} from './resample-plan.js'
export { createRng, MAX_SEED, type SeededRng, seedState } from './rng.js'
export { type ReplicateQuantiles, select, selectedQuantiles, sortedQuantiles } from './select.js'
export { type SignTestResult, signTest } from './sign-test.js'
export { sortAscending } from './sort.js'
export {
  lnGamma,
  logChoose,
  logFactorial,
  regularizedIncompleteBeta,
  studentTCdf,
  studentTTwoSidedP,
} from './special.js'
export { logRatioWithSe, type RatioMoments, studentizedRatioInterval } from './studentized.js'
export { sum8, sumKernelModule } from './sum-kernel.js'
export {
  inverseNormalCombination,
  ratioOfTotalsTest,
  sdOfD,
  type TotalsMethod,
  type TotalsOptions,
  type TotalsTest,
} from './totals.js'
export {
  type LognormalNull,
  lognormalNullP,
  noiseModelSd,
  pairedLogSigma,
  type StageColumns,
  type TwoStageSample,
} from './totals-null.js'
export { defined, type Maybe, type Numbers, undefinedBecause } from './types.js'
export {
  WILCOXON_EXACT_MAX_N,
  type WilcoxonOptions,
  type WilcoxonResult,
  wilcoxonSignedRank,
} from './wilcoxon.js'
