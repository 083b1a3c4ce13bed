import { createHash } from 'node:crypto'
import { scriptedUserReply } from '../dialogue/scripted-user.js'
import { parseUserSimulation } from '../dialogue/user-request.js'
import type { WireApi } from '../manifest/harness-names.js'
import { PrefixCache } from './cache.js'
import { taskSettings } from './config.js'
import { toolFingerprint, uniform } from './draw.js'
import { cachingFor, drawFault, errorBody, type Fault, RETRY_AFTER_S } from './faults.js'
import { parseRequest } from './parse.js'
import { renderAnthropic } from './render/anthropic.js'
import { renderChat } from './render/chat.js'
import { outputText, type Rendered, type RenderInput } from './render/common.js'
import { renderGemini } from './render/gemini.js'
import { renderResponses } from './render/responses.js'
import { decide, findWorkdir } from './script.js'
import { countTokens } from './tokens.js'
import type { Action, NeutralUsage, ScriptedSettings, TaskScript } from './types.js'

/** Attribution headers the recording proxy forwards to a scripted upstream. */
export interface Attribution {
  instance?: string
  cell?: string
  trial?: number
  attempt?: number
  /** Confirmation round (0 = first run): a rerun is new data, so it gets its own success draws. */
  round?: number
}

/** One request as the scripted model handled it (kept for tests and the request log). */
export interface ModelRequestRecord {
  seq: number
  api: WireApi
  stream: boolean
  model: string
  /** Task recognised, or null. */
  task: string | null
  /** How the task was recognised. */
  matchedBy: 'header' | 'instruction' | null
  /** `x-hw-cell`, else a fingerprint of the tool names. */
  cell: string
  trial: number
  attempt: number
  /** Tool results already in the conversation. */
  step: number
  /** Seeded success draw of (task, cell, trial); true when no task. */
  success: boolean
  fault: Fault
  /** HTTP status answered (0 for a hang). */
  status: number
  /** The action taken (null for faults). */
  action:
    | { kind: 'tool'; step: string; tool: string; args: Record<string, unknown> }
    | { kind: 'text'; step: string; text: string }
    | null
  previousToolError: boolean
  usage: NeutralUsage | null
}

/** What the HTTP layer must do for one generation request. */
export type Outcome =
  | { kind: 'answer'; rendered: Rendered; requestId: string; latencyMs: number; record: ModelRequestRecord }
  | {
      kind: 'error'
      status: number
      body: unknown
      headers: Record<string, string>
      latencyMs: number
      record: ModelRequestRecord
    }
  | { kind: 'hang'; latencyMs: number; record: ModelRequestRecord }

/**
 * The scripted model without HTTP: recognises the task, draws success and faults, decides the action,
 * counts tokens against the prefix cache and renders the answer in the request's wire API. State: a
 * request counter (ids), the prefix cache, and per-(cell, task, trial, attempt, step) repeat counts for
 * fault draws — so answers are deterministic given the sequence of requests.
 */
export class ScriptedEngine {
  private seq = 0
  private readonly cache: PrefixCache
  /** Counts tokens only: for a cell whose caching is disabled by an injected change. */
  private readonly noCache: PrefixCache
  private readonly repeats = new Map<string, number>()
  private readonly needles: { task: TaskScript; full: string; head: string }[]

  constructor(
    readonly settings: ScriptedSettings,
    readonly tasks: ReadonlyMap<string, TaskScript>,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new PrefixCache(true)
    this.noCache = new PrefixCache(false)
    this.needles = [...tasks.values()].map((task) => {
      const full = loose(task.instruction)
      return { task, full, head: full.slice(0, 160) }
    })
  }

  /** Next request number (also used for non-generation requests so ids never repeat). */
  nextSeq(): number {
    this.seq += 1
    return this.seq
  }

