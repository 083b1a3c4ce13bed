import type { OfferedTool } from '../records/ledger.js'
import { canonicalJson, sha256 } from '../util/json.js'
import type { ObservedApi } from './observe.js'

/** Most tools recorded from one request; a request offering more keeps the first ones (flagged by count). */
export const MAX_OFFERED_TOOLS = 512
/** Longest tool name kept, characters. */
export const MAX_TOOL_NAME = 200

type Obj = Record<string, unknown>
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/**
 * A tool name as the providers accept one: letters, digits and `_ - . : / @ +`, 1 to
 * {@link MAX_TOOL_NAME} characters (OpenAI and Anthropic allow fewer). Any other text in a name's place
 * is request content, not a name.
 */
const TOOL_NAME = /^[A-Za-z0-9_.:/@+-]+$/

/**
 * The name a row and a report may show: the name itself when it is name-shaped, else a placeholder
 * with the first 16 hex digits of its sha256 (tells names apart, keeps no text).
 */
export function shownToolName(name: string): string {
  return name.length <= MAX_TOOL_NAME && TOOL_NAME.test(name)
    ? name
    : `(not a tool name, sha256 ${sha256(name).slice(0, 16)})`
}

/**
 * First 16 hex digits of the sha256 of a tool definition's canonical JSON (name, description and
 * parameters together): two requests offering the same tool name with another schema differ here.
 * Null for a definition nested too deep to hash.
 */
export function toolSchemaHash(def: unknown): string | null {
  try {
    return sha256(canonicalJson(def)).slice(0, 16)
  } catch {
    return null
  }
}

/** A tool's name as its API spells it: a function's name, else a built-in tool's type. */
function toolName(api: ObservedApi, t: Obj): string | null {
  const fn = obj(t.function)
  if (api === 'chat') return text(fn?.name) ?? text(t.name) ?? text(t.type)
  return text(t.name) ?? text(fn?.name) ?? text(t.type)
}

/** The tool definitions a request offers, one entry per tool, in request order. */
function definitions(api: ObservedApi, b: Obj): { name: string; def: unknown }[] {
  const tools = Array.isArray(b.tools) ? b.tools : []
  const out: { name: string; def: unknown }[] = []
  if (api === 'gemini') {
    for (const t of tools) {
      const o = obj(t)
      if (!o) continue
      const decls = Array.isArray(o.functionDeclarations)
        ? o.functionDeclarations
        : Array.isArray(o.function_declarations)
          ? o.function_declarations
          : null
      if (decls) {
        for (const d of decls) {
          const name = text(obj(d)?.name)
          if (name) out.push({ name, def: d })
        }
      } else {
        // A built-in tool (googleSearch, codeExecution, …) is named by its key.
        for (const key of Object.keys(o)) out.push({ name: key, def: { [key]: o[key] } })
      }
    }
    return out
  }
  for (const t of tools) {
    const o = obj(t)
    const name = o ? toolName(api, o) : null
    if (!o || !name) continue
    // A Responses namespace (Codex offers an MCP server's tools as one): each tool as `<namespace>.<name>`.
    if (api === 'responses' && o.type === 'namespace' && Array.isArray(o.tools)) {
      for (const inner of o.tools) {
        const n = text(obj(inner)?.name)
        if (n) out.push({ name: `${name}.${n}`, def: inner })
      }
    } else out.push({ name, def: o })
  }
  if (api === 'chat' && Array.isArray(b.functions)) {
    for (const f of b.functions) {
      const name = text(obj(f)?.name)
      if (name) out.push({ name, def: f })
    }
  }
  return out
}

/**
 * The tools a request body offers the model, as names and schema hashes only — never a description,
 * parameter or any other content. Null when the body is not a request of an inference API (or not an
 * object); an empty list when it offers none.
 */
export function offeredTools(api: ObservedApi, body: unknown): OfferedTool[] | null {
  const b = obj(body)
  if (!b || api === 'other') return null
  return definitions(api, b)
    .slice(0, MAX_OFFERED_TOOLS)
    .map(({ name, def }) => ({ name: shownToolName(name), schema_sha256: toolSchemaHash(def) }))
}
