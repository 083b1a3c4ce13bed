import { formatEffect as formatEffectRaw, formatRerun as formatRerunRaw } from '../detect/decide.js'
import { METRIC_RULES } from '../detect/effects.js'
import { groupedMessage, groupHealth } from '../detect/health.js'
import type { ComparisonVerdict, Decision, DecisionStatus, Health, Signal } from '../detect/schema.js'
import { type DiagnosisSummary, diagnosisMarkdown } from '../diagnose/summary.js'
import type { Comparison } from '../records/comparison.js'
import { fitSections, GITHUB_BODY_LIMIT, type Section } from '../report/budget.js'
import { evaluatedShareMarkdown } from '../report/classification.js'
import { codeSpan, escapeMarkdown, neutralizeMentions } from '../report/escape.js'
import { markdownSections } from '../report/markdown.js'
import { confirmedMetrics, verdictSentences } from '../report/verdict.js'
import { fmtInt, fmtP } from '../util/format.js'
import { identityMarker, type NoticeState, stateMarker, type TrackingState } from './marker.js'

/**
 * Markdown bodies of the tracking issue, its comments and the PR comment. Everything quoted from a
 * run goes through src/report/escape.ts (no HTML, no mentions, nothing that can open or close an
 * HTML comment); bodies are budgeted under GitHub's 65,536-character limit with whole sections
 * dropped from the bottom and a link to the full report (F13). Pure.
 */

/** Body budget: GitHub's limit less a margin for its own accounting. */
export const BODY_BUDGET = GITHUB_BODY_LIMIT - 1_000

/** Characters of the PR comment's verdict table (part of the head, which is never dropped). */
export const VERDICT_TABLE_BUDGET = 16_000

export interface RenderContext {
  decision: Decision
  /** The first run's comparison.json (whole panel), for the report sections; null if unavailable. */
  comparison: Comparison | null
  /** The run page or report artifact, linked whenever something is left out. */
  reportUrl: string | null
  /** The experiment's weekly history page (`harness-watch history`), when there is one. */
  historyUrl?: string | null
  /** The dossier and proposal of the deciding round, when written (published only once confirmed). */
  diagnosis?: DiagnosisSummary | null
}

const STATUS_LINE: Record<DecisionStatus, string> = {
  ok: '✅ **No regression**: no threshold crossed on complete blocks.',
  completed_with_gaps:
    '✅ **No regression, completed with gaps**: no threshold crossed on the valid pairs; some figures lack coverage (see the denominators).',
  breach:
    '⚠️ **Unconfirmed; rerun requested**: a threshold was crossed on this run only. One run is never enough (run-to-run variance); a targeted rerun decides.',
  confirmed: '❌ **Confirmed regression**: the threshold was crossed and held on the targeted rerun.',
  cleared: '✅ **Cleared**: a threshold was crossed, but it did not hold on the targeted rerun.',
  inconclusive:
    '❔ **Inconclusive**: the evaluation itself failed (see evaluation health); this is not a harness result.',
}

/**
 * The headline: the status, and on a confirmed regression the metrics confirmed, by name
 * ("❌ **Confirmed regression: spend (`b` vs `a`)** — …"), so a cleared row beside it is never read
 * as confirmed.
 */
function statusLine(status: DecisionStatus, d: Decision): string {
  const confirmed = status === 'confirmed' ? confirmedMetrics(d, codeSpan) : null
  if (!confirmed) return STATUS_LINE[status]
  return `❌ **Confirmed regression: ${confirmed}** — crossed on this run and held on the targeted rerun.`
}

/** One plain sentence per compared metric (report/verdict.ts), then a blank line; the notation follows below. */
function verdictLines(ctx: RenderContext, verdicts: ComparisonVerdict[]): string[] {
  const d = ctx.decision
  const keys = new Set(verdicts.map((v) => v.key))
  const lines = verdictSentences({ ...d, comparisons: verdicts.slice(0, 10) }, ctx.comparison, codeSpan)
  return lines.length > 0 && keys.size > 0 ? [...lines, ''] : []
}

/**
 * Each harness's evaluated share (report/classification.ts, the same line as report.md's head), then a
 * blank line; after a confirmation round it is the first run's, and says so. None without a comparison.
 */
