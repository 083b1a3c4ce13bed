import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import type { Plan } from '../../src/plan/schema.js'
import {
  ATTEMPT_SCHEMA_VERSION,
  type AttemptRecord,
  LEG_SCHEMA_VERSION,
  type LegRecord,
} from '../../src/records/attempt.js'
import { LEDGER_SCHEMA_VERSION, type LedgerRow, type TelemetrySummary } from '../../src/records/ledger.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

/** A real plan from a real manifest (inline panel); `over` overrides manifest fields. */
export async function makePlan(over: Record<string, unknown> = {}): Promise<Plan> {
  const file = writeManifest(baseManifest(over))
  const loaded = await loadManifest(file)
  const panel = await resolvePanel(loaded.manifest, loaded.dir)
  return buildPlan(loaded, panel, { manifestFile: 'm.yml' })
}

export const ids = (n: number, prefix = 't') =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i + 1).padStart(3, '0')}`)

/** Telemetry of one attempt with complete coverage; `spend`/`requests` scale the token counts. */
export function telemetry(
  over: Partial<TelemetrySummary> = {},
  spend = 0.1,
  requests = 10,
): TelemetrySummary {
  return {
    source: 'ledger',
    coverage: 'complete',
    reason: null,
    rows: requests,
    failed_rows: 0,
    proxy_requests: requests,
    input_tokens: requests * 1000,
    input_fresh_tokens: requests * 200,
    cache_read_tokens: requests * 800,
    cache_write_tokens: 0,
    output_tokens: requests * 50,
    reasoning_tokens: 0,
    spend_usd: spend,
    spend_source: 'proxy',
    models_observed: ['gpt-5-mini'],
    model_mismatch: false,
    first_request_bytes: 12_000,
    first_request_tools: 7,
    aux_requests: 1,
    budget_exceeded: false,
    flags: [],
    ...over,
  }
}

export interface AttemptSpec {
  cell: string
  instance: string
  outcome?: AttemptRecord['outcome']
  trial?: number
  attempt?: number
  final?: boolean
  spend?: number
  requests?: number
  wallMs?: number
  exit?: Partial<AttemptRecord['exit']>
  telemetry?: Partial<TelemetrySummary>
  over?: Partial<AttemptRecord>
}

/** A valid attempt record for `plan`'s cell, resolved by default. */
export function attempt(plan: Plan, s: AttemptSpec): AttemptRecord {
  const cell = plan.cells.find((c) => c.id === s.cell)
  if (!cell) throw new Error(`no cell ${s.cell}`)
  const leg = plan.legs.find((l) => l.cell === s.cell && l.instances.includes(s.instance))
  const trial = s.trial ?? 0
  const attemptNo = s.attempt ?? 1
  // A several-model plan names each cell's model; a one-model plan has the manifest's route.
  const manifestModel = cell.model_id ?? (plan.manifest as { model: { id: string } }).model.id
  return {
    schema_version: ATTEMPT_SCHEMA_VERSION,
    experiment_id: plan.experiment_id,
    run_id: 'run-1',
    round: plan.round,
    leg: leg?.leg ?? `${s.cell}-s0`,
    cell_id: s.cell,
    harness: cell.harness,
    harness_version: cell.version,
    config_hash: cell.config_hash,
    model: manifestModel,
    instance_id: s.instance,
    trial,
    attempt: attemptNo,
    final: s.final ?? true,
    quarantined: false,
    started_at: `2026-11-01T10:00:${String(attemptNo).padStart(2, '0')}.000Z`,
    ended_at: `2026-11-01T10:05:${String(attemptNo).padStart(2, '0')}.000Z`,
    phases_ms: { setup: 1000, harness: s.wallMs ?? 60_000, verifier: 2000 },
    exit: { class: 'clean', code: 0, signal: null, reason: null, ...s.exit },
    timed_out: false,
    outcome: s.outcome ?? 'resolved',
    verifier: {
      status: (s.outcome ?? 'resolved') === 'resolved' ? 'pass' : 'fail',
      exit_code: 0,
      reward: null,
      duration_ms: 2000,
    },
    deliverable: { bytes: 120, sha256: null, files_changed: 1 },
    telemetry: telemetry(s.telemetry, s.spend ?? 0.1, s.requests ?? 10),
    self_report: null,
    final_message: null,
    logs_dir: `logs/${s.instance}/${trial}-${attemptNo}`,
    ...s.over,
  }
}

/** Ledger rows matching an attempt's summary (one per request), with the attempt's attribution. */
export function ledgerFor(a: AttemptRecord): LedgerRow[] {
  const n = a.telemetry.rows
  return Array.from({ length: n }, (_, i) => ({
    schema_version: LEDGER_SCHEMA_VERSION,
    request_id: `${a.cell_id}-${a.instance_id}-${a.trial}-${a.attempt}-${i}`,
    source: 'proxy',
    call_type: 'chat.completions',
    api: 'chat',
    stream: true,
    model: a.model,
    model_observed: a.model,
    model_group: null,
    provider: 'scripted',
    status: 'success',
    http_status: 200,
    error: null,
    started_at: a.started_at,
    ended_at: a.ended_at,
    first_token_at: null,
    duration_ms: 100,
    ttft_ms: 10,
    request_shape: { bytes: 12_000, tools: 7, messages: 2 + i, system_bytes: 4000 },
    tokens: {
      input_total: 1000,
      input_fresh: 200,
      cache_read: 800,
      cache_write: 0,
      output: 50,
      reasoning: 0,
    },
    cache_semantics: 'inclusive',
    spend_usd: (a.telemetry.spend_usd ?? 0) / Math.max(1, n),
    spend_source: 'proxy',
    spend_logged_usd: null,
    spend_recomputed_usd: null,
    flags: [],
    attribution: {
      experiment_id: a.experiment_id,
      run_id: a.run_id,
      cell_id: a.cell_id,
      instance_id: a.instance_id,
      trial: a.trial,
      attempt: a.attempt,
    },
    usage_object: null,
    additional_usage_values: null,
  }))
}

export function legRecord(plan: Plan, legId: string, attempts: number): LegRecord {
  const leg = plan.legs.find((l) => l.leg === legId)!
  const cell = plan.cells.find((c) => c.id === leg.cell)!
  return {
    schema_version: LEG_SCHEMA_VERSION,
    experiment_id: plan.experiment_id,
    run_id: 'run-1',
    round: plan.round,
    leg: leg.leg,
    cell_id: leg.cell,
    shard: leg.shard,
    harness: cell.harness,
    harness_version_declared: cell.version,
    harness_version_observed: cell.version,
    config_hash: cell.config_hash,
    manifest_sha256: plan.manifest_sha256,
    model:
      plan.cells.find((c) => c.id === plan.legs.find((l) => l.leg === legId)?.cell)?.model_id ??
      (plan.manifest as { model: { id: string } }).model.id,
    api: cell.api,
    telemetry_source: 'ledger',
    runner: { os: 'linux', arch: 'x64', node: 'v20', ci: false, runner_name: null },
    started_at: '2026-11-01T10:00:00.000Z',
    ended_at: '2026-11-01T11:00:00.000Z',
    planned_instances: leg.instances,
    attempts,
    status: 'complete',
    error: null,
  }
}

export interface WriteOptions {
  /** Legs to leave out (as if their artifact never uploaded). */
  skipLegs?: string[]
  /** Raw lines appended to a leg's attempts.jsonl. */
  extraLines?: Record<string, string[]>
  /** Write ledger.jsonl (default true). */
  ledger?: boolean
}

/**
 * Write the artifacts of `plan` laid out as download-artifact does (one folder per artifact) into a
 * fresh temp folder, each attempt into its cell's leg. Returns the folder.
 */
export function writeArtifacts(plan: Plan, attempts: AttemptRecord[], opts: WriteOptions = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-artifacts-'))
  for (const leg of plan.legs) {
    if (opts.skipLegs?.includes(leg.leg)) continue
    const folder = path.join(dir, leg.artifact)
    mkdirSync(folder, { recursive: true })
    const mine = attempts.filter((a) => a.cell_id === leg.cell && leg.instances.includes(a.instance_id))
    const lines = [...mine.map((a) => JSON.stringify(a)), ...(opts.extraLines?.[leg.leg] ?? [])]
    writeFileSync(path.join(folder, 'attempts.jsonl'), lines.length ? `${lines.join('\n')}\n` : '')
    if (opts.ledger !== false) {
      const rows = mine.flatMap(ledgerFor).map((r) => JSON.stringify(r))
      writeFileSync(path.join(folder, 'ledger.jsonl'), rows.length ? `${rows.join('\n')}\n` : '')
    }
    writeFileSync(path.join(folder, 'leg.json'), `${JSON.stringify(legRecord(plan, leg.leg, mine.length))}\n`)
  }
  return dir
}

/** Write plan.json into a fresh folder; returns its path. */
export function writePlan(plan: Plan): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-plan-'))
  const file = path.join(dir, 'plan.json')
  writeFileSync(file, `${JSON.stringify(plan, null, 2)}\n`)
  return file
}

/**
 * Outcomes of a two-cell paired table: `both`, `bOnly` (baseline only), `cOnly`, `neither` blocks, in
 * that order over `instances`.
 */
export function pairedOutcomes(
  plan: Plan,
  table: { both: number; bOnly: number; cOnly: number; neither: number },
  cells: [string, string] = ['a', 'b'],
  spend: (cell: string, i: number) => number = (cell, i) => (cell === cells[0] ? 0.1 : 0.15) * (1 + (i % 7)),
): AttemptRecord[] {
  const out: AttemptRecord[] = []
  const inst = plan.panel.instances
  const kinds = [
    ...Array(table.both).fill([true, true]),
    ...Array(table.bOnly).fill([true, false]),
    ...Array(table.cOnly).fill([false, true]),
    ...Array(table.neither).fill([false, false]),
  ] as Array<[boolean, boolean]>
  kinds.forEach(([rb, rt], i) => {
    const instance = inst[i]!
    out.push(
      attempt(plan, {
        cell: cells[0],
        instance,
        outcome: rb ? 'resolved' : 'unresolved',
        spend: spend(cells[0], i),
        requests: 10 + (i % 5),
      }),
    )
    out.push(
      attempt(plan, {
        cell: cells[1],
        instance,
        outcome: rt ? 'resolved' : 'unresolved',
        spend: spend(cells[1], i),
        requests: 12 + (i % 4),
      }),
    )
  })
  return out
}
