import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { Dispatcher } from '../bridge/dispatch.js'
import type { ToolProvider } from '../bridge/provider.js'
import { serveHttp } from '../bridge/server.js'
import type { AnalystPort } from '../dialogue/analyst-port.js'
import { strictJson } from '../util/json.js'
import { checkAnswer, type GroundingContext } from './grounding.js'
import type { Dossier, ProposalFile } from './schema.js'
import { DossierProvider } from './tools.js'

export interface AnalystOptions {
  dossier: Dossier
  /** The dossier's folder (diagnosis/): proposal.json is written here. */
  dir: string
  /** Report text the answer may quote numbers from (report.md of the round). */
  report: string
  port: AnalystPort
  /** Tries before the proposal is published as ungrounded (default 2: one retry). */
  tries?: number
}

/**
 * The analysis step (the only I/O of diagnose/): serve the dossier tools over MCP on 127.0.0.1 (the
 * bridge's server), let the analyst answer, validate the answer against the proposal schema and the
 * grounding check (cited ids exist; every number appears in the report or a tool output the analyst
 * received), retry once with the problems, and write diagnosis/proposal.json — with `answer: null`
 * and status `ungrounded` when no try passes. The analyst's requests and spend are reported apart.
 */
export async function runAnalyst(opts: AnalystOptions): Promise<ProposalFile> {
  const tries = opts.tries ?? 2
  // Every text the bridge served in this try: an analyst may quote numbers from these (whoever called).
  let outputs: string[] = []
  const tools = new DossierProvider(opts.dossier)
  const recording: ToolProvider = {
    tools: () => tools.tools(),
    async call(name, args) {
      const outcome = await tools.call(name, args)
      outputs.push(outcome.text)
      return outcome
    },
  }
  const bridge = await serveHttp(new Dispatcher(recording), '127.0.0.1', 0)
  const problems: string[] = []
  let answer: ProposalFile['answer'] = null
  let requests: number | null = 0
  let spend: number | null = 0
  let made = 0
  let notes: string[] = []
  try {
    for (let i = 0; i < tries && answer === null; i++) {
      made++
      outputs = []
      const client = new Client({ name: 'harness-watch-analyst', version: '1' })
      await client.connect(new StreamableHTTPClientTransport(new URL(bridge.url)))
      try {
        const reply = await opts.port.answer({
          feedback: [...problems],
          bridgeUrl: bridge.url,
          async callTool(name, args) {
            const r = (await client.callTool({ name, arguments: args })) as CallToolResult
            const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
            if (r.isError) throw new Error(`tool ${name} failed: ${text}`)
            return text
          },
        })
        requests = requests === null || reply.requests === null ? null : requests + reply.requests
        spend = spend === null || reply.spend_usd === null ? null : spend + reply.spend_usd
        if (reply.notes) notes = [...notes, ...reply.notes]
        const checked = checkAnswer(reply.answer, groundingContext(opts.dossier, [opts.report, ...outputs]))
        if (checked.ok) answer = checked.answer
        else problems.push(...checked.problems.map((p) => `try ${i + 1}: ${p}`))
      } catch (e) {
        problems.push(
          `try ${i + 1}: the analyst failed: ${String((e as Error)?.message ?? e).split('\n')[0]}`,
        )
      } finally {
        await client.close()
      }
    }
  } finally {
    await bridge.close()
  }
  const file: ProposalFile = {
    schema_version: 1,
    grounding: { status: answer ? 'grounded' : 'ungrounded', attempts: made, problems },
    answer,
    analyst: {
      route: opts.port.route,
      requests,
      spend_usd: spend,
      ...(opts.port.describe ? opts.port.describe() : {}),
      ...(notes.length > 0 ? { notes } : {}),
    },
  }
  await writeFile(path.join(opts.dir, 'proposal.json'), strictJson(file))
  return file
}

/** Ids of a dossier and the texts an answer may quote numbers from. */
export function groundingContext(d: Dossier, sources: string[]): GroundingContext {
  const eventIds = new Set<string>()
  const cells = new Set<string>()
  const instances = new Set<string>()
  for (const a of Object.values(d.attempts)) {
    cells.add(a.cell)
    instances.add(a.instance)
    for (const e of a.trajectory.events) eventIds.add(e.event_id)
  }
  for (const c of d.comparisons) {
    cells.add(c.baseline)
    cells.add(c.treatment)
    for (const i of c.instances) instances.add(i.instance)
  }
  return { eventIds, cells, instances, sources }
}

/** report.md of a round, or '' when absent. */
export async function readReport(roundDir: string): Promise<string> {
  return readFile(path.join(roundDir, 'report.md'), 'utf8').catch(() => '')
}