function shareLines(ctx: RenderContext): string[] {
  const share = ctx.comparison ? evaluatedShareMarkdown(ctx.comparison) : null
  if (!share) return []
  return [ctx.decision.round > 0 ? `${share} (first run)` : share, '']
}

/**
 * The weekly evidence of a key once it has crossed its bound (detect/evidence.ts): it opens or
 * updates the issue even when no single week's rerun confirmed, so the body says so. Built from
 * counts and α only; escaped.
 */
function weeklyEvidenceLines(d: Decision, key: string): string[] {
  const ev = d.evidence?.find((e) => e.key === key && e.sufficient)
  if (!ev) return []
  return [`**Weekly evidence crossed its bound**: ${escapeMarkdown(ev.statement)}.`, '']
}

/** Title of the tracking issue of one comparison key. */
export function trackingTitle(d: Decision, v: ComparisonVerdict): string {
  const what =
    v.kind === 'self'
      ? `${v.treatment} regressed against its previous run`
      : `${v.treatment} regressed vs ${v.baseline}`
  return `Harness Watch: ${what} (${d.experiment_id})`
}

/** The tracking issue body: identity and state markers first, then the latest state of the key. */
export function trackingIssueBody(ctx: RenderContext, key: string, state: TrackingState): string {
  const d = ctx.decision
  const v = d.comparisons.find((x) => x.key === key)
  const signals = d.signals.filter((s) => s.key === key)
  const head = [
    identityMarker('tracking', key),
    stateMarker(state),
    `## ${v ? escapeMarkdown(trackingTitle(d, v).replace(/^Harness Watch: /, '')) : codeSpan(key)}`,
    '',
    state.recovered
      ? `✅ **Recovered**: ${state.clean_runs} consecutive run(s) without a breach.`
      : statusLine(v ? v.status : d.status, v ? { ...d, signals: signals } : d),
    '',
    ...weeklyEvidenceLines(d, key),
    ...verdictLines(ctx, v ? [v] : d.comparisons),
    ...shareLines(ctx),
    runLine(ctx, state),
  ].join('\n')
  const sections: Section[] = [
    { id: 'signals', text: signalsSection(signals, v ?? null), keep: true },
    ...healthSections(d.health.filter((h) => h.key === null || h.key === key)),
    { id: 'blocks', text: blocksSection(d, signals) },
    ...diagnosisSections(ctx, v?.status ?? d.status),
    ...reportSections(ctx),
  ].filter((s) => !('text' in s) || s.text !== '')
  return compose(head, sections, ctx.reportUrl)
}

/** The comment added to a tracking issue for each new confirmed breach (edits notify nobody). */
export function confirmedComment(ctx: RenderContext, key: string, reopened: boolean): string {
  const d = ctx.decision
  const signals = d.signals.filter((s) => s.key === key && s.state === 'confirmed')
  const evidence = d.evidence?.find((e) => e.key === key && e.sufficient)
  const lines = [
    `${reopened ? 'Reopened: the' : 'The'} regression was confirmed again by run ${codeSpan(d.run_id ?? 'unknown')}.`,
    '',
    // Built from counts and α only.
    ...(evidence ? [`- weekly evidence: ${escapeMarkdown(evidence.statement)}`] : []),
    ...signals.map(
      (s) =>
        `- ${escapeMarkdown(METRIC_RULES[s.metric].label)}: first run ${formatEffect(s.effect)} (n = ${s.effect.n}); rerun ${s.rerun ? formatRerun(s.rerun) : '—'}`,
    ),
    '',
    ctx.reportUrl ? `Full report: ${link(ctx.reportUrl)}` : '',
  ]
  return lines.join('\n').trim()
}

/** The comment that marks a tracking issue recovered. */
export function recoveredComment(ctx: RenderContext, state: TrackingState, closing: boolean): string {
  return [
    `✅ Recovered: ${state.clean_runs} consecutive run(s) without a breach (latest: ${codeSpan(ctx.decision.run_id ?? 'unknown')}).`,
    closing ? 'Closing; a new confirmed breach reopens this issue.' : 'Labelled `recovered`.',
    ctx.reportUrl ? `Full report: ${link(ctx.reportUrl)}` : '',
  ]
    .filter(Boolean)
    .join('\n\n')
}

