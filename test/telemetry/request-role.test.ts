import { describe, expect, it } from 'vitest'
import type { ObservedApi } from '../../src/telemetry/observe.js'
import { readRequestParts } from '../../src/telemetry/request-parts.js'
import { classifyRequest, RoleTracker } from '../../src/telemetry/request-role.js'
import {
  CLAUDE_TOOLS,
  CODEX_TOOLS,
  claudeAfterCompact,
  claudeCompact,
  claudePrimary,
  claudeSubagent,
  claudeTitle,
  codexCompact,
  codexPrimary,
  GEMINI_TOOLS,
  geminiCompress,
  geminiNextSpeaker,
  geminiPrimary,
  OPENHANDS_TOOLS,
  opencodeSummary,
  opencodeTitle,
  openhandsPrimary,
} from './support/harness-requests.js'

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v))

function read(api: ObservedApi, body: unknown, model?: string) {
  const raw = Buffer.from(JSON.stringify(body))
  const r = readRequestParts(api, raw, JSON.parse(raw.toString('utf8')))
  return { ...r, features: r.features && (model ? { ...r.features, model } : r.features) }
}

describe('request roles (Claude Code over Anthropic messages)', () => {
  it('tells title, primary, subagent and compaction apart, each with the rule and evidence that decided it', () => {
    const t = new RoleTracker('claude-sonnet-4-5')
    const title = t.admit(read('anthropic', claudeTitle()).features, 1000)
    expect(title.role).toEqual({
      role: 'title',
      rule: 'title.asks_for_title',
      evidence: 'no tools and the system prompt asks for a title',
      // The small model also differs from the route's: a conflict, the first rule won, recorded.
      also: ['fallback.model_differs'],
    })
    const p0 = read('anthropic', claudePrimary(0))
    const first = t.admit(p0.features, 2000)
    expect(first.role.role).toBe('primary')
    expect(first.role.rule).toBe('primary.first_with_tools')
    expect(first.role.evidence).toBe('first request of the attempt with tools (6)')
    const second = t.admit(read('anthropic', claudePrimary(1)).features, 3000)
    expect(second.role.rule).toBe('primary.same_system')
    // The whole first request is the prefix of the second: tools, system, the task message.
    const body0 = claudePrimary(0)
    expect(second.prefixBytes).toBe(
      bytes(CLAUDE_TOOLS) + bytes(body0.system) + bytes((body0.messages as unknown[])[0]),
    )
    const sub = t.admit(read('anthropic', claudeSubagent()).features, 4000)
    expect(sub.role).toEqual({
      role: 'subagent',
      rule: 'subagent.other_system_fewer_tools',
      evidence: "different system prompt hash and 2 of the primary's 6 tools absent",
      also: [],
    })
    const compact = t.admit(read('anthropic', claudeCompact()).features, 5000)
    expect(compact.role.role).toBe('compaction')
    expect(compact.role.rule).toBe('compaction.asks_to_condense')
    expect(compact.role.evidence).toBe('the latest message asks to condense the conversation')
    expect(compact.role.also).toEqual(['primary.same_system'])
    const after = t.admit(read('anthropic', claudeAfterCompact()).features, 6000)
    expect(after.role.rule).toBe('compaction.history_replaced')
    expect(after.role.evidence).toBe('history replaced by a summary message (6 → 1 messages)')
    expect(after.role.also).toEqual(['primary.same_system'])
    // The next turn after it is the agent's own again.
    const next = t.admit(
      read('anthropic', {
        ...claudeAfterCompact(),
        messages: [
          ...(claudeAfterCompact().messages as unknown[]),
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'go on' },
        ],
      }).features,
      7000,
    )
    expect(next.role.rule).toBe('primary.same_system')
  })

  it('reads the parts of a Claude Code request: sizes, role counts, parameters', () => {
    const body = claudePrimary(2)
    const { parts } = read('anthropic', body)
    const msgs = body.messages as unknown[]
    expect(parts).toMatchObject({
      tool_schema_bytes: bytes(CLAUDE_TOOLS),
      history_bytes: msgs.slice(0, -1).reduce((n: number, m) => n + bytes(m), 0),
      latest_message_bytes: bytes(msgs[msgs.length - 1]),
      message_roles: { system: 1, user: 1, assistant: 2, tool: 2, other: 0 },
      params: { temperature: 1, max_output_tokens: 32000, stream: true },
      params_rejected: [],
      reason: null,
    })
    expect(parts.system_sha256).toMatch(/^[0-9a-f]{16}$/)
    expect(parts.tools_sha256).toMatch(/^[0-9a-f]{16}$/)
    // No content: the metadata user id, the task and the prompts are nowhere in the parts.
    const text = JSON.stringify(parts)
    expect(text).not.toContain('user_0123')
    expect(text).not.toContain('parser')
    expect(text).not.toContain('Claude Code')
  })
})

