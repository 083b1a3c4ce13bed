import type { Manifest } from '../manifest/schema.js'
import type { BlockReasonCode, Comparison, ComparisonEntry } from '../records/comparison.js'
import type { Health } from './schema.js'

const MAX_LISTED = 50

/**
 * Evaluation health of one comparison.json: everything that means "the evaluation did not measure
 * the harnesses" rather than "a harness lost". Pure. Severity `error` marks an evaluation failure
 * (the run fails visibly); whether a comparison can still be decided is `decidable` below.
 *
 * Rules (field cases F06, F10, F11):
 *  - planned blocks but no attempt recorded at all → `no_legs_executed` (never a green result);
 *  - each missing or failed leg → `leg_missing`;
 *  - a cell whose every attempt ended in error/infra and resolved nothing → `harness_startup_failure`
 *    (its comparisons are inconclusive, not a loss);
 *  - outcome coverage (complete blocks / planned) below thresholds.min_coverage → `coverage_low`
 *    for that comparison (inconclusive; no regression issue);
 *  - cost coverage below it → `telemetry_missing`, a warning: cost signals are not decided and the
 *    comparison completes with gaps (its outcome stands);
 *  - infra errors (budget exhaustion, sandbox failures) → `infra_errors`, listed, never counted as losses;
 *  - model/config identity mismatches → `identity_mismatch`; unreadable artifact rows → `input_errors`.
 */
export function evaluationHealth(c: Comparison, thresholds: Manifest['thresholds'], key: KeyOf): Health[] {
  const out: Health[] = []
  const attempts = c.telemetry_coverage.attempts
  if (c.blocks.planned === 0) {
    out.push(
      h('no_legs_executed', 'error', null, null, 'no blocks were planned: nothing was compared', 0, []),
    )
  } else if (c.cells.length === 0) {
    // F11: an empty cell selection is a run that measured nothing, never a green result.
    out.push(
      h(
        'no_legs_executed',
        'error',
        null,
        null,
        `no cells scheduled: ${c.blocks.planned} blocks were planned but no cell was selected, so nothing ran`,
        c.blocks.planned,
        [],
      ),
    )
  } else if (attempts === 0) {
    out.push(
      h(
        'no_legs_executed',
        'error',
        null,
        null,
        `${c.blocks.planned} blocks were planned but no attempt was recorded: every leg failed or uploaded nothing`,
        c.blocks.planned,
        [],
      ),
    )
  }
  for (const leg of c.missing_legs) {
    out.push(
      h(
        'leg_missing',
        'error',
        null,
        leg.cell,
        `leg ${leg.leg} (artifact ${leg.artifact}): ${leg.reason}`,
        1,
        [],
      ),
    )
  }
  // Every replacement is listed: a re-upload changes which results a leg contributes.
  for (const r of c.reuploads ?? []) {
    out.push(
      h(
        'leg_reuploaded',
        'warning',
        null,
        null,
        `leg ${r.leg}: read ${r.read} (run attempt ${r.run_attempt}) in place of ${r.replaces.join(', ')}`,
        1,
        [],
      ),
    )
  }
  if (c.input_errors.length > 0) {
    const first = c.input_errors[0]
    out.push(
      h(
        'input_errors',
        'error',
        null,
        null,
        `${c.input_errors.length} unreadable artifact row(s), first: ${first?.file}${first?.line ? `:${first.line}` : ''} ${first?.message ?? ''}`,
        c.input_errors.length,
        [],
      ),
    )
  }
  for (const cell of startupFailures(c)) {
    out.push(
      h(
        'harness_startup_failure',
        'error',
        null,
        cell.id,
        `cell ${cell.id} (${cell.harness}) failed on every instance (${exitText(cell.exit_classes)}) and resolved none: an evaluation failure, not a result`,
        cell.attempts,
        [],
      ),
    )
  }
  out.push(...classificationHealth(c, out))
  const infra = reasonsByCode(c, 'infra_error')
  if (infra.instances.length > 0) {
    out.push(
      h(
        'infra_errors',
        'warning',
        null,
        null,
        `${infra.instances.length} block(s) with infrastructure errors left out of the paired statistics${topDetails(infra.details)}`,
        infra.instances.length,
        infra.instances,
      ),
    )
  }
  const identity = [
    ...reasonsByCode(c, 'model_mismatch').instances,
    ...reasonsByCode(c, 'image_mismatch').instances,
    ...reasonsByCode(c, 'config_drift').instances,
  ]
  if (identity.length > 0) {
    out.push(
      h(
        'identity_mismatch',
        'error',
        null,
        null,
        `${identity.length} block(s) where the observed model, image or config differs from the declared one`,
        identity.length,
        [...new Set(identity)],
      ),
    )
  }
  const tc = c.telemetry_coverage
  if (tc.missing + tc.unknown + tc.partial > 0) {
    out.push(
      h(
        'telemetry_missing',
        'warning',
        null,
        null,
        `telemetry incomplete for ${tc.missing + tc.unknown + tc.partial} of ${tc.attempts} attempts (missing ${tc.missing}, partial ${tc.partial}, unknown ${tc.unknown}); missing is never zero`,
        tc.missing + tc.unknown + tc.partial,
        [],
      ),
    )
  }
  const incompleteList = c.blocks.incomplete.map((b) => b.instance)
  for (const e of c.comparisons) {
    const k = key(e)
    const share = coverageShare(e)
    if (share !== null && share < thresholds.min_coverage) {
      out.push(
        h(
          'coverage_low',
          'error',
          k,
          null,
          `${e.denominators.outcome} of ${e.denominators.coverage} blocks complete (${pct(share)}) is below min_coverage ${pct(thresholds.min_coverage)}: inconclusive${topReasons(c)}`,
          e.denominators.coverage - e.denominators.outcome,
          incompleteList,
        ),
      )
    } else if (
      e.denominators.coverage > 0 &&
      e.denominators.cost / e.denominators.coverage < thresholds.min_coverage
    ) {
      // The outcome is decided on valid pairs; only cost lacks coverage: a gap (warning), not a
      // failed evaluation — the comparison completes with gaps.
      out.push(
        h(
          'telemetry_missing',
          'warning',
          k,
          null,
          `cost-complete blocks ${e.denominators.cost} of ${e.denominators.coverage} (${pct(e.denominators.cost / e.denominators.coverage)}) are below min_coverage ${pct(thresholds.min_coverage)}: cost, fresh-input and request ratios are not decided`,
          e.denominators.coverage - e.denominators.cost,
          [],
        ),
      )
    }
  }
  return out
}

