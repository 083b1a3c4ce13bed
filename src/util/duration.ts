/**
 * Limits of waiting. Node's timers (setTimeout, AbortSignal.timeout, timers/promises) hold a delay in
 * a signed 32-bit count of milliseconds: a longer delay is replaced by 1 ms with only a runtime
 * warning. Every duration a manifest or task accepts is therefore bounded by these.
 */

/** Longest delay a Node timer honours, ms (2^31 − 1, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1

/** Longest duration in whole seconds a timer honours (2,147,483 s). */
export const MAX_TIMER_S = Math.floor(MAX_TIMER_MS / 1000)

/** The message of a duration over its range, e.g. `at most 2147483 s (about 24.8 days) …`. */
export function durationRangeMessage(max: number, unit: 's' | 'ms'): string {
  const days = (unit === 's' ? max : max / 1000) / 86_400
  return `at most ${max} ${unit} (about ${days.toFixed(1)} days): the longest wait a timer can honour`
}
