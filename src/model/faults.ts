import type { WireApi } from '../manifest/harness-names.js'
import { uniform } from './draw.js'
import type { ScriptedSettings } from './types.js'

/** An injected failure: an HTTP error answer, or a request never answered. */
export type Fault = 'none' | '429' | '500' | 'hang'

/** Seconds a 429 tells the client to wait (`retry-after`). */
export const RETRY_AFTER_S = 1

/**
 * The fault for one request, drawn from (seed, task, trial, attempt, step, repeat): one uniform number
 * split into [0, rate_429) → 429, [.., + rate_500) → 500, [.., + hang_rate) → hang. `repeat` counts
 * earlier requests of the same attempt at the same step, so a client's retry gets a fresh draw (a 429
 * is transient) while the whole sequence stays deterministic.
 */
export function drawFault(
  faults: ScriptedSettings['faults'],
  key: { seed: number; task: string; trial: number; attempt: number; step: number; repeat: number },
): Fault {
  const u = uniform('fault', key.seed, key.task, key.trial, key.attempt, key.step, key.repeat)
  let edge = faults.rate_429
  if (u < edge) return '429'
  edge += faults.rate_500
  if (u < edge) return '500'
  edge += faults.hang_rate
  if (u < edge) return 'hang'
  return 'none'
}

/** Error body shaped as each provider sends it, for a status code and a message. */
export function errorBody(api: WireApi | null, status: number, message: string): Record<string, unknown> {
  const rate = status === 429
  switch (api) {
    case 'anthropic':
      return {
        type: 'error',
        error: {
          type: rate ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error',
          message,
        },
      }
    case 'gemini':
      return {
        error: {
          code: status,
          message,
          status: rate ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT',
        },
      }
    default:
      return {
        error: {
          message,
          type: rate ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error',
          param: null,
          code: rate ? 'rate_limit_exceeded' : null,
        },
      }
  }
}

/**
 * Whether the prompt cache is off for requests of `cell`: the model's `caching` setting, overridden by
 * the cell's injected change (`cells.<id>.caching`). A request without a cell uses the model setting.
 */
export function cachingFor(
  settings: Pick<ScriptedSettings, 'caching' | 'cells'>,
  cell: string | undefined,
): boolean {
  const injected = cell === undefined ? undefined : settings.cells?.[cell]?.caching
  return injected ?? settings.caching
}