export type KeyOf = (e: ComparisonEntry) => string

/**
 * What the classifier (src/classify) found, as evaluation health: a cell with no agent outcome is
 * not evaluated (`not_evaluated`, an error that blocks its comparisons, unless a startup failure
 * already says so); telemetry anomalies, clustered timeouts, shared error signatures and thin
 * cells are warnings — evaluation-health findings, never harness results or resource alarms.
 */
function classificationHealth(c: Comparison, already: Health[]): Health[] {
  const k = c.classification
  if (!k) return []
  const out: Health[] = []
  for (const cell of k.cells) {
    if (cell.not_evaluated === null) continue
    if (already.some((x) => x.code === 'harness_startup_failure' && x.cell === cell.cell)) continue
    out.push(
      h(
        'not_evaluated',
        'error',
        null,
        cell.cell,
        `cell ${cell.cell} not evaluated: ${cell.not_evaluated}`,
        cell.scheduled,
        [],
      ),
    )
  }
  const kinds = Object.entries(k.telemetry)
  if (kinds.length > 0) {
    const n = kinds.reduce((s, [, v]) => s + v, 0)
    const byCell = k.cells
      .filter((x) => Object.keys(x.telemetry).length > 0)
      .map((x) => {
        const spend =
          x.anomalous_raw_spend_usd !== null
            ? `, raw $${x.anomalous_raw_spend_usd}${x.anomalous_dedup_spend_usd !== null ? ` / de-duplicated $${x.anomalous_dedup_spend_usd}` : ''}`
            : ''
        return `${x.cell}: ${Object.entries(x.telemetry)
          .map(([kind, v]) => `${kind} ×${v}`)
          .join(', ')}${spend}`
      })
    out.push(
      h(
        'telemetry_anomaly',
        'warning',
        null,
        null,
        `${n} attempt(s) with anomalous or suspect telemetry left out of every resource figure (${byCell.join('; ')}); no resource alarm rests on them`,
        n,
        [],
      ),
    )
  }
  for (const f of k.findings) out.push(h(f.code, 'warning', null, f.cell, f.message, f.attempts, []))
  return out
}

