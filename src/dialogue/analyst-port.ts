/**
 * How an analyst is reached: it gets a tool caller (the dossier tools, served over MCP) and the
 * problems of its previous answer, and returns its answer (parsed JSON, validated by the caller) with
 * its own request count and spend (reported apart from the comparison).
 */
export interface AnalystSession {
  callTool(name: string, args: Record<string, unknown>): Promise<string>
  /** Why the previous answer was rejected (empty on the first try). */
  feedback: string[]
  /** The same tools as an MCP Streamable HTTP endpoint on 127.0.0.1 (`…/mcp`), for a harness. */
  bridgeUrl: string
}

export interface AnalystReply {
  answer: unknown
  requests: number | null
  spend_usd: number | null
  /** Lines for a person about this try (e.g. the harness's exit, where its ledger is). */
  notes?: string[]
}

export interface AnalystPort {
  /** e.g. "scripted" or "harness:pi" */
  route: string
  /** How the analyst ran, for proposal.json `analyst` (harness, sandbox, ledger, fallback). */
  describe?(): AnalystRun
  /** Tries in which the analyst produced an answer at all (a harness port; 0: the harness path failed). */
  answered?(): number
  answer(session: AnalystSession): Promise<AnalystReply>
}

/** How a harness-run analyst ran, recorded in proposal.json beside its requests and spend. */
export interface AnalystRun {
  /** The harness and version the analyst ran in, e.g. "pi@0.73.1". */
  harness?: string
  /** The sandbox isolation of its process (namespace+uid, env-only, none). */
  isolation?: string
  /** Its ledger (the recording proxy's rows, attribution role "analyst"), relative to diagnosis/. */
  ledger?: string
  /** Why the in-process scripted analyst answered instead of the harness, or absent. */
  fallback?: string
}