/** Title of the evaluation-health notice of an experiment (its id with mentions neutralised). */
export function healthNoticeTitle(d: Decision): string {
  return `Harness Watch: evaluation health of ${neutralizeMentions(d.experiment_id)}`
}

/**
 * The evaluation-health notice body: identity (`kind=health`, the experiment) and state markers
 * first, then what failed in the latest unhealthy run — never a regression: no threshold is named,
 * only the health findings, the decision's summary and notes (all escaped).
 */
export function healthNoticeBody(ctx: RenderContext, state: NoticeState): string {
  const d = ctx.decision
  const head = [
    identityMarker('health', d.experiment_id),
    stateMarker(state),
    `## Evaluation health: ${codeSpan(d.experiment_id)}`,
    '',
    state.recovered
      ? `✅ **Recovered**: run ${codeSpan(d.run_id ?? 'unknown')} had no evaluation-health error.`
      : '❗ **The evaluation itself failed**: infrastructure, telemetry or grading problems, not a harness result. No regression issue is opened for them.',
    '',
    ...shareLines(ctx),
    [
      `Experiment ${codeSpan(d.experiment_id)}`,
      `latest run ${codeSpan(state.last_run ?? d.run_id ?? 'unknown')}`,
      `unhealthy runs recorded: ${state.unhealthy_runs}`,
      ...(ctx.reportUrl ? [`[full report](${safeUrl(ctx.reportUrl)})`] : []),
    ].join(' · '),
  ].join('\n')
  const sections: Section[] = state.recovered
    ? []
    : [
        ...healthSections(d.health),
        { id: 'decision', text: `Decision: ${escapeMarkdown(d.summary)}` },
        ...(d.notes.length > 0
          ? [{ id: 'notes', text: d.notes.map((n) => `> Note: ${escapeMarkdown(n)}`).join('\n') }]
          : []),
      ]
  return compose(head, sections, ctx.reportUrl)
}

/** The comment on a health notice: reopened by a new unhealthy run, or recovered by a clean one. */
export function healthNoticeComment(
  ctx: RenderContext,
  kind: 'reopened' | 'recovered',
  closing: boolean,
): string {
  const d = ctx.decision
  // One line per distinct error, at most 20 (the body holds them all, within its budget).
  const errors = groupHealth(d.health.filter((h) => h.severity === 'error'))
  const shown = errors
    .slice(0, 20)
    .map((g) => `- ${codeSpan(g.health.code)}: ${escapeMarkdown(groupedMessage(g))}`)
  if (errors.length > shown.length) shown.push(`- … ${errors.length - shown.length} more (see the notice)`)
  const lines =
    kind === 'reopened'
      ? [`Reopened: run ${codeSpan(d.run_id ?? 'unknown')} has evaluation-health errors again.`, '', ...shown]
      : [
          `✅ Recovered: run ${codeSpan(d.run_id ?? 'unknown')} had no evaluation-health error.`,
          '',
          closing ? 'Closing; a new evaluation-health error reopens this notice.' : 'Labelled `recovered`.',
        ]
  if (ctx.reportUrl) lines.push('', `Full report: ${link(ctx.reportUrl)}`)
  return lines.join('\n').trim()
}

/** The PR comment: one per (PR, experiment), whatever the state (F12). */
export function prCommentBody(ctx: RenderContext, key: string): string {
  const d = ctx.decision
  const head = [
    identityMarker('pr-report', key),
    `### Harness Watch PR check: ${codeSpan(d.experiment_id)}`,
    '',
    statusLine(d.status, d),
    '',
    ...verdictLines(ctx, d.comparisons),
    ...shareLines(ctx),
    verdictTable(d.comparisons),
  ].join('\n')
  const sections: Section[] = [
    ...(d.signals.length > 0 ? [{ id: 'signals', text: signalsSection(d.signals, null), keep: true }] : []),
    ...healthSections(d.health),
    ...(d.notes.length > 0
      ? [{ id: 'notes', text: d.notes.map((n) => `> Note: ${escapeMarkdown(n)}`).join('\n') }]
      : []),
    ...(d.improvements.length > 0 ? [{ id: 'improvements', text: improvementsSection(d.improvements) }] : []),
    ...diagnosisSections(ctx, d.status),
    ...reportSections(ctx),
  ]
  return compose(head, sections, ctx.reportUrl)
}

