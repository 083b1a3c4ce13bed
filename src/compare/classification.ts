import { CLASS_GROUP, isAgentOutcome, OUTCOME_CLASSES, type OutcomeClass } from '../classify/classes.js'
import type { ComparisonInput } from '../ingest/observations.js'
import type { ClassificationSummary } from '../records/classification.js'

/** Summarise the classes carried by the observations (pure); null for inputs without classes (published results). */
export function classificationSummary(input: ComparisonInput): ClassificationSummary | null {
  if (input.kind !== 'experiment') return null
  const totals = { scheduled: 0, evaluated: 0, metered: 0 }
  const infra: Record<string, number> = {}
  const grading: Record<string, number> = {}
  const other: Record<string, number> = {}
  const telemetry: Record<string, number> = {}
  const inc = (m: Record<string, number>, k: string) => {
    m[k] = (m[k] ?? 0) + 1
  }
  const planned = new Set(input.instances)
  // Each cell's observations of planned instances, in input order: one pass over the observations.
  const byCell = new Map<string, ComparisonInput['observations']>()
  for (const cell of input.cells) byCell.set(cell.id, [])
  for (const o of input.observations) {
    const list = byCell.get(o.cell)
    if (list && planned.has(o.instance)) list.push(o)
  }
  const cells = input.cells.map((cell) => {
    const obs = byCell.get(cell.id)!
    const scheduled = input.instances.length * cell.trials
    let evaluated = 0
    let metered = 0
    const classes: Record<string, number> = {}
    const attempts: Record<string, number> = {}
    const tel: Record<string, number> = {}
    let raw: number | null = 0
    let dedup: number | null = 0
    let anomalous = 0
    let partial = 0
    let partialSpend: number | null = 0
    let nonUtf8Attempts = 0
    let nonUtf8Sequences = 0
    for (const o of obs) {
      const views = o.classes ?? []
      const fin = views.find((v) => v.final)
      const cls: OutcomeClass | 'unclassified' = fin?.outcome_class ?? 'unclassified'
      inc(classes, cls)
      if (cls !== 'unclassified' && isAgentOutcome(cls)) {
        evaluated++
        const usable =
          o.coverage === 'complete' && views.every((v) => v.telemetry_class === 'ok' && !v.partial_usage)
        if (usable) metered++
      } else if (cls !== 'unclassified') {
        const g = CLASS_GROUP[cls]
        inc(g === 'infrastructure' ? infra : g === 'grading' ? grading : other, cls)
      }
      for (const v of views) {
        inc(attempts, v.outcome_class ?? 'unclassified')
        if (v.anomaly) {
          inc(tel, v.anomaly)
          inc(telemetry, v.anomaly)
        }
        if (v.telemetry_class !== 'ok') {
          anomalous++
          raw = raw === null || v.raw_spend_usd === null ? null : raw + v.raw_spend_usd
          dedup = dedup === null || v.dedup_spend_usd === null ? null : dedup + v.dedup_spend_usd
        }
        if ((v.non_utf8 ?? 0) > 0) {
          nonUtf8Attempts++
          nonUtf8Sequences += v.non_utf8 ?? 0
        }
        if (v.partial_usage) {
          partial++
          partialSpend =
            partialSpend === null || v.raw_spend_usd === null ? null : partialSpend + v.raw_spend_usd
        }
      }
    }
    totals.scheduled += scheduled
    totals.evaluated += evaluated
    totals.metered += metered
    const notEvaluated =
      evaluated > 0
        ? null
        : obs.length === 0
          ? 'no attempt was recorded'
          : `no attempt reached an agent outcome (${fmtCounts(classes)})`
    return {
      cell: cell.id,
      scheduled,
      evaluated,
      metered,
      classes: sorted(classes),
      attempts: sorted(attempts),
      telemetry: sorted(tel),
      anomalous_raw_spend_usd: anomalous > 0 ? round(raw) : null,
      anomalous_dedup_spend_usd: anomalous > 0 ? round(dedup) : null,
      partial_usage_attempts: partial,
      partial_usage_spend_usd: partial > 0 ? round(partialSpend) : null,
      not_evaluated: notEvaluated,
      non_utf8_attempts: nonUtf8Attempts,
      non_utf8_sequences: nonUtf8Sequences,
    }
  })
  const infraText = Object.keys(infra).length > 0 ? fmtCounts(infra) : 'none'
  const extra = [
    Object.keys(grading).length > 0 ? ` · ungraded: ${fmtCounts(grading)}` : '',
    Object.keys(other).length > 0 ? ` · excluded: ${fmtCounts(other)}` : '',
  ].join('')
  const line = `scheduled ${totals.scheduled} · evaluated ${totals.evaluated} (outcome) · metered ${totals.metered} (cost) · infrastructure failures: ${infraText}${extra}`
  return {
    denominators: {
      ...totals,
      infrastructure: sorted(infra),
      grading: sorted(grading),
      excluded_other: sorted(other),
    },
    line,
    telemetry: sorted(telemetry),
    cells,
    findings: (input.classFindings ?? []).map((f) => ({ ...f })),
  }
}

/** "harness_startup ×6, quota ×1" in class order. */
export function fmtCounts(m: Record<string, number>): string {
  const order = (k: string) => {
    const i = (OUTCOME_CLASSES as readonly string[]).indexOf(k)
    return i < 0 ? 99 : i
  }
  return Object.entries(m)
    .filter(([, n]) => n > 0)
    .sort((a, b) => order(a[0]) - order(b[0]) || (a[0] < b[0] ? -1 : 1))
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ')
}

function sorted(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)))
}

function round(x: number | null): number | null {
  return x === null ? null : Math.round(x * 1e10) / 1e10
}
