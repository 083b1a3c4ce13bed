import type { Decision } from '../detect/schema.js'

/** The label of an evaluation-health notice: never the label set of a regression tracking issue. */
export const EVALUATION_HEALTH_LABEL = 'evaluation-health'

/** What a decision may publish besides the PR comment. */
export interface NoticeChoice {
  /**
   * `regression`: a confirmed breach (a tracking issue, with the manifest's labels);
   * `evaluation_health`: infrastructure-only problems (health errors and no confirmed breach), a
   * notice with its own label, never a regression issue; null: nothing to publish.
   */
  kind: 'regression' | 'evaluation_health' | null
  labels: string[]
  /** The health messages the notice carries (errors first), empty for the other kinds. */
  problems: string[]
}

/**
 * Choose the kind and labels of what a decision publishes (pure). A confirmed breach is a regression
 * issue; a run whose only problems are evaluation health (failed legs, harnesses that never started,
 * cells not evaluated, low coverage) is an evaluation-health notice labelled
 * `evaluation-health` beside the manifest's first label — so a search for regression issues never
 * finds it; anything else publishes nothing.
 */
export function noticeKind(d: Decision): NoticeChoice {
  const labels = d.policy.reporting.labels
  if (d.status === 'confirmed') return { kind: 'regression', labels: [...labels], problems: [] }
  const errors = d.health.filter((h) => h.severity === 'error')
  if (errors.length === 0) return { kind: null, labels: [], problems: [] }
  const base = labels[0] ?? 'harness-watch'
  return {
    kind: 'evaluation_health',
    labels: [base, EVALUATION_HEALTH_LABEL].filter((l, i, all) => all.indexOf(l) === i),
    problems: errors.map((h) => `${h.code}: ${h.message}`),
  }
}