/** Markers and headline first (never dropped), then the sections within the body budget. */
export function compose(head: string, sections: Section[], reportUrl: string | null): string {
  const { text } = fitSections(sections, {
    limit: BODY_BUDGET,
    reserve: head.length + 2,
    pointer: (omitted) =>
      `> ${omitted.length} section(s) left out to stay within GitHub's ${fmtInt(GITHUB_BODY_LIMIT)}-character limit. ` +
      (reportUrl ? `Full report: ${link(reportUrl)}` : 'The full report is in the run artifacts.'),
  })
  return `${head}\n\n${text}`.trimEnd()
}

function runLine(ctx: RenderContext, state: TrackingState): string {
  const d = ctx.decision
  const runs = d.runs.map((r) =>
    r.round === 0
      ? `first run ${codeSpan(r.run_id ?? '?')}`
      : `rerun ${r.round} ${codeSpan(r.run_id ?? '?')}`,
  )
  const parts = [
    `Experiment ${codeSpan(d.experiment_id)}`,
    ...runs,
    `confirmed breaches recorded: ${state.confirmed_breaches}`,
  ]
  if (ctx.reportUrl) parts.push(`[full report](${safeUrl(ctx.reportUrl)})`)
  if (ctx.historyUrl) parts.push(`[weekly history](${safeUrl(ctx.historyUrl)})`)
  return parts.join(' · ')
}

function verdictTable(verdicts: ComparisonVerdict[]): string {
  if (verdicts.length === 0) return '_No comparison was made._'
  const rows = verdicts.map((v) => {
    const what =
      v.kind === 'self'
        ? `${codeSpan(v.treatment)} vs its previous run`
        : `${codeSpan(v.treatment)} vs ${codeSpan(v.baseline)}`
    const cov = `${v.coverage.outcome}/${v.coverage.planned}`
    return `| ${what} | ${v.status} | ${cov} | ${v.reason ? escapeMarkdown(v.reason) : ''} |`
  })
  // The table is part of the never-dropped head, so it has its own share of the body budget.
  const kept: string[] = []
  let size = 0
  for (const r of rows) {
    if (size + r.length + 1 > VERDICT_TABLE_BUDGET) break
    kept.push(r)
    size += r.length + 1
  }
  const cut =
    kept.length < rows.length
      ? [`\n… ${rows.length - kept.length} more comparison(s): see decision.json in the full report.`]
      : []
  return ['| comparison | status | complete blocks | note |', '|---|---|---|---|', ...kept, ...cut].join('\n')
}

function signalsSection(signals: Signal[], v: ComparisonVerdict | null): string {
  if (signals.length === 0)
    return v?.reason ? `No threshold crossed. ${escapeMarkdown(v.reason)}` : 'No threshold crossed.'
  const rows = signals.map((s) => {
    const who =
      s.kind === 'self'
        ? `${codeSpan(s.treatment)} (vs previous run)`
        : `${codeSpan(s.treatment)} vs ${codeSpan(s.baseline)}`
    const p = s.p_one_sided === null ? '' : ` (one-sided p = ${fmtP(s.p_one_sided)})`
    const rerun = s.rerun
      ? `${formatRerun(s.rerun)}; ${s.rerun.complete_blocks} of ${s.rerun.planned_blocks} rerun blocks complete, b′ = ${s.rerun.b}, c′ = ${s.rerun.c}`
      : s.state === 'not_confirmable'
        ? 'not rerun: driven only by quarantined/unstable instances'
        : s.state === 'small_sample'
          ? 'not rerun: small sample, not a breach alone'
          : 'pending'
    // Rule, effects and rerun text are built here from numbers and ids, not quoted from a run.
    return `| ${who} | ${METRIC_RULES[s.metric].label} | ${escapeMarkdown(s.rule)} | ${formatEffect(s.effect)} (n = ${s.effect.n})${p} | ${rerun} | **${s.state}** |`
  })
  return [
    '#### Threshold crossings',
    '',
    '| comparison | metric | rule | first run (95% interval) | rerun | state |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n')
}

function improvementsSection(signals: Signal[]): string {
  const rows = signals.map(
    (s) =>
      `| ${codeSpan(s.treatment)} vs ${codeSpan(s.baseline)} | ${escapeMarkdown(METRIC_RULES[s.metric].label)} | ${formatEffect(s.effect)} |`,
  )
  return [
    '#### Improvements',
    '',
    '| comparison | metric | effect (95% interval) |',
    '|---|---|---|',
    ...rows,
  ].join('\n')
}