  /** Handle one generation request of `api` with its parsed JSON body. */
  generate(
    api: WireApi,
    body: Record<string, unknown>,
    pathname: string,
    attribution: Attribution,
    sse: boolean,
  ): Outcome {
    const seq = this.nextSeq()
    const req = parseRequest(api, body, pathname)
    const { task, matchedBy } = this.identify(attribution.instance, req.userText)
    const ts = taskSettings(this.settings, task?.id ?? null)
    const cell = attribution.cell ?? toolFingerprint(req.tools.map((t) => t.name))
    const trial = attribution.trial ?? 0
    const attempt = attribution.attempt ?? 0
    const step = req.toolResults
    const role = req.tools.length > 0 ? 'agent' : 'aux'
    const round = attribution.round ?? 0
    // Round 0 keeps the draw of (task, cell, trial); a confirmation round draws afresh, as a rerun of a
    // real model would (temperature, provider nondeterminism): confirmation must be able to fail.
    const draw =
      round === 0
        ? uniform('success', this.settings.seed, task?.id ?? '', cell, trial)
        : uniform('success', this.settings.seed, task?.id ?? '', cell, trial, 'round', round)
    const success = task ? draw < ts.successRate : true
    const repeatKey = JSON.stringify([cell, task?.id ?? '', trial, attempt, role, step])
    const repeat = this.repeats.get(repeatKey) ?? 0
    this.repeats.set(repeatKey, repeat + 1)
    const fault = drawFault(ts.faults, {
      seed: this.settings.seed,
      task: `${task?.id ?? ''}/${role}`,
      trial,
      attempt,
      step,
      repeat,
    })
    const record: ModelRequestRecord = {
      seq,
      api,
      stream: req.stream,
      model: req.model,
      task: task?.id ?? null,
      matchedBy,
      cell,
      trial,
      attempt,
      step,
      success,
      fault,
      status: 200,
      action: null,
      previousToolError: req.lastToolError,
      usage: null,
    }
    const latencyMs = ts.latencyMs
    if (fault === 'hang') return { kind: 'hang', latencyMs, record: { ...record, status: 0 } }
    if (fault === '429' || fault === '500') {
      const status = fault === '429' ? 429 : 500
      const message =
        status === 429
          ? 'Rate limit reached (scripted fault); please retry after 1 s'
          : 'The server had an error while processing your request (scripted fault)'
      return {
        kind: 'error',
        status,
        body: errorBody(api, status, message),
        headers: status === 429 ? { 'retry-after': String(RETRY_AFTER_S) } : {},
        latencyMs,
        record: { ...record, status },
      }
    }
    // A simulated user's request (dialogue/user-request.ts): the scripted user answers from its scenario.
    const sim = api === 'chat' && req.tools.length === 0 ? parseUserSimulation(body) : null
    const action: Action = sim
      ? { kind: 'text', step: 'user', text: scriptedUserReply(sim.scenario, sim.history) }
      : decide(req, {
          task,
          success,
          workdir: findWorkdir(req.contextText),
          repeatReads: (attribution.cell === undefined ? undefined : this.settings.cells?.[attribution.cell])
            ?.repeat_reads,
        })
    const cache = cachingFor(this.settings, attribution.cell) ? this.cache : this.noCache
    const split = cache.apply(api, req.model, req.segments)
    const usage: NeutralUsage = {
      inputTotal: split.total,
      cacheRead: split.read,
      cacheWrite: split.write,
      output: Math.max(1, countTokens(outputText(action))),
    }
    const ids = idSource(this.settings.seed, seq, body)
    const input: RenderInput = { req, action, usage, id: ids, created: Math.floor(this.now() / 1000) }
    const rendered =
      api === 'chat'
        ? renderChat(
            input,
            (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
          )
        : api === 'responses'
          ? renderResponses(input, body)
          : api === 'anthropic'
            ? renderAnthropic(input)
            : renderGemini(input, sse)
    return {
      kind: 'answer',
      rendered,
      requestId: ids('req_'),
      latencyMs,
      record: { ...record, action: summarize(action), usage },
    }
  }

  /** Prompt tokens of a request body of `api` (count_tokens / countTokens endpoints). */
  count(api: WireApi, body: Record<string, unknown>): number {
    return parseRequest(api, body).segments.reduce((n, s) => n + countTokens(s), 0)
  }

  /** The task of a request: the `x-hw-instance` header, else the task whose instruction the user text holds. */
  private identify(
    instance: string | undefined,
    userText: string,
  ): { task: TaskScript | null; matchedBy: ModelRequestRecord['matchedBy'] } {
    if (instance !== undefined) {
      const t = this.tasks.get(instance)
      if (t) return { task: t, matchedBy: 'header' }
    }
    let best: { task: TaskScript; len: number } | null = null
    const hay = loose(userText)
    for (const n of this.needles) {
      if (n.full === '') continue
      const len = hay.includes(n.full) ? n.full.length : hay.includes(n.head) ? n.head.length : 0
      if (len > 0 && (!best || len > best.len)) best = { task: n.task, len }
    }
    return best ? { task: best.task, matchedBy: 'instruction' } : { task: null, matchedBy: null }
  }
}

/**
 * Letters and digits only, lower-cased: harnesses re-wrap, quote and escape the prompt (OpenCode's
 * `run` wraps a message in double quotes and backslash-escapes the quotes inside), so instructions are
 * compared in this form.
 */
export function loose(s: string): string {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')
}

/** Ids derived from (seed, request number, body): deterministic, and distinct within one server. */
function idSource(seed: number, seq: number, body: unknown): (prefix: string) => string {
  const base = createHash('sha256')
    .update(`${seed}|${seq}|${JSON.stringify(body)}`)
    .digest('hex')
  let k = 0
  return (prefix) => {
    k += 1
    return `${prefix}${createHash('sha256').update(`${base}|${k}`).digest('hex').slice(0, 24)}`
  }
}

function summarize(a: Action): NonNullable<ModelRequestRecord['action']> {
  return a.kind === 'tool'
    ? { kind: 'tool', step: a.step, tool: a.tool.name, args: a.args }
    : { kind: 'text', step: a.step, text: a.text }
}
