import type { LedgerRow } from '../records/ledger.js'
import type { RequestFeatures } from './request-parts.js'
import { modelMatches } from './summary.js'

export type RequestRoleRecord = NonNullable<LedgerRow['request_role']>
export type RequestRole = RequestRoleRecord['role']

/** A request of the attempt as the rules remember it (in memory only). */
export interface SeenRequest {
  index: number
  bodyHash: string
  startedMs: number
  /** When it ended and whether it failed; null while in flight. */
  endedMs: number | null
  failed: boolean | null
}

/** What the rules know of the attempt before this request. */
export interface RoleContext {
  /** The model the route declares: a request naming another one is a fallback. */
  routeModel: string | null
  /** The agent's own prompt: system hash and tools of its first request with tools. */
  primary: { systemHash: string | null; toolNames: ReadonlySet<string>; conversation: number } | null
  /** Earlier requests of the attempt, oldest first. */
  seen: readonly SeenRequest[]
  /** A failed request's body sent again within this many ms after it ended is a retry. */
  retryWindowMs: number
}

/** Default retry window: a harness or SDK retry follows its error within two minutes. */
export const RETRY_WINDOW_MS = 120_000

interface Rule {
  id: string
  role: RequestRole
  /** The evidence when the rule matches (what in the request decided it), else null. */
  test(f: RequestFeatures, ctx: RoleContext, nowMs: number): string | null
}

const missing = (primary: ReadonlySet<string>, f: ReadonlySet<string>): number => {
  let n = 0
  for (const t of primary) if (!f.has(t)) n++
  return n
}

/**
 * The role rules in the order they are tried; the first that matches decides, the others that also
 * match are recorded beside it. Each rule names what in the request decided it.
 */
export const ROLE_RULES: readonly Rule[] = [
  {
    id: 'retry.same_body_after_error',
    role: 'retry',
    test(f, ctx, now) {
      for (let i = ctx.seen.length - 1; i >= 0; i--) {
        const s = ctx.seen[i] as SeenRequest
        if (s.bodyHash !== f.bodyHash || s.failed !== true || s.endedMs === null) continue
        const gap = now - s.endedMs
        if (gap >= 0 && gap <= ctx.retryWindowMs)
          return `same body hash as request ${s.index + 1}, sent ${(gap / 1000).toFixed(1)} s after it failed`
      }
      return null
    },
  },
  {
    id: 'compaction.asks_to_condense',
    role: 'compaction',
    test: (f) => (f.asks.condense ? `the ${f.asks.condense} asks to condense the conversation` : null),
  },
  {
    id: 'title.asks_for_title',
    role: 'title',
    test: (f) => (f.tools === 0 && f.asks.title ? `no tools and the ${f.asks.title} asks for a title` : null),
  },
  {
    id: 'summary.asks_for_summary',
    role: 'summary',
    test: (f) =>
      f.tools === 0 && f.asks.summary ? `no tools and the ${f.asks.summary} asks for a summary` : null,
  },
  {
    id: 'compaction.history_replaced',
    role: 'compaction',
    test: (f, ctx) =>
      f.summaryHead && ctx.primary !== null && f.conversation < ctx.primary.conversation
        ? `history replaced by a summary message (${ctx.primary.conversation} → ${f.conversation} messages)`
        : null,
  },
  {
    id: 'fallback.model_differs',
    role: 'fallback',
    test: (f, ctx) =>
      ctx.routeModel !== null && f.model !== null && !modelMatches(ctx.routeModel, f.model)
        ? `model ${f.model} differs from the route's ${ctx.routeModel}`
        : null,
  },
  {
    id: 'subagent.other_system_fewer_tools',
    role: 'subagent',
    test(f, ctx) {
      const p = ctx.primary
      if (f.tools === 0 || p === null || f.systemHash === p.systemHash) return null
      const lacks = missing(p.toolNames, f.toolNames)
      return lacks > 0
        ? `different system prompt hash and ${lacks} of the primary's ${p.toolNames.size} tools absent`
        : null
    },
  },
  {
    id: 'primary.first_with_tools',
    role: 'primary',
    test: (f, ctx) =>
      f.tools > 0 && ctx.primary === null ? `first request of the attempt with tools (${f.tools})` : null,
  },
  {
    id: 'primary.same_system',
    role: 'primary',
    test: (f, ctx) =>
      f.tools > 0 && ctx.primary !== null && f.systemHash === ctx.primary.systemHash
        ? 'tools and the same system prompt hash as the primary request'
        : null,
  },
  {
    id: 'primary.tools_kept',
    role: 'primary',
    test: (f, ctx) =>
      f.tools > 0 &&
      ctx.primary !== null &&
      f.systemHash !== ctx.primary.systemHash &&
      missing(ctx.primary.toolNames, f.toolNames) === 0
        ? "system prompt changed, every one of the primary's tools still offered"
        : null,
  },
]

