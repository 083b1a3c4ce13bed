import type { WireApi } from '../manifest/harness-names.js'
import type { OfferedTool, ParsedRequest, Schema } from './types.js'

type Json = Record<string, unknown>

/** Which API a POST path speaks, matched by suffix so any prefix (`/v1`, `/v1beta`, none) works. */
export type RouteKind = WireApi | 'anthropic-count' | 'gemini-count'

/** Route of a POST path, or null when none matches. */
export function routeOf(pathname: string): RouteKind | null {
  if (/\/messages\/count_tokens$/.test(pathname)) return 'anthropic-count'
  if (/:countTokens$/.test(pathname)) return 'gemini-count'
  if (/\/chat\/completions$/.test(pathname)) return 'chat'
  if (/\/responses$/.test(pathname)) return 'responses'
  if (/\/messages$/.test(pathname)) return 'anthropic'
  if (/:(stream)?[gG]enerateContent$/.test(pathname)) return 'gemini'
  return null
}

/** Gemini puts the model id in the path: `…/models/<id>:generateContent`. */
export function geminiModelOf(pathname: string): string | null {
  return /models\/([^:/]+)/.exec(pathname)?.[1] ?? null
}

const ERROR_TEXT = /exit(?:ed)? (?:with )?(?:code|status)[:= ]*[1-9]|\bcommand failed\b|\berror\b/i

/**
 * Reduce a request body of the given API to a `ParsedRequest` (pure). `pathname` gives Gemini's model
 * and stream mode. Unknown or missing fields are tolerated: harnesses send many extras.
 */
export function parseRequest(api: WireApi, body: Json, pathname = ''): ParsedRequest {
  const parts = PARSERS[api](body)
  const stream = api === 'gemini' ? /:streamGenerateContent$/.test(pathname) : body.stream === true
  const model = api === 'gemini' ? (geminiModelOf(pathname) ?? 'scripted') : str(body.model) || 'scripted'
  const segments: string[] = []
  if (parts.system.trim() !== '') segments.push(JSON.stringify(parts.system))
  if (parts.tools.length > 0) {
    segments.push(
      JSON.stringify(
        parts.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.schema })),
      ),
    )
  }
  for (const m of parts.messages) segments.push(JSON.stringify(canonical(m)))
  const last = parts.toolResults.at(-1)
  return {
    api,
    stream,
    model,
    tools: parts.tools,
    toolResults: parts.toolResults.length,
    lastToolResult: last?.text ?? null,
    toolResultTexts: parts.toolResults.map((r) => r.text),
    lastToolError: last ? last.isError || ERROR_TEXT.test(last.text) : false,
    userText: collapse(parts.userText.join('\n')),
    contextText: `${parts.system}\n${parts.userText.join('\n')}`,
    jsonSchema: parts.jsonSchema,
    segments,
  }
}

interface Parts {
  system: string
  tools: OfferedTool[]
  messages: unknown[]
  userText: string[]
  toolResults: { text: string; isError: boolean }[]
  jsonSchema: Schema | null
}

const PARSERS: Record<WireApi, (body: Json) => Parts> = {
  chat: parseChat,
  responses: parseResponses,
  anthropic: parseAnthropic,
  gemini: parseGemini,
}

function parseChat(body: Json): Parts {
  const system: string[] = []
  const messages: unknown[] = []
  const userText: string[] = []
  const toolResults: Parts['toolResults'] = []
  for (const m of arr(body.messages)) {
    const role = str(obj(m).role)
    const content = obj(m).content
    if (role === 'system' || role === 'developer') {
      system.push(textOf(content))
      continue
    }
    messages.push(m)
    if (role === 'user') userText.push(textOf(content))
    if (role === 'tool' || role === 'function') toolResults.push({ text: textOf(content), isError: false })
  }
  const tools: OfferedTool[] = []
  for (const t of [...arr(body.tools), ...arr(body.functions)]) {
    const f = obj(obj(t).function ?? t)
    tools.push({
      name: str(f.name),
      description: str(f.description),
      schema: schemaOf(f.parameters),
      kind: str(obj(t).type) || 'function',
    })
  }
  const rf = obj(body.response_format)
  let jsonSchema: Schema | null = null
  if (rf.type === 'json_schema') jsonSchema = schemaOf(obj(rf.json_schema).schema) ?? {}
  else if (rf.type === 'json_object') jsonSchema = {}
  return { system: system.join('\n'), tools, messages, userText, toolResults, jsonSchema }
}

function parseResponses(body: Json): Parts {
  const system: string[] = []
  if (typeof body.instructions === 'string') system.push(body.instructions)
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : arr(body.input)
  const messages: unknown[] = []
  const userText: string[] = []
  const toolResults: Parts['toolResults'] = []
  for (const item of items) {
    const o = obj(item)
    const role = str(o.role)
    const type = str(o.type)
    if (role === 'system' || role === 'developer') {
      system.push(textOf(o.content))
      continue
    }
    messages.push(item)
    if (role === 'user') userText.push(textOf(o.content))
    if (type.endsWith('_output')) toolResults.push({ text: textOf(o.output), isError: false })
  }
  const tools: OfferedTool[] = []
  const addTool = (t: unknown, prefix: string, namespace?: string): void => {
    const o = obj(t)
    const type = str(o.type) || 'function'
    if (type === 'namespace') {
      for (const sub of arr(o.tools)) addTool(sub, `${prefix}${str(o.name)}.`, str(o.name))
    } else if (type === 'local_shell') {
      tools.push({ name: 'local_shell', description: 'local shell', schema: null, kind: 'local_shell' })
    } else {
      tools.push({
        name: `${prefix}${str(o.name) || type}`,
        description: str(o.description),
        schema: schemaOf(o.parameters),
        kind: type,
        ...(namespace ? { namespace } : {}),
      })
    }
  }
  for (const t of arr(body.tools)) addTool(t, '')
  const format = obj(obj(body.text).format)
  let jsonSchema: Schema | null = null
  if (format.type === 'json_schema') jsonSchema = schemaOf(format.schema) ?? {}
  else if (format.type === 'json_object') jsonSchema = {}
  return { system: system.join('\n'), tools, messages, userText, toolResults, jsonSchema }
}

