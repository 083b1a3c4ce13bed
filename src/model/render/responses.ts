import { responsesUsage } from '../usage.js'
import { eventFrame, pieces, type Rendered, type RenderInput } from './common.js'

/**
 * OpenAI Responses answer: one output item (a message, a `function_call`, or a `local_shell_call` for
 * Codex's local_shell tool). Streaming: `response.created`, `response.in_progress`,
 * `response.output_item.added`, text or argument deltas and their `…done`, `response.output_item.done`,
 * `response.completed` (with usage); every event carries a `sequence_number`.
 */
export function renderResponses(input: RenderInput, body: Record<string, unknown>): Rendered {
  const { req, action, created } = input
  const respId = input.id('resp_')
  const usage = responsesUsage(input.usage)
  let item: Record<string, unknown>
  if (action.kind === 'tool' && action.tool.kind === 'local_shell') {
    item = {
      type: 'local_shell_call',
      id: input.id('lsh_'),
      call_id: input.id('call_'),
      status: 'completed',
      action: { type: 'exec', command: action.args.command, env: {} },
    }
  } else if (action.kind === 'tool') {
    // A namespaced tool (Codex's MCP servers) is called by namespace + function name, never by the
    // flattened name: Codex answers `unsupported call` to that (rig.md §2.2).
    const ns = action.tool.namespace
    item = {
      type: 'function_call',
      id: input.id('fc_'),
      call_id: input.id('call_'),
      ...(ns ? { namespace: ns, name: action.tool.name.slice(ns.length + 1) } : { name: action.tool.name }),
      arguments: JSON.stringify(action.args),
      status: 'completed',
    }
  } else {
    item = {
      type: 'message',
      id: input.id('msg_'),
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: action.text, annotations: [], logprobs: [] }],
    }
  }
  const base = {
    id: respId,
    object: 'response',
    created_at: created,
    model: req.model,
    output: [] as unknown[],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    tool_choice: body.tool_choice ?? 'auto',
    tools: [],
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    error: null,
    incomplete_details: null,
  }
  const done = {
    ...base,
    status: 'completed',
    output: [item],
    usage,
    ...(action.kind === 'text' ? { output_text: action.text } : {}),
  }
  if (!req.stream) return { kind: 'json', body: done }
  const frames: string[] = []
  let seq = 0
  const ev = (type: string, payload: Record<string, unknown>) =>
    frames.push(eventFrame(type, { type, sequence_number: seq++, ...payload }))
  ev('response.created', { response: { ...base, status: 'in_progress', usage: null } })
  ev('response.in_progress', { response: { ...base, status: 'in_progress', usage: null } })
  const at = { item_id: item.id, output_index: 0 }
  if (item.type === 'message' && action.kind === 'text') {
    ev('response.output_item.added', {
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    })
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] }
    ev('response.content_part.added', { ...at, content_index: 0, part })
    for (const delta of pieces(action.text)) {
      ev('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] })
    }
    ev('response.output_text.done', { ...at, content_index: 0, text: action.text, logprobs: [] })
    ev('response.content_part.done', { ...at, content_index: 0, part: { ...part, text: action.text } })
  } else if (item.type === 'function_call') {
    ev('response.output_item.added', {
      output_index: 0,
      item: { ...item, arguments: '', status: 'in_progress' },
    })
    ev('response.function_call_arguments.delta', { ...at, delta: item.arguments })
    ev('response.function_call_arguments.done', { ...at, arguments: item.arguments })
  } else {
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } })
  }
  ev('response.output_item.done', { output_index: 0, item })
  ev('response.completed', { response: done })
  return { kind: 'sse', frames }
}
