import { geminiUsage } from '../usage.js'
import { dataFrame, pieces, type Rendered, type RenderInput } from './common.js'

/**
 * Gemini generateContent answer. `streamGenerateContent?alt=sse` sends `data:` frames (CRLF-separated,
 * as Google does), the last carrying the finish reason and usage; without `alt=sse` the stream is one
 * JSON array of the same chunks; generateContent answers one object.
 */
export function renderGemini(input: RenderInput, sse: boolean): Rendered {
  const { req, action } = input
  const responseId = input.id('')
  const usageMetadata = geminiUsage(input.usage)
  const base = { modelVersion: req.model, responseId }
  const candidate = (parts: unknown[], finish: boolean) => ({
    content: { role: 'model', parts },
    ...(finish ? { finishReason: 'STOP' } : {}),
    index: 0,
  })
  const whole =
    action.kind === 'tool'
      ? [{ functionCall: { name: action.tool.name, args: action.args } }]
      : [{ text: action.text }]
  if (!req.stream)
    return { kind: 'json', body: { candidates: [candidate(whole, true)], usageMetadata, ...base } }
  const chunks: unknown[] = []
  if (action.kind === 'tool') {
    chunks.push({ candidates: [candidate(whole, true)], usageMetadata, ...base })
  } else {
    const parts = pieces(action.text)
    parts.forEach((text, i) => {
      const last = i === parts.length - 1
      chunks.push({ candidates: [candidate([{ text }], last)], ...(last ? { usageMetadata } : {}), ...base })
    })
  }
  if (!sse) return { kind: 'json', body: chunks }
  return { kind: 'sse', frames: chunks.map((c) => dataFrame(c, '\r\n')) }
}
