import type { AttemptRecord } from '../records/attempt.js'
import {
  type AnomalyKind,
  type AttemptClass,
  type AttemptInput,
  type ClassFinding,
  classKey,
  type LedgerFigures,
} from './classes.js'
import type { ClassifyOptions } from './options.js'

/** Raw and de-duplicated ledger figures of one attempt (from ledger_check when the record has one). */
export function ledgerFigures(r: AttemptRecord): LedgerFigures {
  const c = r.ledger_check
  const t = r.telemetry
  const forwarded = c?.forwarded ?? t.reconciliation?.proxy_requests ?? null
  const rows = c?.rows ?? t.rows
  const dupes = c?.suspected_duplicates ?? null
  return {
    rows,
    spend_usd: c?.raw_spend_usd ?? t.spend_usd,
    dedup_rows: dupes === null ? null : rows - dupes,
    dedup_spend_usd: c?.dedup_spend_usd ?? null,
    forwarded,
  }
}

/** The telemetry class of one attempt (see classify.ts for the rules). */
export function telemetryClass(
  r: AttemptRecord,
  l: LedgerFigures,
  ledgerRows: number | null,
  opts: ClassifyOptions,
): { anomaly: AnomalyKind | null; suspect: boolean; reason: string | null } {
  if (l.forwarded !== null && l.rows > l.forwarded) {
    const dupes = l.dedup_rows === null ? 0 : l.rows - l.dedup_rows
    const dedup =
      l.dedup_spend_usd !== null
        ? `; de-duplicated ${l.dedup_rows} rows, $${fmtUsd(l.dedup_spend_usd)} (raw $${fmtUsd(l.spend_usd ?? 0)})`
        : ''
    return dupes > 0
      ? {
          anomaly: 'suspected_duplicate_logging',
          suspect: false,
          reason: `the ledger holds ${l.rows} rows, the proxy forwarded ${l.forwarded}: ${dupes} suspected duplicate row(s)${dedup}`,
        }
      : {
          anomaly: 'rows_above_forwarded',
          suspect: false,
          reason: `the ledger holds ${l.rows} rows, the proxy forwarded ${l.forwarded}; no duplicate found to explain them`,
        }
  }
  if (l.forwarded !== null && l.rows < l.forwarded) {
    return {
      anomaly: 'rows_lost',
      suspect: false,
      reason: `the ledger holds ${l.rows} of the ${l.forwarded} requests the proxy forwarded (rows lost)`,
    }
  }
  if (ledgerRows !== null && ledgerRows > r.telemetry.rows) {
    return {
      anomaly: 'rows_above_forwarded',
      suspect: false,
      reason: `ledger.jsonl holds ${ledgerRows} rows for the attempt, its summary counted ${r.telemetry.rows}`,
    }
  }
  const worked =
    (r.self_report?.requests ?? 0) > 0 || (r.self_report?.turns ?? 0) > 0 || r.deliverable.bytes > 0
  if (l.rows === 0 && worked && r.exit.class !== 'infra') {
    return {
      anomaly: 'bypass',
      suspect: false,
      reason: `no model request reached the proxy although the harness worked (${r.deliverable.bytes} bytes delivered${r.self_report?.turns ? `, ${r.self_report.turns} turns reported` : ''}): proxy bypass suspected`,
    }
  }
  // With the host's network open (not a proxy-only sandbox), a harness that counts more requests or
  // tokens than the proxy saw may have sent the rest around it: a partial bypass.
  const above = r.network === 'host' && r.self_report ? aboveProxy(r, l) : null
  if (above) return { anomaly: 'self_report_above_proxy', suspect: true, reason: above }
  const own = r.self_report?.requests ?? r.self_report?.turns ?? null
  if (own !== null && own > 0 && l.rows > 0 && l.rows < opts.minShare * own) {
    const what = r.self_report?.requests != null ? 'requests' : 'turns'
    return {
      anomaly: 'thin_vs_self_report',
      suspect: true,
      reason: `${l.rows} ledger rows against ${own} ${what} the harness reported (below ${opts.minShare} of its own count)`,
    }
  }
  return { anomaly: null, suspect: false, reason: null }
}