/** outcome / planned blocks of a comparison; null when nothing was planned. */
export function coverageShare(e: ComparisonEntry): number | null {
  return e.denominators.coverage > 0 ? e.denominators.outcome / e.denominators.coverage : null
}

/** Cells that never worked: attempts recorded, none resolved, no exit other than error/infra. */
export function startupFailures(
  c: Comparison,
): { id: string; harness: string; attempts: number; exit_classes: Record<string, number> }[] {
  return c.cells
    .filter((cell) => {
      const attempts = cell.intent_to_treat.attempts
      if (attempts === 0 || cell.final_outcomes.resolved > 0) return false
      const counts = Object.entries(cell.exit_classes).filter(([, n]) => n > 0)
      return counts.length > 0 && counts.every(([k]) => k === 'error' || k === 'infra')
    })
    .map((cell) => ({
      id: cell.id,
      harness: cell.harness,
      attempts: cell.intent_to_treat.attempts,
      exit_classes: cell.exit_classes,
    }))
}

function reasonsByCode(c: Comparison, code: BlockReasonCode): { instances: string[]; details: string[] } {
  const instances: string[] = []
  const details: string[] = []
  for (const b of c.blocks.incomplete) {
    const rs = b.reasons.filter((r) => r.code === code)
    if (rs.length === 0) continue
    instances.push(b.instance)
    for (const r of rs) details.push(r.detail)
  }
  return { instances, details }
}

function topReasons(c: Comparison): string {
  const counts = new Map<string, number>()
  for (const b of c.blocks.incomplete) {
    for (const code of new Set(b.reasons.map((r) => r.code))) counts.set(code, (counts.get(code) ?? 0) + 1)
  }
  const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3)
  return top.length > 0 ? ` (incomplete: ${top.map(([k, n]) => `${k} ×${n}`).join(', ')})` : ''
}

function topDetails(details: string[]): string {
  const counts = new Map<string, number>()
  for (const d of details) counts.set(d, (counts.get(d) ?? 0) + 1)
  const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3)
  return top.length > 0 ? `: ${top.map(([k, n]) => `${k} ×${n}`).join(', ')}` : ''
}

function exitText(classes: Record<string, number>): string {
  return Object.entries(classes)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ')
}

function pct(x: number): string {
  return `${(x * 100).toFixed(x * 100 === Math.round(x * 100) ? 0 : 1)}%`
}

function h(
  code: Health['code'],
  severity: Health['severity'],
  key: string | null,
  cell: string | null,
  message: string,
  count: number,
  instances: string[],
): Health {
  return { code, severity, key, cell, message, count, instances: instances.slice(0, MAX_LISTED) }
}

/** Health entries that say the same thing (one severity, code and message), counted once. */
export interface HealthGroup {
  /** The first entry of the group (its key and cell are those of the first). */
  health: Health
  /** How many entries carry this message (e.g. one per comparison). */
  times: number
  /** The distinct comparison keys the entries affect, in order of appearance (null = the whole run). */
  keys: Array<string | null>
}

/**
 * Group identical health messages (same severity, code and message) so a table shows each problem
 * once with a count, in order of first appearance. Pure.
 */
export function groupHealth(health: readonly Health[]): HealthGroup[] {
  const groups = new Map<string, HealthGroup>()
  for (const x of health) {
    const id = `${x.severity}\u0000${x.code}\u0000${x.message}`
    const g = groups.get(id)
    if (!g) groups.set(id, { health: x, times: 1, keys: [x.key] })
    else {
      g.times++
      if (!g.keys.includes(x.key)) g.keys.push(x.key)
    }
  }
  return [...groups.values()]
}

/** A grouped message for display: "message (×5)". */
export function groupedMessage(g: HealthGroup): string {
  return g.times > 1 ? `${g.health.message} (×${g.times})` : g.health.message
}
