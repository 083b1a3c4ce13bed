import { createHash } from 'node:crypto'
import type { LedgerRow } from '../records/ledger.js'
import type { ObservedApi } from './observe.js'
import { MAX_SUMMARY_DEPTH, MAX_SUMMARY_NODES, Unsummarizable } from './request-shape.js'

/** The request parts a ledger row keeps: sizes, hashes and allowlisted parameter values only. */
export type RequestParts = NonNullable<LedgerRow['request_parts']>
export type MessageRoles = NonNullable<RequestParts['message_roles']>

/**
 * What the role rules read from one request, kept in memory only (never written): hashes, tool
 * names, message counts and whether the prompt asks for a title, a summary or a condensed history.
 */
export interface RequestFeatures {
  api: ObservedApi
  model: string | null
  tools: number
  toolNames: ReadonlySet<string>
  systemHash: string | null
  bodyHash: string
  /** Messages that are not system/developer ones (the conversation). */
  conversation: number
  /** Where the prompt asks for each thing: the system prompt, the latest message, or nowhere. */
  asks: { title: Where; summary: Where; condense: Where }
  /** The first conversation message opens with a summary of an earlier conversation. */
  summaryHead: boolean
  /** Running hash and running bytes after each prefix segment (tools and system, then each message). */
  chain: { hash: string; bytes: number }[]
}
export type Where = 'system prompt' | 'latest message' | null

/** The parts of one request and the features its role is decided by (null when the body is unreadable). */
export interface RequestReading {
  parts: RequestParts
  features: RequestFeatures | null
}

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const arr = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : null)

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex')
/** Hashes as rows keep them: the first 16 hex digits of SHA-256 (enough to tell prompts apart). */
export const shortHash = (s: string | Buffer): string => sha(s).slice(0, 16)

/** Characters of a message's text the markers are searched in (a prompt states its task early). */
const TEXT_WINDOW = 4096

/** A prompt that asks for a conversation title (OpenCode's title generator, Claude Code's topic title). */
export const TITLE_ASK =
  /\btitle generator\b|\bthread title\b|\b(generate|write|create|extract|give|suggest|output|produce)\b[^.\n]{0,60}\btitle\b/i
/** A prompt that asks for a summary. */
export const SUMMARY_ASK = /\bsummar(y|ies|ize|izes|ise|ises|izing|ising)\b/i
/**
 * A prompt that asks to condense the conversation so far (Claude Code's compact, Codex's checkpoint
 * compaction, Gemini CLI's history compression, OpenCode's continuation prompt, OpenHands' condenser).
 */
export const CONDENSE_ASK =
  /context checkpoint compaction|summary of the conversation so far|detailed summary of the conversation|summarizes internal chat history|state summary for an interactive agent|prompt for continuing (our|the|this) conversation|\b(compact|condense)(ing)? (the|this|our) conversation/i
/** A conversation that opens with the summary of an earlier one (history replaced after compaction). */
export const SUMMARY_HEAD =
  /this session is being continued from a previous conversation|<state_snapshot>|produced a summary of its thinking process|<previous summary>|summary of (the|our) (previous|earlier) conversation/i

/** Parameters a row keeps, by the name it keeps them under, and the type each must have. */
const PARAM_TYPES = {
  temperature: 'number',
  top_p: 'number',
  top_k: 'int',
  max_output_tokens: 'int',
  reasoning_effort: 'word',
  thinking: 'word',
  thinking_budget: 'int',
  stream: 'boolean',
  tool_choice: 'word',
  parallel_tool_calls: 'boolean',
  seed: 'int',
  n: 'int',
  frequency_penalty: 'number',
  presence_penalty: 'number',
  service_tier: 'word',
  verbosity: 'word',
  truncation: 'word',
  store: 'boolean',
} as const
export type ParamName = keyof typeof PARAM_TYPES
export const PARAM_NAMES = Object.keys(PARAM_TYPES) as ParamName[]
/** A word-valued parameter: a short identifier, nothing else (a longer or odd string is rejected). */
const WORD = /^[A-Za-z0-9_.:-]{1,32}$/

