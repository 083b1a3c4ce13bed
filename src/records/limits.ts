/**
 * Largest figures a ledger row or an attempt's telemetry may hold. Beyond them a value is an input
 * error (set to null with a reason), which also keeps every sum over rows and attempts finite.
 */

/** Tokens of one request or one attempt: the largest integer a double holds exactly. */
export const MAX_LEDGER_TOKENS = Number.MAX_SAFE_INTEGER

/** USD of one request or one attempt (a billion dollars). */
export const MAX_LEDGER_USD = 1e9

/** Milliseconds of one request or one attempt phase (about 31.7 years). */
export const MAX_LEDGER_MS = 1e12
