import type { OfferedTool, ReferenceCall } from './types.js'

/**
 * The reference calls of `solution/calls.json` (pure). Accepted shapes: an array, or `{calls: [...]}`,
 * of `{tool|name|function, arguments|args}` objects or BFCL-style one-key objects `{"<tool>": {…}}`.
 * Returns null when the text is not one of these (the model then treats the task as a coding task);
 * never throws: validating the file is the panel's job.
 */
export function parseReferenceCalls(text: string): ReferenceCall[] | null {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return null
  }
  const list = Array.isArray(v) ? v : isObj(v) && Array.isArray(v.calls) ? v.calls : null
  if (!list) return null
  const out: ReferenceCall[] = []
  for (const c of list) {
    if (!isObj(c)) return null
    const name = c.tool ?? c.name ?? c.function
    if (typeof name === 'string') {
      const args = c.arguments ?? c.args ?? {}
      if (!isObj(args)) return null
      out.push({ tool: name, arguments: args })
      continue
    }
    const keys = Object.keys(c)
    const only = keys.length === 1 ? keys[0] : undefined
    const args = only === undefined ? undefined : c[only]
    if (only === undefined || !isObj(args)) return null
    out.push({ tool: only, arguments: args })
  }
  return out
}

/**
 * The names a bridge tool takes in the harnesses (rig.md §3.3), most specific first:
 * `mcp__bridge__X` (Claude Code, Qwen Code), `mcp_bridge_X` (Gemini CLI), `bridge_X` (OpenCode, our
 * Pi extension), `bridge-X` (Copilot), `mcp__bridge.X` (Codex's Responses namespace as parse.ts
 * flattens it), then the bare `X` (a harness that passes names through, such as agentd).
 */
export function bridgeNames(tool: string, server = 'bridge'): string[] {
  return [
    `mcp__${server}__${tool}`,
    `mcp_${server}_${tool}`,
    `${server}_${tool}`,
    `${server}-${tool}`,
    `mcp__${server}.${tool}`,
    tool,
  ]
}

/** The offered tool that is bridge tool `tool` under this harness's naming, or null. */
export function findBridgeTool(tools: OfferedTool[], tool: string): OfferedTool | null {
  for (const n of bridgeNames(tool)) {
    const t = tools.find((x) => x.name === n)
    if (t) return t
  }
  return null
}

/**
 * A bridge tool result as the harness relayed it, with each harness's wrapping undone (rig.md §3.6):
 * Claude Code's appended `<system-reminder>` blocks, Gemini CLI's `<untrusted_context>` wrapper, and
 * Codex's `Wall time: … Output:` preamble; a Gemini `functionResponse.response` object (`{"output": …}`)
 * is read for its output first. Trimmed.
 */
export function unwrapToolResult(text: string): string {
  let t = text
  if (t.trimStart().startsWith('{')) {
    try {
      const o = JSON.parse(t) as unknown
      if (isObj(o) && typeof o.output === 'string') t = o.output
    } catch {
      // not JSON: the text as it is
    }
  }
  t = t.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '')
  const wrapped = /<untrusted_context>\s*([\s\S]*?)\s*<\/untrusted_context>/.exec(t)
  if (wrapped?.[1] !== undefined) t = wrapped[1]
  t = t.replace(/^\s*Wall time:[^\n]*\n\s*Output:\s*\n?/, '')
  return t.trim()
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
