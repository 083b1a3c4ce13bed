import type { ObservedApi } from './observe.js'

/** Errors the proxy answers itself, each in the shape the harness's SDK understands. */
export type ProxyErrorKind =
  | 'bad_request'
  | 'unknown_key'
  | 'budget_exceeded'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'request_too_large'
  | 'unrecordable'

export interface ProviderError {
  status: number
  body: string
}

const MESSAGES: Record<ProxyErrorKind, string> = {
  bad_request: 'Bad request: the request target could not be parsed as a URL.',
  unknown_key: 'Unknown API key: this proxy only accepts the per-attempt key it issued.',
  budget_exceeded: 'Budget exceeded: this attempt has used its request or spend budget.',
  upstream_unreachable: 'The upstream model server could not be reached.',
  upstream_timeout: 'The upstream model server did not answer in time.',
  request_too_large: 'Request too large: the request body (decompressed) is over the proxy limit.',
  unrecordable: 'Refused: the recording proxy could not record this request, so it was not forwarded.',
}

/**
 * A provider-shaped error body for a request on `api`:
 * - OpenAI (chat, responses, other): `{"error":{"message","type","param","code"}}`; budget → 429
 *   `insufficient_quota` / `budget_exceeded` (Codex and the OpenAI SDKs treat it as quota, not a blip).
 * - Anthropic: `{"type":"error","error":{"type","message"}}`; budget → 400 `invalid_request_error`
 *   (Anthropic's low-credit answer, which Claude Code does not retry).
 * - Gemini: `{"error":{"code","message","status"}}`; budget → 429 `RESOURCE_EXHAUSTED`.
 * Unparsable request target → 400; unknown key → 401 in each shape; unreachable → 502; timeout → 504;
 * a body over the proxy's limit → 413.
 */
export function providerError(api: ObservedApi, kind: ProxyErrorKind): ProviderError {
  const message = MESSAGES[kind]
  if (api === 'anthropic') {
    const table: Record<ProxyErrorKind, [number, string]> = {
      bad_request: [400, 'invalid_request_error'],
      unknown_key: [401, 'authentication_error'],
      budget_exceeded: [400, 'invalid_request_error'],
      upstream_unreachable: [502, 'api_error'],
      upstream_timeout: [504, 'api_error'],
      request_too_large: [413, 'request_too_large'],
      unrecordable: [500, 'api_error'],
    }
    const [status, type] = table[kind]
    return { status, body: JSON.stringify({ type: 'error', error: { type, message } }) }
  }
  if (api === 'gemini') {
    const table: Record<ProxyErrorKind, [number, string]> = {
      bad_request: [400, 'INVALID_ARGUMENT'],
      unknown_key: [401, 'UNAUTHENTICATED'],
      budget_exceeded: [429, 'RESOURCE_EXHAUSTED'],
      upstream_unreachable: [502, 'UNAVAILABLE'],
      upstream_timeout: [504, 'DEADLINE_EXCEEDED'],
      request_too_large: [413, 'INVALID_ARGUMENT'],
      unrecordable: [500, 'INTERNAL'],
    }
    const [status, code] = table[kind]
    return { status, body: JSON.stringify({ error: { code: status, message, status: code } }) }
  }
  const table: Record<ProxyErrorKind, [number, string, string]> = {
    bad_request: [400, 'invalid_request_error', 'bad_request'],
    unknown_key: [401, 'invalid_request_error', 'invalid_api_key'],
    budget_exceeded: [429, 'insufficient_quota', 'budget_exceeded'],
    upstream_unreachable: [502, 'server_error', 'upstream_unreachable'],
    upstream_timeout: [504, 'server_error', 'upstream_timeout'],
    request_too_large: [413, 'invalid_request_error', 'request_too_large'],
    unrecordable: [500, 'server_error', 'request_unrecordable'],
  }
  const [status, type, code] = table[kind]
  return { status, body: JSON.stringify({ error: { message, type, param: null, code } }) }
}

/** The ledger error class of an upstream HTTP status (the request was forwarded and answered). */
export function errorClassOfStatus(status: number): string {
  if (status === 429) return 'rate_limited'
  if (status === 401 || status === 403) return 'upstream_auth'
  if (status === 402) return 'budget_exceeded'
  if (status >= 500) return 'upstream_5xx'
  return 'upstream_4xx'
}