/** The allowlisted parameters of a request: typed values, and the names whose value broke its type. */
export function requestParams(
  api: ObservedApi,
  b: Obj,
): { params: RequestParts['params']; rejected: string[] } {
  const gen = obj(b.generationConfig) ?? obj(b.generation_config) ?? {}
  const thinkingCfg = obj(gen.thinkingConfig) ?? obj(gen.thinking_config)
  const thinking = obj(b.thinking)
  const reasoning = obj(b.reasoning)
  const text = obj(b.text)
  const choice = b.tool_choice
  const raw: Partial<Record<ParamName, unknown>> =
    api === 'gemini'
      ? {
          temperature: gen.temperature,
          top_p: gen.topP ?? gen.top_p,
          top_k: gen.topK ?? gen.top_k,
          max_output_tokens: gen.maxOutputTokens ?? gen.max_output_tokens,
          thinking_budget: thinkingCfg?.thinkingBudget ?? thinkingCfg?.thinking_budget,
          reasoning_effort: thinkingCfg?.thinkingLevel ?? thinkingCfg?.thinking_level,
          seed: gen.seed,
          n: gen.candidateCount,
          frequency_penalty: gen.frequencyPenalty,
          presence_penalty: gen.presencePenalty,
          tool_choice: obj(obj(b.toolConfig)?.functionCallingConfig)?.mode,
        }
      : {
          temperature: b.temperature,
          top_p: b.top_p,
          top_k: b.top_k,
          max_output_tokens: b.max_completion_tokens ?? b.max_tokens ?? b.max_output_tokens,
          reasoning_effort: b.reasoning_effort ?? reasoning?.effort,
          thinking: thinking?.type,
          thinking_budget: thinking?.budget_tokens,
          stream: b.stream,
          // An object choice keeps only its type ("function", "tool", "any"), never a name.
          tool_choice: obj(choice) ? obj(choice)?.type : choice,
          parallel_tool_calls: b.parallel_tool_calls,
          seed: b.seed,
          n: b.n,
          frequency_penalty: b.frequency_penalty,
          presence_penalty: b.presence_penalty,
          service_tier: b.service_tier,
          verbosity: b.verbosity ?? text?.verbosity,
          truncation: b.truncation,
          store: b.store,
        }
  const params: RequestParts['params'] = {}
  const rejected: string[] = []
  for (const name of PARAM_NAMES) {
    const v = raw[name]
    if (v === undefined || v === null) continue
    const t = PARAM_TYPES[name]
    const ok =
      (t === 'number' && typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= 1e6) ||
      (t === 'int' && typeof v === 'number' && Number.isSafeInteger(v) && v >= -1 && v <= 1e9) ||
      (t === 'boolean' && typeof v === 'boolean') ||
      (t === 'word' && typeof v === 'string' && WORD.test(v))
    if (ok) (params as Record<string, unknown>)[name] = v
    else rejected.push(name)
  }
  return { params, rejected }
}

/** A conversation message in wire order with the role it counts under. */
interface Msg {
  value: unknown
  role: keyof MessageRoles
}

/** The first {@link TEXT_WINDOW} characters of a message's text parts, never more. */
function textOf(v: unknown): string {
  if (typeof v === 'string') return v.slice(0, TEXT_WINDOW)
  const o = obj(v)
  if (o) {
    if (typeof o.text === 'string') return o.text.slice(0, TEXT_WINDOW)
    return textOf(o.content ?? o.parts ?? null)
  }
  const a = arr(v)
  if (!a) return ''
  let out = ''
  for (const part of a.slice(0, 16)) {
    const p = obj(part)
    const t = typeof part === 'string' ? part : typeof p?.text === 'string' ? p.text : ''
    out += `${t.slice(0, TEXT_WINDOW - out.length)}\n`
    if (out.length >= TEXT_WINDOW) break
  }
  return out
}

const SYSTEM_ROLES = new Set(['system', 'developer'])

function roleOfChat(m: unknown): keyof MessageRoles {
  const r = obj(m)?.role
  if (typeof r === 'string' && SYSTEM_ROLES.has(r)) return 'system'
  if (r === 'user' || r === 'assistant') return r
  if (r === 'tool' || r === 'function') return 'tool'
  return 'other'
}

function roleOfResponsesItem(m: unknown): keyof MessageRoles {
  const o = obj(m)
  if (!o) return 'other'
  if (typeof o.role === 'string') return roleOfChat(o)
  const t = o.type
  if (t === 'function_call_output' || t === 'custom_tool_call_output' || t === 'local_shell_call_output')
    return 'tool'
  if (t === 'function_call' || t === 'custom_tool_call' || t === 'reasoning' || t === 'local_shell_call')
    return 'assistant'
  return 'other'
}

function roleOfAnthropic(m: unknown): keyof MessageRoles {
  const o = obj(m)
  if (o?.role === 'assistant') return 'assistant'
  if (o?.role !== 'user') return roleOfChat(o)
  const parts = arr(o.content)
  if (parts && parts.length > 0 && parts.every((p) => obj(p)?.type === 'tool_result')) return 'tool'
  return 'user'
}