function healthSections(health: Health[]): Section[] {
  if (health.length === 0) return []
  // One row per distinct problem: a message repeated for every comparison is shown once with a count.
  const rows = groupHealth(health).map(
    (g) =>
      `| ${g.health.severity === 'error' ? '❗ error' : 'warning'} | ${codeSpan(g.health.code)} | ${escapeMarkdown(groupedMessage(g))} |`,
  )
  return [
    {
      id: 'health',
      text: [
        '#### Evaluation health',
        '',
        'Evaluation failures are tracked apart from harness results: they never raise a regression.',
        '',
        '| severity | code | what |',
        '|---|---|---|',
        ...rows,
        '',
      ].join('\n'),
      keep: health.some((h) => h.severity === 'error'),
    },
  ]
}

function blocksSection(d: Decision, signals: Signal[]): string {
  const driving = [...new Set(signals.flatMap((s) => s.instances.driving))]
  if (driving.length === 0 && d.affected_blocks.length === 0) return ''
  const list = (ids: string[]) =>
    ids.slice(0, 100).map(codeSpan).join(', ') + (ids.length > 100 ? `, … ${ids.length - 100} more` : '')
  const lines = ['#### Blocks behind the signal', '']
  if (driving.length > 0) lines.push(`Driving: ${list(driving)}`)
  if (d.affected_blocks.length > 0) lines.push('', `Rerun: ${list(d.affected_blocks)}`)
  if (d.unstable_instances.length > 0)
    lines.push('', `Unstable (never confirm a breach): ${list(d.unstable_instances)}`)
  return lines.join('\n')
}

/** The short diagnosis, only after confirmation (an unconfirmed breach has nothing to explain yet). */
function diagnosisSections(ctx: RenderContext, status: DecisionStatus): Section[] {
  if (status !== 'confirmed') return []
  if (!ctx.diagnosis) {
    // Asked for (the regression is confirmed) but not written: say so; nothing else changes.
    return [
      {
        id: 'diagnosis',
        text: '### Diagnosis\n\nNo diagnosis is available for this run: the report artifact holds no `diagnosis/dossier.json`. The decision above stands on its own.',
      },
    ]
  }
  return [{ id: 'diagnosis', text: diagnosisMarkdown(ctx.diagnosis, ctx.reportUrl) }]
}

function reportSections(ctx: RenderContext): Section[] {
  if (!ctx.comparison) return []
  // The report's own sections, one heading level down, droppable from the bottom.
  const sections = markdownSections(ctx.comparison, {
    titleLevel: 3,
    fullReport: ctx.reportUrl ?? undefined,
    verdict: false,
  }).map((s) => ({ ...s, keep: false }))
  const d = ctx.decision
  if (d.round === 0) return sections
  // After confirmation the decision above is the final one; the comparison below is the first run's.
  const first = d.runs[0]
  const label = [
    '#### First run’s figures',
    '',
    `The sections below are the first run’s whole-panel comparison${first ? ` (run ${codeSpan(first.run_id ?? '?')})` : ''}, shown for reference: the final decision above rests on confirmation round ${d.round}.`,
    '',
  ].join('\n')
  return [{ id: 'first-run', text: label, keep: false }, ...sections]
}

function link(url: string): string {
  return `[${escapeMarkdown(url)}](${safeUrl(url)})`
}

/** Only http(s) URLs are linked; anything else is shown as code. */
function safeUrl(url: string): string {
  return /^https?:\/\/[^\s<>()]+$/.test(url) ? url : '#'
}

/** An effect as Markdown: numbers as formatted; an undefined one's reason (text from a run) escaped. */
function formatEffect(e: Signal['effect']): string {
  return e.estimate === null ? escapeMarkdown(formatEffectRaw(e)) : formatEffectRaw(e)
}

/** Both rerun figures as Markdown (an undefined figure's reason escaped). */
function formatRerun(r: NonNullable<Signal['rerun']>): string {
  const text = formatRerunRaw(r)
  return r.rerun_only.estimate === null || r.combined.estimate === null ? escapeMarkdown(text) : text
}
