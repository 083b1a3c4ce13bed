import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import type { LedgerRow } from '../../src/records/ledger.js'
import { ledgerFor, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

/** One tool call of a scripted trajectory: seconds after the attempt start. */
export interface Step {
  s: number
  tool: string
  args: Record<string, unknown>
  output?: string
  error?: boolean
}

const START = (a: AttemptRecord) => Date.parse(a.started_at)

/** The Pi `--mode json` events of a run that makes these calls, then says `final`. */
export function piEvents(a: AttemptRecord, steps: Step[], final = 'done'): unknown[] {
  const out: unknown[] = [
    { type: 'session', version: 3, id: 's', timestamp: a.started_at, cwd: '/attempt/work' },
  ]
  steps.forEach((st, i) => {
    const id = `call_${i}`
    const ts = START(a) + st.s * 1000
    out.push({
      type: 'message_end',
      message: {
        role: 'assistant',
        timestamp: ts,
        content: [{ type: 'toolCall', id, name: st.tool, arguments: st.args }],
      },
    })
    out.push({
      type: 'tool_execution_end',
      toolCallId: id,
      toolName: st.tool,
      result: { content: [{ type: 'text', text: st.output ?? '' }] },
      isError: st.error ?? false,
    })
  })
  const last = steps.at(-1)?.s ?? 0
  out.push({
    type: 'message_end',
    message: {
      role: 'assistant',
      timestamp: START(a) + (last + 1) * 1000,
      content: [{ type: 'text', text: final }],
    },
  })
  out.push({ type: 'agent_end', messages: [] })
  return out
}

/** The OpenCode `run --format json` events of a run that makes these calls, then says `final`. */
export function opencodeEvents(a: AttemptRecord, steps: Step[], final = 'done'): unknown[] {
  const out: unknown[] = []
  for (const st of steps) {
    const ts = START(a) + st.s * 1000
    out.push({ type: 'step_start', timestamp: ts, part: { type: 'step-start' } })
    out.push({
      type: 'tool_use',
      timestamp: ts,
      part: {
        type: 'tool',
        tool: st.tool,
        state: {
          status: st.error ? 'error' : 'completed',
          input: st.args,
          output: st.output ?? '',
          time: { start: ts, end: ts + 50 },
        },
      },
    })
  }
  const last = (steps.at(-1)?.s ?? 0) + 1
  out.push({ type: 'text', timestamp: START(a) + last * 1000, part: { type: 'text', text: final } })
  return out
}

export interface RunDir {
  dir: string
  plan: Plan
  attempts: AttemptRecord[]
  /** Write an attempt's trajectory.jsonl, patch.diff and (optionally) its ledger rows. */
  write(
    a: AttemptRecord,
    files: { trajectory?: string | Uint8Array; patch?: string; ledger?: LedgerRow[] },
  ): void
  /** Aggregate the artifacts into comparison.json (after every write). */
  aggregate(): Promise<void>
}

/**
 * A run folder laid out as `harness-watch local` writes it (plan.json, artifacts/<artifact>/…), from the
 * compare fixtures: cells a (Pi) and b (OpenCode) on `n` instances with the given paired outcomes.
 */
export async function makeRunDir(
  table: { both: number; bOnly: number; cOnly: number; neither: number },
  spend?: (cell: string, i: number) => number,
  manifest: Record<string, unknown> = {},
): Promise<RunDir> {
  const n = table.both + table.bOnly + table.cOnly + table.neither
  const plan = await makePlan({
    panel: { source: 'inline', instances: Array.from({ length: n }, (_, i) => `t-${i + 1}`) },
    ...manifest,
  })
  const attempts = pairedOutcomes(plan, table, ['a', 'b'], spend)
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-diag-'))
  const artifacts = writeArtifacts(plan, attempts)
  cpSync(artifacts, path.join(dir, 'artifacts'), { recursive: true })
  const planFile = writePlan(plan)
  cpSync(planFile, path.join(dir, 'plan.json'))
  const legDir = (a: AttemptRecord) => {
    const leg = plan.legs.find((l) => l.cell === a.cell_id && l.instances.includes(a.instance_id))!
    return path.join(dir, 'artifacts', leg.artifact)
  }
  return {
    dir,
    plan,
    attempts,
    write(a, files) {
      const logs = path.join(legDir(a), a.logs_dir)
      mkdirSync(logs, { recursive: true })
      if (files.trajectory !== undefined) writeFileSync(path.join(logs, 'trajectory.jsonl'), files.trajectory)
      if (files.patch !== undefined) writeFileSync(path.join(logs, 'patch.diff'), files.patch)
      if (files.ledger) {
        const file = path.join(legDir(a), 'ledger.jsonl')
        const mine = (r: LedgerRow) =>
          r.attribution?.cell_id === a.cell_id &&
          r.attribution.instance_id === a.instance_id &&
          r.attribution.trial === a.trial
        const rows = readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as LedgerRow)
          .filter((r) => !mine(r))
        writeFileSync(file, [...rows, ...files.ledger].map((r) => JSON.stringify(r)).join('\n') + '\n')
      }
    },
    async aggregate() {
      await aggregate({
        plan: path.join(dir, 'plan.json'),
        artifacts: path.join(dir, 'artifacts'),
        out: dir,
        resamples: 200,
      })
    },
  }
}

/** `n` ledger rows for an attempt, one every `everyS` seconds from its start, with these token counts. */
export function rowsEvery(
  a: AttemptRecord,
  n: number,
  everyS: number,
  over: { input?: number; cacheRead?: number; tools?: number; spend?: number } = {},
): LedgerRow[] {
  const base = ledgerFor({ ...a, telemetry: { ...a.telemetry, rows: n } })
  return base.map((r, i) => ({
    ...r,
    started_at: new Date(START(a) + i * everyS * 1000).toISOString(),
    request_shape: { bytes: 12_000, tools: over.tools ?? 7, messages: 2 + i, system_bytes: 4000 },
    tokens: {
      ...r.tokens,
      input_total: over.input ?? 1000,
      cache_read: over.cacheRead ?? 800,
      input_fresh: (over.input ?? 1000) - (over.cacheRead ?? 800),
    },
    spend_usd: over.spend ?? 0.01,
  }))
}

export const jsonl = (events: unknown[]) => events.map((e) => `${JSON.stringify(e)}\n`).join('')

export function diffOf(file: string): string {
  return `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-old\n+new\n`
}
