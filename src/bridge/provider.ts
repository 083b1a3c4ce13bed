/**
 * The seam the MCP server serves: any set of tools. The environment provider (env-provider.ts) serves a
 * task's tools over a JSON world and a sandbox; other stages (the dossier tools) bring their own.
 */

/** One tool as listed to the client. `inputSchema` is a JSON Schema object, sent verbatim. */
export interface ToolSpec {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

/**
 * What a call gave. `ok`: `text` is the result. `error`: the call was valid but failed (`code` says
 * why, e.g. missing_path, timeout, refused). `invalid_arguments`: the arguments do not match the tool's
 * schema (or the tool is unknown); the server checks this before `call`, a provider may too.
 */
export interface ToolOutcome {
  status: 'ok' | 'error' | 'invalid_arguments'
  text: string
  /** Machine-readable reason for a non-ok status. */
  code?: string
}

export type ToolProvider = {
  tools(): ToolSpec[]
  call(name: string, args: unknown): Promise<ToolOutcome>
  /**
   * false: arguments reach the provider without the schema check (a benchmark whose own checker
   * grades the arguments, as BFCL's does, and never validated them). Absent means true.
   */
  readonly validateArguments?: boolean
}
