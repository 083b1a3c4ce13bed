import { HwError } from '../util/errors.js'

/** Bootstrap resamples allowed: the same range as the manifest's reporting.bootstrap_resamples. */
export const RESAMPLES_MIN = 200
export const RESAMPLES_MAX = 100_000

/**
 * Check a bootstrap resample count given on the command line (or to aggregate/compare): a whole
 * number from 200 to 100,000. Throws HwError `usage` naming the flag, before any work is done.
 */
export function checkResamples(n: number | undefined, flag = '--resamples'): void {
  if (n === undefined) return
  if (!Number.isInteger(n) || n < RESAMPLES_MIN || n > RESAMPLES_MAX) {
    throw new HwError(
      'usage',
      `${flag} must be a whole number from ${RESAMPLES_MIN} to ${RESAMPLES_MAX}, got ${n}`,
      { help: `the same range as the manifest's reporting.bootstrap_resamples (default 10000)` },
    )
  }
}

/** Commander parser for --resamples: an integer, then checked as above. */
export function parseResamplesOption(v: string): number {
  const n = Number(v)
  if (v.trim() === '' || !Number.isInteger(n)) {
    throw new HwError(
      'usage',
      `--resamples expects a whole number from ${RESAMPLES_MIN} to ${RESAMPLES_MAX}, got "${v}"`,
    )
  }
  checkResamples(n)
  return n
}