describe('request roles (OpenHands and OpenCode over chat completions)', () => {
  it('calls a failed request sent again with the same body within the window a retry, and not after it', () => {
    const t = new RoleTracker('glm-4.6')
    const a = t.admit(read('chat', openhandsPrimary(0)).features, 10_000)
    const b = t.admit(read('chat', openhandsPrimary(2)).features, 20_000)
    expect(b.role.rule).toBe('primary.same_system')
    t.settle(a, false, 15_000)
    t.settle(b, true, 25_000)
    const again = t.admit(read('chat', openhandsPrimary(2)).features, 28_000)
    expect(again.role).toEqual({
      role: 'retry',
      rule: 'retry.same_body_after_error',
      evidence: 'same body hash as request 2, sent 3.0 s after it failed',
      also: ['primary.same_system'],
    })
    // The identical body is its own whole prefix.
    expect(again.prefixBytes).toBe(
      bytes(OPENHANDS_TOOLS) +
        (openhandsPrimary(2).messages as unknown[]).reduce((n: number, m) => n + bytes(m), 0),
    )
    t.settle(again, false, 30_000)
    // A success is never retried; a body sent again long after a failure is not a retry either.
    const late = new RoleTracker('glm-4.6')
    const x = late.admit(read('chat', openhandsPrimary(1)).features, 0)
    late.settle(x, true, 1_000)
    expect(late.admit(read('chat', openhandsPrimary(1)).features, 1_000 + 121_000).role.rule).toBe(
      'primary.same_system',
    )
  })

  it("tells OpenCode's title and summary calls apart from the agent's", () => {
    const t = new RoleTracker('glm-4.6')
    expect(t.admit(read('chat', opencodeTitle()).features, 0).role).toEqual({
      role: 'title',
      rule: 'title.asks_for_title',
      evidence: 'no tools and the latest message asks for a title',
      also: [],
    })
    const s = t.admit(read('chat', opencodeSummary()).features, 1).role
    expect(s.role).toBe('summary')
    expect(s.evidence).toBe('no tools and the latest message asks for a summary')
    // Before any request with tools, a request no rule claims is unclassified, never primary.
    expect(
      t.admit(read('chat', { model: 'glm-4.6', messages: [{ role: 'user', content: 'hello' }] }).features, 2)
        .role,
    ).toEqual({
      role: 'unclassified',
      rule: 'unclassified.no_rule',
      evidence: 'no tools and no title, summary or compaction request in the prompt',
      also: [],
    })
  })

  it('measures the parts of an OpenHands request exactly', () => {
    const body = openhandsPrimary(2)
    const msgs = body.messages as unknown[]
    const { parts } = read('chat', body)
    expect(parts).toEqual({
      tool_schema_bytes: bytes(OPENHANDS_TOOLS),
      history_bytes: msgs.slice(1, -1).reduce((n: number, m) => n + bytes(m), 0),
      latest_message_bytes: bytes(msgs[msgs.length - 1]),
      cache_prefix_bytes: null,
      message_roles: { system: 1, user: 1, assistant: 2, tool: 2, other: 0 },
      system_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
      tools_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
      body_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
      params: { temperature: 0, top_p: 1, max_output_tokens: 64000, stream: false },
      params_rejected: [],
      reason: null,
    })
  })
})

describe('request roles (Codex over Responses)', () => {
  it('classifies the turns and the checkpoint compaction, and counts the grown input as a cached prefix', () => {
    const t = new RoleTracker('gpt-5-codex')
    const b0 = codexPrimary(0)
    t.admit(read('responses', b0).features, 0)
    const next = t.admit(read('responses', codexPrimary(1)).features, 1)
    expect(next.role.rule).toBe('primary.same_system')
    expect(next.prefixBytes).toBe(
      bytes(CODEX_TOOLS) +
        bytes(b0.instructions) +
        (b0.input as unknown[]).reduce((n: number, m) => n + bytes(m), 0),
    )
    const c = t.admit(read('responses', codexCompact()).features, 2)
    expect(c.role.rule).toBe('compaction.asks_to_condense')
    const { parts } = read('responses', codexPrimary(1))
    expect(parts.message_roles).toEqual({ system: 1, user: 2, assistant: 2, tool: 1, other: 0 })
    expect(parts.params).toEqual({
      reasoning_effort: 'medium',
      stream: true,
      tool_choice: 'auto',
      parallel_tool_calls: false,
      store: false,
    })
  })
})