/**
 * Rows per attempt of each cell against the other cells on the same instances: a cell whose median
 * share is below `minShare` has implausibly thin telemetry (a client that partly bypasses the proxy).
 */
export function thinCells(
  attempts: readonly AttemptInput[],
  byKey: Map<string, AttemptClass>,
  opts: ClassifyOptions,
  findings: ClassFinding[],
): void {
  // rows of final attempts per instance per cell
  const rows = new Map<string, Map<string, number>>()
  for (const a of attempts) {
    const r = a.record
    if (!r.final) continue
    const c = byKey.get(a.key ?? classKey(r))
    if (c?.telemetry_class !== 'ok' || c.group === 'infrastructure' || c.ledger.rows === 0) continue
    let m = rows.get(r.instance_id)
    if (!m) {
      m = new Map()
      rows.set(r.instance_id, m)
    }
    m.set(r.cell_id, (m.get(r.cell_id) ?? 0) + c.ledger.rows)
  }
  const cells = [...new Set(attempts.map((a) => a.record.cell_id))].sort()
  if (cells.length < 2) return
  // Each instance's row counts sorted once; a cell's "others" are these without one of its own value.
  const sortedRows = new Map<Map<string, number>, Float64Array>()
  for (const m of rows.values()) if (m.size >= 2) sortedRows.set(m, Float64Array.from(m.values()).sort())
  for (const cell of cells) {
    const shares: number[] = []
    for (const m of rows.values()) {
      const mine = m.get(cell)
      if (mine === undefined || m.size < 2) continue
      shares.push(mine / medianWithout(sortedRows.get(m)!, mine))
    }
    if (shares.length === 0) continue
    const share = median(shares)
    if (share >= opts.minShare) continue
    let n = 0
    for (const a of attempts) {
      if (a.record.cell_id !== cell) continue
      const c = byKey.get(a.key ?? classKey(a.record))
      if (c?.telemetry_class !== 'ok') continue
      c.telemetry_class = 'telemetry_suspect'
      c.anomaly = 'thin_vs_cells'
      c.telemetry_reason = `cell ${cell} logs a median ${fmtShare(share)} of the other cells' rows per instance (threshold ${opts.minShare}): part of its traffic may bypass the proxy`
      n++
    }
    findings.push({
      code: 'telemetry_thin_cell',
      cell,
      message: `cell ${cell} logs a median ${fmtShare(share)} of the other cells' ledger rows on the same instances (threshold ${opts.minShare}): its resource figures are not used`,
      attempts: n,
    })
  }
}

/** The median of sorted `s` with one element equal to `value` left out (`value` is in `s`). */
function medianWithout(s: Float64Array, value: number): number {
  const k = s.indexOf(value)
  const at = (i: number) => s[i < k ? i : i + 1]!
  const len = s.length - 1
  const m = len >> 1
  return len % 2 ? at(m) : (at(m - 1) + at(m)) / 2
}

function median(xs: number[]): number {
  const s = Float64Array.from(xs).sort()
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

function fmtUsd(x: number): string {
  return x.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')
}

function fmtShare(x: number): string {
  return `${(x * 100).toFixed(0)}%`
}

/** Tolerance on tokens before a self-report counts as above the proxy (harnesses round and estimate). */
const TOKEN_SLACK = 1.1

/**
 * Why the harness's own report shows more than the proxy saw (requests, or input + output tokens
 * beyond {@link TOKEN_SLACK}), or null when it does not.
 */
function aboveProxy(r: AttemptRecord, l: LedgerFigures): string | null {
  const s = r.self_report
  if (!s) return null
  if (s.requests !== null && s.requests > l.rows)
    return `the harness reported ${s.requests} requests, the proxy saw ${l.rows}, and its network was not closed: part of its traffic may have gone around the proxy`
  const t = r.telemetry
  if (
    s.input_tokens !== null &&
    s.output_tokens !== null &&
    t.input_tokens !== null &&
    t.output_tokens !== null
  ) {
    const own = s.input_tokens + s.output_tokens
    const seen = t.input_tokens + t.output_tokens
    if (own > seen * TOKEN_SLACK)
      return `the harness reported ${own} tokens, the proxy saw ${seen}, and its network was not closed: part of its traffic may have gone around the proxy`
  }
  return null
}