function roleOfGemini(m: unknown): keyof MessageRoles {
  const o = obj(m)
  if (o?.role === 'model') return 'assistant'
  const parts = arr(o?.parts)
  if (parts && parts.length > 0 && parts.every((p) => obj(p)?.functionResponse !== undefined)) return 'tool'
  return o?.role === 'user' ? 'user' : 'other'
}

/** The names of the tools a request offers (function names; a built-in tool by its type or key). */
function toolNamesOf(api: ObservedApi, b: Obj): string[] {
  const names: string[] = []
  const add = (n: unknown): void => {
    if (typeof n === 'string' && n.length > 0) names.push(n.slice(0, 128))
  }
  if (api === 'gemini') {
    for (const t of arr(b.tools) ?? []) {
      const o = obj(t) ?? {}
      const decls = arr(o.functionDeclarations) ?? arr(o.function_declarations)
      if (decls) for (const d of decls) add(obj(d)?.name)
      else for (const k of Object.keys(o)) add(k)
    }
    return names
  }
  for (const t of [...(arr(b.tools) ?? []), ...(arr(b.functions) ?? [])]) {
    const o = obj(t) ?? {}
    add(obj(o.function)?.name ?? o.name ?? o.type)
  }
  return names
}

/** The request's system parts (top-level ones first) and its conversation, by wire API. */
function split(api: ObservedApi, b: Obj): { system: unknown[]; messages: Msg[]; tools: unknown } {
  switch (api) {
    case 'chat': {
      const msgs = arr(b.messages)
      const all: Msg[] = msgs
        ? msgs.map((m) => ({ value: m, role: roleOfChat(m) }))
        : b.prompt !== undefined
          ? [{ value: b.prompt, role: 'user' }]
          : []
      const tools = [...(arr(b.tools) ?? []), ...(arr(b.functions) ?? [])]
      return { system: [], messages: all, tools: tools.length > 0 ? tools : undefined }
    }
    case 'responses': {
      const input = b.input
      const items = arr(input)
      const all: Msg[] = items
        ? items.map((m) => ({ value: m, role: roleOfResponsesItem(m) }))
        : input === undefined
          ? []
          : [{ value: input, role: 'user' }]
      return { system: b.instructions === undefined ? [] : [b.instructions], messages: all, tools: b.tools }
    }
    case 'anthropic': {
      const all = (arr(b.messages) ?? []).map((m): Msg => ({ value: m, role: roleOfAnthropic(m) }))
      return { system: b.system === undefined ? [] : [b.system], messages: all, tools: b.tools }
    }
    case 'gemini': {
      const all = (arr(b.contents) ?? []).map((m): Msg => ({ value: m, role: roleOfGemini(m) }))
      const sys = b.systemInstruction ?? b.system_instruction
      return { system: sys === undefined ? [] : [sys], messages: all, tools: b.tools }
    }
    default:
      return { system: [], messages: [], tools: undefined }
  }
}

/**
 * Throws {@link Unsummarizable} when `v` nests deeper than {@link MAX_SUMMARY_DEPTH} or holds more
 * than {@link MAX_SUMMARY_NODES} objects and arrays; walks them with an explicit stack (no recursion
 * on request content), never reading a string.
 */
function checkDepth(v: unknown): void {
  const stack: [unknown, number][] = [[v, 0]]
  let nodes = 0
  while (stack.length > 0) {
    const [x, depth] = stack.pop() as [unknown, number]
    if (x === null || typeof x !== 'object') continue
    if (++nodes > MAX_SUMMARY_NODES) throw new Unsummarizable('too many values')
    if (depth >= MAX_SUMMARY_DEPTH) throw new Unsummarizable('nested too deep')
    for (const item of Array.isArray(x) ? x : Object.values(x)) stack.push([item, depth + 1])
  }
}

/** Parts of a request whose body could not be read: every figure null, with the reason. */
export function unreadParts(reason: string, body: Buffer | null): RequestParts {
  return {
    tool_schema_bytes: null,
    history_bytes: null,
    latest_message_bytes: null,
    cache_prefix_bytes: null,
    message_roles: null,
    system_sha256: null,
    tools_sha256: null,
    body_sha256: body ? shortHash(body) : null,
    params: {},
    params_rejected: [],
    reason,
  }
}

/**
 * Read the parts of one request (pure): tool-schema bytes (the `tools`/`functions` value as JSON
 * writes it), history bytes (every conversation message but the latest), latest-message bytes,
 * message role counts (system, user, assistant, tool, other), hashes of the system prompt, the tool
 * list and the body, and the allowlisted parameters. The cache-eligible prefix is left null here: it
 * needs the attempt's previous request (see `RoleTracker`). `raw` is the decoded body, `parsed` its
 * JSON (undefined when it is not JSON). Never keeps any content; never throws on a body.
 */
