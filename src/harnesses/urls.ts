/**
 * Base URLs per SDK family, from the bare origin of an attempt endpoint (harnesses.md §5.2):
 * OpenAI-style clients want `<origin>/v1`; the Anthropic and Gemini SDKs want the bare origin and
 * append `/v1/messages` or `/v1beta/models/…` themselves.
 */
export function bareOrigin(origin: string): string {
  return origin.replace(/\/+$/, '')
}

/** `<origin>/v1` for OpenAI Chat Completions and Responses clients. */
export function openaiBaseUrl(origin: string): string {
  return `${bareOrigin(origin)}/v1`
}

/** `<origin>/v1beta` for clients that take the Gemini API root with its version (Pi's google provider). */
export function geminiVersionedUrl(origin: string): string {
  return `${bareOrigin(origin)}/v1beta`
}