describe('request roles (Gemini CLI over generateContent)', () => {
  it('classifies the agent, the history compression and the next-speaker check', () => {
    const t = new RoleTracker('gemini-2.5-pro')
    const p = t.admit(read('gemini', geminiPrimary(0), 'gemini-2.5-pro').features, 0)
    expect(p.role.evidence).toBe('first request of the attempt with tools (4)')
    expect(t.admit(read('gemini', geminiPrimary(1), 'gemini-2.5-pro').features, 1).role.rule).toBe(
      'primary.same_system',
    )
    expect(t.admit(read('gemini', geminiCompress(), 'gemini-2.5-pro').features, 2).role).toEqual({
      role: 'compaction',
      rule: 'compaction.asks_to_condense',
      evidence: 'the system prompt asks to condense the conversation',
      // Its prompt "summarizes" too: both rules match, the first in order decides.
      also: ['summary.asks_for_summary'],
    })
    expect(t.admit(read('gemini', geminiNextSpeaker(), 'gemini-2.5-pro').features, 3).role.rule).toBe(
      'unclassified.no_rule',
    )
    // The same check on the flash model: the model differs from the route's.
    expect(t.admit(read('gemini', geminiNextSpeaker(), 'gemini-2.5-flash').features, 4).role).toEqual({
      role: 'fallback',
      rule: 'fallback.model_differs',
      evidence: "model gemini-2.5-flash differs from the route's gemini-2.5-pro",
      also: [],
    })
    const { parts } = read('gemini', geminiPrimary(1))
    expect(parts.tool_schema_bytes).toBe(bytes(GEMINI_TOOLS))
    expect(parts.message_roles).toEqual({ system: 1, user: 2, assistant: 2, tool: 1, other: 0 })
    expect(parts.params).toEqual({ temperature: 0, top_p: 1, thinking_budget: 8192 })
  })
})

describe('request parts of bad input', () => {
  it('clips forged parameter values to their type and keeps none of them', () => {
    const body = {
      ...openhandsPrimary(0),
      temperature: `0.7${'x'.repeat(100_000)}`,
      max_tokens: { nested: 'secret-value' },
      max_completion_tokens: undefined,
      top_p: Number.MAX_VALUE,
      reasoning_effort: 'high; DROP TABLE',
      tool_choice: { type: 'function', function: { name: 'secret_tool_name' } },
      seed: 1.5,
      service_tier: ['priority'],
    }
    const { parts } = read('chat', body)
    expect(parts.params).toEqual({ stream: false, tool_choice: 'function' })
    expect(parts.params_rejected.sort()).toEqual(
      ['max_output_tokens', 'reasoning_effort', 'seed', 'service_tier', 'temperature', 'top_p'].sort(),
    )
    const text = JSON.stringify(parts)
    expect(text).not.toContain('xxxx')
    expect(text).not.toContain('secret')
    expect(text).not.toContain('DROP')
    expect(text.length).toBeLessThan(1000)
  })

  it('gives null figures with a reason, never a crash, for malformed bodies and unknown APIs', () => {
    const raw = Buffer.from('{"model": "m", "messages": [')
    expect(readRequestParts('chat', raw, undefined)).toMatchObject({
      parts: {
        tool_schema_bytes: null,
        history_bytes: null,
        message_roles: null,
        reason: 'the body is not a JSON object',
      },
      features: null,
    })
    expect(readRequestParts('chat', Buffer.from('[1,2]'), [1, 2]).parts.reason).toBe(
      'the body is not a JSON object',
    )
    expect(readRequestParts('other', Buffer.from('{}'), {}).parts.reason).toBe('not an inference API')
    // 20,000 levels of nesting: not walked, said so.
    let deep: unknown = 'x'
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const nested = { model: 'm', messages: [{ role: 'user', content: deep }] }
    const r = readRequestParts('chat', Buffer.from('{}'), nested)
    expect(r.features).toBeNull()
    expect(r.parts.reason).toBe('the body is not summarized (nested too deep)')
    // Messages of the wrong type are counted as other, not dropped and not a crash.
    const odd = readRequestParts('anthropic', Buffer.from('{}'), { messages: [1, 'two', null], tools: 'x' })
    expect(odd.parts.message_roles).toEqual({ system: 0, user: 0, assistant: 0, tool: 0, other: 3 })
    expect(odd.features?.tools).toBe(0)
  })

  it('records an unreadable body as unclassified with the reason', () => {
    const ctx = { routeModel: 'm', primary: null, seen: [], retryWindowMs: 120_000 }
    expect(classifyRequest(null, ctx, 0, 'the body is not a JSON object')).toEqual({
      role: 'unclassified',
      rule: 'unclassified.unread',
      evidence: 'the body is not a JSON object',
      also: [],
    })
  })
})
