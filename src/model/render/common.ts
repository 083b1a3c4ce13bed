import type { Action, NeutralUsage, ParsedRequest } from '../types.js'

/** Everything a renderer needs to answer one request. */
export interface RenderInput {
  req: ParsedRequest
  action: Action
  usage: NeutralUsage
  /** Deterministic ids: `id('call_')` → `call_<hex>`, different on every call. */
  id: (prefix: string) => string
  /** Unix seconds stamped into the response. */
  created: number
}

/** A rendered answer: one JSON body, or the frames of a server-sent event stream (written in order). */
export type Rendered = { kind: 'json'; body: unknown } | { kind: 'sse'; frames: string[] }

/** `data: <json>` frame (OpenAI Chat, Gemini). */
export function dataFrame(value: unknown, eol = '\n'): string {
  return `data: ${typeof value === 'string' ? value : JSON.stringify(value)}${eol}${eol}`
}

/** `event: <name>` + `data: <json>` frame (Anthropic, OpenAI Responses). */
export function eventFrame(name: string, value: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`
}

/** Split a text into up to `n` pieces at spaces (streamed answers arrive in several deltas). */
export function pieces(text: string, n = 3): string[] {
  const words = text.split(/(?<= )/)
  if (words.length <= 1 || n <= 1) return [text]
  const per = Math.ceil(words.length / n)
  const out: string[] = []
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''))
  return out
}

/** Split a string in two halves (tool-call arguments arrive in more than one delta). */
export function halves(s: string): string[] {
  if (s.length < 2) return [s]
  const mid = Math.floor(s.length / 2)
  return [s.slice(0, mid), s.slice(mid)]
}

/** Output text of an action, as counted for output tokens: the text, or tool name + JSON arguments. */
export function outputText(action: Action): string {
  return action.kind === 'text' ? action.text : `${action.tool.name}${JSON.stringify(action.args)}`
}
