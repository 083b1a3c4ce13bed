import { chatUsage } from '../usage.js'
import { dataFrame, halves, pieces, type Rendered, type RenderInput } from './common.js'

/**
 * OpenAI Chat Completions answer. Streaming: a role chunk, content or tool-call argument deltas, a
 * finish chunk, then (with `stream_options.include_usage`) a final `choices: []` chunk carrying usage,
 * and `[DONE]`. Without include_usage the finish chunk carries the usage (clients ignore it; proxies
 * can still measure).
 */
export function renderChat(input: RenderInput, includeUsage: boolean): Rendered {
  const { req, action, created } = input
  const id = input.id('chatcmpl-')
  const usage = chatUsage(input.usage)
  const isTool = action.kind === 'tool'
  const callId = isTool ? input.id('call_') : ''
  const argText = isTool ? JSON.stringify(action.args) : ''
  const finish = isTool ? 'tool_calls' : 'stop'
  if (!req.stream) {
    const message = isTool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: callId, type: 'function', function: { name: action.tool.name, arguments: argText } },
          ],
          refusal: null,
        }
      : { role: 'assistant', content: action.text, refusal: null }
    return {
      kind: 'json',
      body: {
        id,
        object: 'chat.completion',
        created,
        model: req.model,
        choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
        usage,
        system_fingerprint: 'fp_scripted',
      },
    }
  }
  const base = {
    id,
    object: 'chat.completion.chunk',
    created,
    model: req.model,
    system_fingerprint: 'fp_scripted',
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: object = {}) =>
    dataFrame({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      ...extra,
    })
  const frames: string[] = []
  if (isTool) {
    frames.push(
      chunk(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { index: 0, id: callId, type: 'function', function: { name: action.tool.name, arguments: '' } },
          ],
        },
        null,
      ),
    )
    for (const part of halves(argText)) {
      frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }, null))
    }
  } else {
    frames.push(chunk({ role: 'assistant', content: '' }, null))
    for (const part of pieces(action.text)) frames.push(chunk({ content: part }, null))
  }
  frames.push(chunk({}, finish, includeUsage ? {} : { usage }))
  if (includeUsage) frames.push(dataFrame({ ...base, choices: [], usage }))
  frames.push(dataFrame('[DONE]'))
  return { kind: 'sse', frames }
}
