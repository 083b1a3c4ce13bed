import type { z } from 'zod'
import type { WireApi } from '../manifest/harness-names.js'
import type { ScriptedModelSchema } from '../manifest/schema.js'

/** Settings of the scripted model as declared in a manifest (`model.scripted`), defaults applied. */
export type ScriptedSettings = z.output<typeof ScriptedModelSchema>
/** The same settings as written by a person (every field optional). */
export type ScriptedSettingsInput = z.input<typeof ScriptedModelSchema>

/** A JSON Schema (or Gemini OpenAPI-subset schema) as found in a tool declaration. */
export type Schema = Record<string, unknown>

/** One tool the harness offered, whatever its wire shape. */
export interface OfferedTool {
  name: string
  description: string
  /** Parameter schema; null for schema-less tools (Responses `local_shell`, hosted tools). */
  schema: Schema | null
  /** Wire kind: `function`, `custom`, `local_shell`, `web_search`… */
  kind: string
  /**
   * The Responses namespace holding the tool (Codex offers MCP tools as namespace `mcp__<server>`);
   * `name` is then `<namespace>.<function>` and a call names both apart.
   */
  namespace?: string
}

/**
 * A provider request reduced to what the script and the usage counter need. Built by `parseRequest`
 * from the raw body of any of the four wire APIs.
 */
export interface ParsedRequest {
  api: WireApi
  stream: boolean
  /** Model id as requested (body `model`, or the Gemini URL path). */
  model: string
  tools: OfferedTool[]
  /** Tool results already in the conversation: the script's step number. */
  toolResults: number
  /** Text of the last tool result (for logging whether it reported an error), or null. */
  lastToolResult: string | null
  /** Text of every tool result in the conversation, in order (the scripted analyst replays them). */
  toolResultTexts: string[]
  /** Whether the last tool result is marked as an error or shows a non-zero exit. */
  lastToolError: boolean
  /** All text of user-role content, whitespace collapsed (used to recognise a task's instruction). */
  userText: string
  /** System text plus user text, raw (used to find the working directory the harness announces). */
  contextText: string
  /** Schema of a requested structured (JSON) answer, or null when free text is expected. */
  jsonSchema: Schema | null
  /**
   * The prompt as ordered segments, each the JSON text of one part: system text, tools, then every
   * message in `canonical` form (parse.ts). Token counts and the prefix cache work on these.
   */
  segments: string[]
}

/** A task folder of a panel, reduced to what the script follows. */
export interface TaskScript {
  id: string
  /** instruction.md text. */
  instruction: string
  /** solution/solve.sh text, or null when the task has none. */
  solve: string | null
  /** `[hw] test_command` from task.toml, or null. */
  testCommand: string | null
  /** A workspace file worth reading first (relative path), or null. */
  inspectFile: string | null
  /** Bridge task: the reference tool calls of solution/calls.json, in order; absent for coding tasks. */
  calls?: ReferenceCall[] | null
  /** Bridge task: the reference final answer (solution/answer.md), or null. */
  answer?: string | null
}

/** What one response does: call a tool, or answer with text. */
export type Action =
  | {
      kind: 'tool'
      /** Why: inspect the workspace, apply the solution, run the tests, or explore (unknown task). */
      step: 'inspect' | 'solve' | 'test' | 'explore' | 'bridge'
      tool: OfferedTool
      args: Record<string, unknown>
    }
  | {
      kind: 'text'
      /** final answer of a task, an auxiliary title/summary, a JSON object, or a plain reply. */
      step: 'final' | 'title' | 'json' | 'reply' | 'user'
      text: string
    }

/** Token usage of one response, in neutral terms; each wire API renders it in its own semantics. */
export interface NeutralUsage {
  /** Every prompt token, cached or not. */
  inputTotal: number
  /** Prompt tokens served from the simulated cache. */
  cacheRead: number
  /** Prompt tokens written to the cache (reported only on Anthropic; 0 elsewhere). */
  cacheWrite: number
  output: number
}

/** One reference call of a bridge task (`solution/calls.json`): a bridge tool and its arguments. */
export interface ReferenceCall {
  tool: string
  arguments: Record<string, unknown>
}