export function readRequestParts(api: ObservedApi, raw: Buffer | null, parsed: unknown): RequestReading {
  if (api === 'other') return { parts: unreadParts('not an inference API', raw), features: null }
  const b = obj(parsed)
  if (!raw || !b) return { parts: unreadParts('the body is not a JSON object', raw), features: null }
  try {
    const { system, messages, tools } = split(api, b)
    const systemMsgs = messages.filter((m) => m.role === 'system').map((m) => m.value)
    const allSystem = [...system, ...systemMsgs]
    const conversation = messages.filter((m) => m.role !== 'system')
    const roles: MessageRoles = { system: allSystem.length, user: 0, assistant: 0, tool: 0, other: 0 }
    for (const m of conversation) roles[m.role]++
    const latest = conversation[conversation.length - 1]
    const history = conversation.slice(0, -1)
    // Depth first: a value nested too deep stops here, before anything serialises or reads it.
    checkDepth([system, messages.map((m) => m.value), tools])
    // Each part is serialised and encoded once: its bytes are the UTF-8 length of its JSON.
    const encoded = new Map<unknown, Buffer>()
    const enc = (v: unknown): Buffer => {
      let buf = encoded.get(v)
      if (!buf) {
        buf = v === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(v))
        encoded.set(v, buf)
      }
      return buf
    }
    const sizeOf = (v: unknown): number => enc(v).length
    const toolsBuf = tools === undefined ? null : enc(tools)
    const toolBytes = toolsBuf?.length ?? 0
    const systemText = allSystem.length > 0 ? JSON.stringify(allSystem) : null
    // The prefix a provider can cache: tools and top-level system first, then every message in order;
    // one running hash over the parts, read after each (no part is hashed twice).
    const chain: RequestFeatures['chain'] = []
    const running = createHash('sha256')
    let bytes = 0
    const push = (parts: Buffer[]): void => {
      for (const buf of parts) {
        running.update(buf)
        bytes += buf.length
      }
      running.update('\u0000')
      chain.push({ hash: running.copy().digest('hex'), bytes })
    }
    push([toolsBuf ?? Buffer.alloc(0), ...system.map(enc)])
    for (const m of messages) push([enc(m.value)])
    const bodyHash = sha(raw)
    const { params, rejected } = requestParams(api, b)
    const names = toolNamesOf(api, b)
    const toolCount =
      api === 'gemini' ? names.length : (arr(b.tools)?.length ?? 0) + (arr(b.functions)?.length ?? 0)
    const latestText = latest
      ? textOf(obj(latest.value)?.content ?? obj(latest.value)?.parts ?? latest.value)
      : ''
    const sysText = allSystem.map(textOf).join('\n').slice(0, TEXT_WINDOW)
    const ask = (re: RegExp, systemToo: boolean): Where =>
      re.test(latestText) && latest?.role === 'user'
        ? 'latest message'
        : systemToo && re.test(sysText)
          ? 'system prompt'
          : null
    const noTools = toolCount === 0
    const head = conversation[0]
    const headText = head ? textOf(obj(head.value)?.content ?? obj(head.value)?.parts ?? head.value) : ''
    return {
      parts: {
        tool_schema_bytes: toolBytes,
        history_bytes: history.reduce((n, m) => n + sizeOf(m.value), 0),
        latest_message_bytes: latest ? sizeOf(latest.value) : 0,
        cache_prefix_bytes: null,
        message_roles: roles,
        system_sha256: systemText === null ? null : shortHash(systemText),
        tools_sha256: toolsBuf === null ? null : shortHash(toolsBuf),
        body_sha256: bodyHash.slice(0, 16),
        params,
        params_rejected: rejected,
        reason: null,
      },
      features: {
        api,
        model: typeof b.model === 'string' ? b.model.slice(0, 200) : null,
        tools: toolCount,
        toolNames: new Set(names),
        systemHash: systemText === null ? null : shortHash(systemText),
        bodyHash,
        conversation: conversation.length,
        asks: {
          title: ask(TITLE_ASK, noTools),
          summary: ask(SUMMARY_ASK, noTools),
          condense: ask(CONDENSE_ASK, noTools),
        },
        summaryHead: head !== undefined && head.role === 'user' && SUMMARY_HEAD.test(headText),
        chain,
      },
    }
  } catch (e) {
    if (!(e instanceof Unsummarizable) && !(e instanceof RangeError)) throw e
    return { parts: unreadParts(`the body is not summarized (${e.message})`, raw), features: null }
  }
}