function parseAnthropic(body: Json): Parts {
  const system: string[] = [textOf(body.system)]
  const messages: unknown[] = []
  const userText: string[] = []
  const toolResults: Parts['toolResults'] = []
  for (const m of arr(body.messages)) {
    messages.push(m)
    const role = str(obj(m).role)
    const content = obj(m).content
    if (role === 'system') system.push(textOf(content))
    if (role !== 'user') continue
    if (typeof content === 'string') {
      userText.push(content)
      continue
    }
    for (const block of arr(content)) {
      const b = obj(block)
      if (b.type === 'tool_result')
        toolResults.push({ text: textOf(b.content), isError: b.is_error === true })
      else if (typeof b.text === 'string') userText.push(b.text)
    }
  }
  const tools: OfferedTool[] = arr(body.tools).map((t) => {
    const o = obj(t)
    const schema = schemaOf(o.input_schema)
    return {
      name: str(o.name),
      description: str(o.description),
      schema,
      kind: schema ? 'function' : str(o.type) || 'server',
    }
  })
  const format = obj(body.output_format ?? obj(body.output_config).format)
  const jsonSchema = format.type === 'json_schema' ? (schemaOf(format.schema) ?? {}) : null
  return {
    system: system.filter((s) => s !== '').join('\n'),
    tools,
    messages,
    userText,
    toolResults,
    jsonSchema,
  }
}

function parseGemini(body: Json): Parts {
  const system = textOf(obj(body.systemInstruction).parts ?? body.systemInstruction)
  const messages: unknown[] = []
  const userText: string[] = []
  const toolResults: Parts['toolResults'] = []
  for (const c of arr(body.contents)) {
    messages.push(c)
    const role = str(obj(c).role) || 'user'
    for (const part of arr(obj(c).parts)) {
      const p = obj(part)
      if (p.functionResponse !== undefined) {
        toolResults.push({ text: JSON.stringify(obj(p.functionResponse).response ?? null), isError: false })
      } else if (role === 'user' && typeof p.text === 'string') userText.push(p.text)
    }
  }
  const tools: OfferedTool[] = []
  for (const t of arr(body.tools)) {
    for (const f of arr(obj(t).functionDeclarations)) {
      const o = obj(f)
      tools.push({
        name: str(o.name),
        description: str(o.description),
        schema: schemaOf(o.parametersJsonSchema ?? o.parameters),
        kind: 'function',
      })
    }
  }
  const g = obj(body.generationConfig)
  const jsonSchema =
    g.responseMimeType === 'application/json'
      ? (schemaOf(g.responseJsonSchema) ?? schemaOf(g.responseSchema) ?? {})
      : null
  return { system, tools, messages, userText, toolResults, jsonSchema }
}

const TEXT_PART = new Set(['text', 'input_text', 'output_text'])

/**
 * A message as a provider's cache sees it: cache breakpoints (`cache_control`) dropped and content
 * made of text parts only joined into one string. Harnesses move breakpoints to the newest message on
 * every turn, and Claude Code resends an earlier text block as a plain string; neither changes the
 * rendered prompt, so neither may break the cached prefix or change the token count.
 */
export function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical)
  if (!v || typeof v !== 'object') return v
  const out: Json = {}
  for (const [k, x] of Object.entries(v as Json)) {
    if (k === 'cache_control') continue
    out[k] = k === 'content' && isTextParts(x) ? x.map((p) => (p as Json).text).join('\n') : canonical(x)
  }
  return out
}

function isTextParts(v: unknown): v is unknown[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((p) => {
      const o = obj(p)
      return (
        TEXT_PART.has(str(o.type)) &&
        typeof o.text === 'string' &&
        Object.keys(o).every((k) => k === 'type' || k === 'text' || k === 'cache_control')
      )
    })
  )
}

/** The text inside any content shape: a string, an array of parts, `{text}`, `{content}`, `{parts}`. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content
      .map(textOf)
      .filter((s) => s !== '')
      .join('\n')
  if (content && typeof content === 'object') {
    const o = content as Json
    if (typeof o.text === 'string') return o.text
    if (o.content !== undefined) return textOf(o.content)
    if (o.parts !== undefined) return textOf(o.parts)
    if (typeof o.output === 'string') return o.output
  }
  return ''
}

/** Collapse runs of whitespace to one space and trim (harnesses re-wrap prompts). */
export function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim()
}

function schemaOf(v: unknown): Schema | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Schema) : null
}
function obj(v: unknown): Json {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {}
}
function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}