/** The rule of a request no rule claims: its own role, never silently primary. */
export const UNCLASSIFIED_RULE = 'unclassified.no_rule'
/** The rule of a request whose body could not be read. */
export const UNREAD_RULE = 'unclassified.unread'

/**
 * Classify one request (pure): the first matching rule of {@link ROLE_RULES} decides its role and is
 * recorded with its evidence; every other rule that matched is listed in `also`. A request no rule
 * claims, or whose body could not be read (`f` null, `unread` says why), is `unclassified`.
 */
export function classifyRequest(
  f: RequestFeatures | null,
  ctx: RoleContext,
  nowMs: number,
  unread = 'the body could not be read',
): RequestRoleRecord {
  if (f === null) return { role: 'unclassified', rule: UNREAD_RULE, evidence: unread, also: [] }
  let decided: RequestRoleRecord | null = null
  const also: string[] = []
  for (const rule of ROLE_RULES) {
    const evidence = rule.test(f, ctx, nowMs)
    if (evidence === null) continue
    if (decided === null) decided = { role: rule.role, rule: rule.id, evidence, also }
    else also.push(rule.id)
  }
  return (
    decided ?? {
      role: 'unclassified',
      rule: UNCLASSIFIED_RULE,
      evidence:
        f.tools === 0
          ? 'no tools and no title, summary or compaction request in the prompt'
          : 'tools but no primary request to compare with',
      also: [],
    }
  )
}

/** Longest prefix two requests share, bytes: the last segment whose running hash is the same in both. */
export function sharedPrefixBytes(a: RequestFeatures['chain'], b: RequestFeatures['chain']): number {
  let bytes = 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    if (a[i]?.hash !== b[i]?.hash) break
    bytes = a[i]?.bytes ?? bytes
  }
  return bytes
}

/** Most requests an attempt remembers for the retry rule. */
const MAX_SEEN = 512

/** A request admitted by {@link RoleTracker}: settle it when it ends. */
export interface Admitted {
  role: RequestRoleRecord
  /** Bytes identical to the previous request's prefix (null: no features, or a different API). */
  prefixBytes: number | null
  seen: SeenRequest | null
}

/**
 * One attempt's requests in the order they start: classifies each by {@link classifyRequest} and
 * measures its cache-eligible prefix against the previous request. Keeps hashes, counts and tool
 * names in memory only; the request bodies are never kept.
 */
export class RoleTracker {
  private primary: RoleContext['primary'] = null
  private readonly seen: SeenRequest[] = []
  private previous: RequestFeatures | null = null
  private count = 0

  constructor(
    private readonly routeModel: string | null,
    private readonly retryWindowMs = RETRY_WINDOW_MS,
  ) {}

  admit(f: RequestFeatures | null, nowMs: number, unread?: string): Admitted {
    const ctx: RoleContext = {
      routeModel: this.routeModel,
      primary: this.primary,
      seen: this.seen,
      retryWindowMs: this.retryWindowMs,
    }
    const role = classifyRequest(f, ctx, nowMs, unread)
    const index = this.count++
    if (f === null) return { role, prefixBytes: null, seen: null }
    const prev = this.previous
    const prefixBytes = prev && prev.api === f.api ? sharedPrefixBytes(prev.chain, f.chain) : 0
    this.previous = f
    if (role.role === 'primary') {
      this.primary = {
        systemHash: this.primary?.systemHash ?? f.systemHash,
        toolNames: this.primary?.toolNames ?? f.toolNames,
        conversation: f.conversation,
      }
    } else if (role.role === 'compaction' && this.primary) {
      // After compaction the conversation starts again from its summary.
      this.primary = { ...this.primary, conversation: f.conversation }
    }
    const seen: SeenRequest = { index, bodyHash: f.bodyHash, startedMs: nowMs, endedMs: null, failed: null }
    this.seen.push(seen)
    if (this.seen.length > MAX_SEEN) this.seen.shift()
    return { role, prefixBytes, seen }
  }

  /** The request ended (failed or not) at `endedMs`. */
  settle(a: Admitted, failed: boolean, endedMs: number): void {
    if (!a.seen) return
    a.seen.endedMs = endedMs
    a.seen.failed = failed
  }
}
