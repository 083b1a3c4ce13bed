import { anthropicUsage } from '../usage.js'
import { eventFrame, halves, pieces, type Rendered, type RenderInput } from './common.js'

/**
 * Anthropic Messages answer. Streaming: `message_start` (input-side usage), `ping`,
 * `content_block_start` / `…_delta` (text_delta or input_json_delta) / `…_stop`, `message_delta`
 * (stop reason and the usage) and `message_stop`.
 */
export function renderAnthropic(input: RenderInput): Rendered {
  const { req, action } = input
  const id = input.id('msg_')
  const usage = anthropicUsage(input.usage)
  const isTool = action.kind === 'tool'
  const toolId = isTool ? input.id('toolu_') : ''
  const content = isTool
    ? [{ type: 'tool_use', id: toolId, name: action.tool.name, input: action.args }]
    : [{ type: 'text', text: action.text }]
  const stop = isTool ? 'tool_use' : 'end_turn'
  const message = { id, type: 'message', role: 'assistant', model: req.model }
  if (!req.stream) {
    return {
      kind: 'json',
      body: { ...message, content, stop_reason: stop, stop_sequence: null, usage },
    }
  }
  const frames: string[] = [
    eventFrame('message_start', {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
    eventFrame('ping', { type: 'ping' }),
  ]
  if (isTool) {
    frames.push(
      eventFrame('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: toolId, name: action.tool.name, input: {} },
      }),
    )
    for (const part of halves(JSON.stringify(action.args))) {
      frames.push(
        eventFrame('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: part },
        }),
      )
    }
  } else {
    frames.push(
      eventFrame('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
    )
    for (const part of pieces(action.text)) {
      frames.push(
        eventFrame('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: part },
        }),
      )
    }
  }
  frames.push(
    eventFrame('content_block_stop', { type: 'content_block_stop', index: 0 }),
    eventFrame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage,
    }),
    eventFrame('message_stop', { type: 'message_stop' }),
  )
  return { kind: 'sse', frames }
}
