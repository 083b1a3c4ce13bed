import type { NeutralUsage } from './types.js'

/*
 * Usage objects in each provider's own semantics (design/telemetry.md, "Cache semantics"):
 * OpenAI Chat `prompt_tokens` and Responses `input_tokens` INCLUDE the cached tokens; Anthropic
 * `input_tokens` EXCLUDES cache reads and cache writes; Gemini `promptTokenCount` includes
 * `cachedContentTokenCount`.
 */

/** OpenAI Chat Completions `usage`. */
export function chatUsage(u: NeutralUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.inputTotal,
    completion_tokens: u.output,
    total_tokens: u.inputTotal + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

/** OpenAI Responses `usage`. */
export function responsesUsage(u: NeutralUsage): Record<string, unknown> {
  return {
    input_tokens: u.inputTotal,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.inputTotal + u.output,
  }
}

/** Anthropic Messages `usage`: `input_tokens` = total − cache reads − cache writes. */
export function anthropicUsage(u: NeutralUsage): Record<string, unknown> {
  return {
    input_tokens: u.inputTotal - u.cacheRead - u.cacheWrite,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: u.output,
    service_tier: 'standard',
  }
}

/** Gemini `usageMetadata` (`cachedContentTokenCount` only when something was read, as Gemini does). */
export function geminiUsage(u: NeutralUsage): Record<string, unknown> {
  return {
    promptTokenCount: u.inputTotal,
    candidatesTokenCount: u.output,
    totalTokenCount: u.inputTotal + u.output,
    ...(u.cacheRead > 0 ? { cachedContentTokenCount: u.cacheRead } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: u.inputTotal }],
  }
}
