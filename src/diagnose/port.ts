/**
 * How an analyst is reached: it gets a tool caller (the dossier tools, served over MCP) and the
 * problems of its previous answer, and returns its answer (parsed JSON, validated by the caller) with
 * its own request count and spend (reported apart from the comparison).
 */
export interface AnalystSession {
  callTool(name: string, args: Record<string, unknown>): Promise<string>
  /** Why the previous answer was rejected (empty on the first try). */
  feedback: string[]
}

export interface AnalystReply {
  answer: unknown
  requests: number | null
  spend_usd: number | null
}

export interface AnalystPort {
  /** e.g. "scripted" or "harness:pi" */
  route: string
  answer(session: AnalystSession): Promise<AnalystReply>
}
