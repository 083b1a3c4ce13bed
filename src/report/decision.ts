import {
  formatEffect as formatEffectRaw,
  formatRerunTest as formatRerunTestRaw,
  intervalLabel,
} from '../detect/decide.js'
import { METRIC_RULES } from '../detect/effects.js'
import { estimandOf, estimandScope } from '../detect/estimand.js'
import { groupedMessage, groupHealth } from '../detect/health.js'
import type { ComparisonVerdict, Decision, DecisionStatus, Signal } from '../detect/schema.js'
import { fmtP } from '../util/format.js'
import { codeSpan, escapeHtml, escapeMarkdown } from './escape.js'

/**
 * The "Decision" section of report.md and report.html: what the detection stage concluded from the
 * comparison (decision.json), rendered after it is decided so the report states the verdict. Bounded
 * in size (long lists are cut with a count) because it is never dropped from a budgeted report. Pure.
 */

/** The status as the reports name it. */
export const STATUS_LABEL: Record<DecisionStatus, string> = {
  ok: 'ok',
  completed_with_gaps: 'completed with gaps',
  breach: 'breach (unconfirmed)',
  confirmed: 'confirmed',
  cleared: 'cleared',
  inconclusive: 'inconclusive',
}

const STATUS_MEANING: Record<DecisionStatus, string> = {
  ok: 'no threshold crossed on complete blocks',
  completed_with_gaps:
    'no threshold crossed on the valid pairs; some figures (e.g. cost) could not be decided for lack of coverage — see the denominators',
  breach:
    'a threshold was crossed on this run only; a single run never confirms a regression (run-to-run variance), a targeted rerun decides',
  confirmed: 'a threshold was crossed and held on the targeted rerun',
  cleared: 'a threshold was crossed on the first run but did not hold on the targeted rerun',
  inconclusive: 'the evaluation itself failed (see the health problems); this is not a harness result',
}

/** What the section shows: the decision and, across a confirmation round, where the other report is. */
export interface DecisionView {
  decision: Decision
  /**
   * On the first run's report once its confirmation round has been decided: the round, its status
   * and the rerun's report (a path relative to this report, or a URL).
   */
  confirmedBy?: { round: number; status: DecisionStatus; report: string } | null
  /** On a rerun's report: the first run's report (relative path or URL). */
  firstRunReport?: string | null
}

/** Rows listed before "… N more" (keeps the section small enough never to be dropped). */
const MAX_ROWS = 25
const MAX_BLOCKS = 50

/** The one line a reader looks for: "**Decision: breach (unconfirmed)** — …". */
export function decisionLine(d: Decision): string {
  return `**Decision: ${STATUS_LABEL[d.status]}** — ${STATUS_MEANING[d.status]}.`
}

/** The Markdown section (heading level 2), ending with a blank line. */
export function decisionMarkdown(view: DecisionView): string {
  const d = view.decision
  const lines = ['## Decision', '']
  if (view.confirmedBy) {
    // The final decision leads; this run's own status and figures follow, labelled as the first run's.
    const cb = view.confirmedBy
    lines.push(
      `**Final decision: ${STATUS_LABEL[cb.status]}** (confirmation round ${cb.round}) — ${STATUS_MEANING[cb.status]}. Its report: ${link(cb.report)}.`,
      '',
      `First run (this report): ${STATUS_LABEL[d.status]}; the figures below are the first run’s.`,
      '',
    )
  } else lines.push(decisionLine(d), '')
  if (view.firstRunReport) lines.push(`First run’s report: ${link(view.firstRunReport)}.`, '')
  if (d.comparisons.length > 0) {
    lines.push(`| Comparison | Status | ${blocksHeader(d)} | Note |`, '|---|---|---:|---|')
    for (const v of d.comparisons.slice(0, MAX_ROWS)) {
      lines.push(
        `| ${who(v, codeSpan)} | ${STATUS_LABEL[v.status]} | ${v.coverage.outcome} of ${v.coverage.planned} | ${v.reason ? escapeMarkdown(v.reason) : ''} |`,
      )
    }
    lines.push(...more(d.comparisons.length, 'comparison'), '')
  }
  if (d.signals.length > 0) {
    lines.push(
      '| Signal | Rule | First run [interval] | One-sided p | State | Rerun |',
      '|---|---|---|---:|---|---|',
    )
    for (const s of d.signals.slice(0, MAX_ROWS)) {
      // Rule, effect and rerun text are built from numbers and ids here, not quoted from a run.
      lines.push(
        `| ${who(s, codeSpan)}: ${METRIC_RULES[s.metric].label} | ${escapeMarkdown(s.rule)} | ${firstRun(s)} | ${fmtP(s.p_one_sided)} | ${s.state.replace('_', ' ')} | ${rerunText(s, view)} |`,
      )
    }
    lines.push(...more(d.signals.length, 'signal'), '')
  } else {
    lines.push('No regression signal.', '')
  }
  if (d.improvements.length > 0) {
    const list = d.improvements
      .slice(0, MAX_ROWS)
      .map((s) => `${who(s, codeSpan)} ${METRIC_RULES[s.metric].label} ${formatEffect(s.effect)}`)
    lines.push(
      `Improvements (reported, never alarmed): ${list.join('; ')}${tail(d.improvements.length)}.`,
      '',
    )
  }
  for (const ev of (d.evidence ?? []).slice(0, MAX_ROWS)) {
    // The statement is built from counts and α; the key is quoted from the run.
    lines.push(
      `Evidence across weekly runs, ${codeSpan(ev.key)}: ${escapeMarkdown(`${ev.statement} (${evidenceRuns(ev)})`)}.`,
      '',
    )
  }
  const health = groupHealth(d.health)
  if (health.length > 0) {
    lines.push(
      '**Health problems** (evaluation failures, tracked apart from harness results):',
      '',
      '| Severity | Code | Problem |',
      '|---|---|---|',
    )
    for (const g of health.slice(0, MAX_ROWS)) {
      lines.push(
        `| ${g.health.severity} | ${codeSpan(g.health.code)} | ${escapeMarkdown(groupedMessage(g))} |`,
      )
    }
    lines.push(...more(health.length, 'problem'), '')
  } else {
    lines.push('No health problems.', '')
  }
  for (const line of concentrationLines(d, codeSpan)) lines.push(line, '')
  lines.push(scopeLine(d), '')
  for (const n of d.notes.slice(0, MAX_ROWS)) lines.push(`Note: ${escapeMarkdown(n)}`, '')
  const rerun = confirmationText(view, codeSpan)
  if (rerun) lines.push(rerun, '')
  return `${lines.join('\n')}\n`
}

/** The HTML section. */
export function decisionHtml(view: DecisionView): string {
  const d = view.decision
  const e = escapeHtml
  const plain = (x: string) => x
  const parts = [`<section id="decision" class="decision ${e(d.status)}"><h2>Decision</h2>`]
  if (view.confirmedBy) {
    const cb = view.confirmedBy
    parts.push(
      `<p><strong>Final decision: ${e(STATUS_LABEL[cb.status])}</strong> (confirmation round ${cb.round}) — ${e(STATUS_MEANING[cb.status])}. Its report: ${htmlLink(cb.report)}.</p>`,
      `<p>First run (this report): ${e(STATUS_LABEL[d.status])}; the figures below are the first run’s.</p>`,
    )
  } else {
    parts.push(
      `<p><strong>Decision: ${e(STATUS_LABEL[d.status])}</strong> — ${e(STATUS_MEANING[d.status])}.</p>`,
    )
  }
  if (view.firstRunReport) parts.push(`<p>First run’s report: ${htmlLink(view.firstRunReport)}.</p>`)
  if (d.comparisons.length > 0) {
    parts.push(
      `<table><tr><th>Comparison</th><th>Status</th><th>${e(blocksHeader(d))}</th><th>Note</th></tr>`,
      ...d.comparisons.map(
        (v) =>
          `<tr><td>${e(who(v, plain))}</td><td>${e(STATUS_LABEL[v.status])}</td><td>${v.coverage.outcome} of ${v.coverage.planned}</td><td>${e(v.reason ?? '')}</td></tr>`,
      ),
      '</table>',
    )
  }
  if (d.signals.length > 0) {
    parts.push(
      '<table><tr><th>Signal</th><th>Rule</th><th>First run [interval]</th><th>One-sided p</th><th>State</th><th>Rerun</th></tr>',
      ...d.signals.map(
        (s) =>
          `<tr><td>${e(`${who(s, plain)}: ${METRIC_RULES[s.metric].label}`)}</td><td>${e(s.rule)}</td><td>${e(firstRun(s))}</td><td>${e(fmtP(s.p_one_sided))}</td><td>${e(s.state.replace('_', ' '))}</td><td>${e(rerunText(s, view))}</td></tr>`,
      ),
      '</table>',
    )
  } else {
    parts.push('<p>No regression signal.</p>')
  }
  for (const ev of d.evidence ?? []) {
    parts.push(
      `<p>${e(`Evidence across weekly runs, ${ev.key}: ${ev.statement} (${evidenceRuns(ev)}).`)}</p>`,
    )
  }
  const health = groupHealth(d.health)
  if (health.length > 0) {
    parts.push(
      '<h3>Health problems</h3><table><tr><th>Severity</th><th>Code</th><th>Problem</th></tr>',
      ...health.map(
        (g) =>
          `<tr><td>${e(g.health.severity)}</td><td>${e(g.health.code)}</td><td>${e(groupedMessage(g))}</td></tr>`,
      ),
      '</table>',
    )
  } else {
    parts.push('<p>No health problems.</p>')
  }
  for (const line of concentrationLines(d, plain)) parts.push(`<p class="note">${e(line)}</p>`)
  parts.push(`<p class="scope">${e(scopeLine(d))}</p>`)
  for (const n of d.notes) parts.push(`<p class="note">Note: ${e(n)}</p>`)
  const rerun = confirmationText(view, plain)
  if (rerun) parts.push(`<p>${e(rerun)}</p>`)
  parts.push('</section>')
  return parts.join('')
}

/** "runs w1 (b = 7, c = 0), w2 (b = 6, c = 1); one look per run, counts pooled within the test". */
function evidenceRuns(ev: NonNullable<Decision['evidence']>[number]): string {
  const shown = ev.runs.slice(-MAX_ROWS)
  const earlier = ev.runs.length - shown.length
  const list = shown.map((r) => `${r.run_id} (b = ${r.b}, c = ${r.c})`).join(', ')
  const before = earlier > 0 ? `${earlier} earlier not listed, then ` : ''
  if (!('design' in ev)) {
    // A record of the earlier e-value rule (read back, never written).
    const thetas = [
      ...new Set(ev.runs.flatMap((r) => (r.theta === undefined ? [] : [Number(r.theta.toPrecision(3))]))),
    ]
    const listed = thetas.slice(0, MAX_THETAS).join(' / ')
    const at =
      thetas.length === 0
        ? ''
        : ` at θ₁ = ${listed}${thetas.length > MAX_THETAS ? ` / … (${thetas.length} values)` : ''}`
    return `runs ${before}${list}; one-sided likelihood-ratio e-values${at} multiplied, weeks never pooled`
  }
  return `runs ${before}${list}; one look per run, discordant counts pooled within the test`
}

/**
 * What the claims cover (statistics.md "Scope statement"): the resolve-rate claim is about these n
 * instances, not the benchmark; each ratio claim is about the ratio of totals over these instances.
 * Built from counts only.
 */
export function scopeLine(d: Decision): string {
  const n = Math.max(0, ...d.comparisons.map((v) => v.coverage.outcome))
  const costN = Math.max(0, ...d.comparisons.map((v) => v.coverage.cost))
  return (
    `Scope: the resolve-rate claim ${estimandScope(estimandOf('resolved'), n)}; ` +
    `each ratio claim (spend, fresh input, requests) is the ratio of totals Σtreatment/Σbaseline and ${estimandScope(estimandOf('spend_usd'), costN, 'resource')}. ` +
    'Per-block medians or geometric means, where shown, are descriptive only and never the test.'
  )
}

/**
 * Ratio signals whose first-run ratio of totals rests on a few blocks (detect/concentration.ts):
 * named, with the blocks, so a rerun that cannot confirm them does not read as cleared.
 */
function concentrationLines(d: Decision, code: (s: string) => string): string[] {
  const out: string[] = []
  for (const s of d.signals) {
    const c = s.rerun?.concentration
    if (!c) continue
    out.push(
      `Concentration: ${who(s, code)} ${METRIC_RULES[s.metric].label} — the first run's ratio of totals rests on ${c.k} instance${c.k === 1 ? '' : 's'} (${c.instances.slice(0, MAX_ROWS).map(code).join(', ')}); without them it falls at least halfway back to parity. ${s.state === 'confirmed' ? 'Confirmed on the test of totals.' : 'The test of totals cannot confirm a cost carried by so few blocks: this is a concentrated cost to look at, not a cleared one.'}`,
    )
  }
  return out
}

/** Distinct θ₁ values named in an evidence line. */
const MAX_THETAS = 5

function who(
  x: Pick<Signal, 'kind' | 'baseline' | 'treatment'> | ComparisonVerdict,
  code: (s: string) => string,
) {
  return x.kind === 'self'
    ? `${code(x.treatment)} vs its previous run`
    : `${code(x.treatment)} vs ${code(x.baseline)}`
}

/** The first run's effect with its block count and interval method: "2.26× [1.97, 2.59] (n = 16; bootstrap BCa)". */
function firstRun(s: Signal): string {
  const note = s.effect.estimate !== null && s.effect.reason ? `; ${s.effect.reason}` : ''
  return `${formatEffect(s.effect)} (n = ${s.effect.n}; ${intervalLabel(s.effect)}${note})`
}

function rerunText(s: Signal, view: DecisionView): string {
  if (s.rerun) {
    return `round ${s.rerun.round}: ${formatRerunTest(s.rerun)}; ${s.rerun.complete_blocks} of ${s.rerun.planned_blocks} rerun blocks complete, b′ = ${s.rerun.b}, c′ = ${s.rerun.c}`
  }
  if (s.state === 'not_confirmable') return 'not rerun: driven only by quarantined/unstable instances'
  if (s.state === 'small_sample') return 'not rerun: small sample, not a breach alone'
  if (s.state !== 'unconfirmed') return '—'
  return view.confirmedBy ? `see round ${view.confirmedBy.round}` : 'pending'
}

/** The confirmation line: the rerun planned on a breach, or the rerun a decision rests on. */
function confirmationText(view: DecisionView, code: (s: string) => string): string | null {
  const text = confirmationLine(view, code)
  const design = view.decision.confirmation?.design
  // The design in one sentence (detect/designs/): how the rerun decides, at which α.
  if (!design) return text
  const statement = `Design (${design.name}@${design.version}): ${design.statement}`
  return text ? `${text} ${statement}` : statement
}

function confirmationLine(view: DecisionView, code: (s: string) => string): string | null {
  const d = view.decision
  const c = d.confirmation
  if (d.status === 'breach') {
    if (!c) {
      return d.policy.confirmation.enabled
        ? 'No confirmation rerun is planned: every affected block is on an unstable instance.'
        : 'No confirmation rerun is planned: confirmation is disabled in the manifest.'
    }
    const blocks = c.instances.slice(0, MAX_BLOCKS).map(code).join(', ')
    return (
      `A confirmation rerun ${view.confirmedBy ? 'was run' : 'is planned'}: round ${c.round}, ${c.legs} leg(s), cells ${c.cells.map(code).join(', ')}, ` +
      `${c.instances.length} block(s): ${blocks}${tail(c.instances.length, MAX_BLOCKS)} (plan ${code(c.plan)})` +
      `${c.capped ? '; more blocks were affected than confirmation.max_blocks' : ''}.`
    )
  }
  const rerun = d.runs.find((r) => r.round > 0)
  if (rerun) {
    return `Decided on the targeted rerun (round ${rerun.round}) of ${d.affected_blocks.length} block(s); the first run is ${code(d.runs[0]?.comparison ?? '?')}.`
  }
  return null
}

function more(n: number, what: string): string[] {
  return n > MAX_ROWS ? ['', `… ${n - MAX_ROWS} more ${what}(s) in decision.json.`] : []
}

function tail(n: number, max = MAX_ROWS): string {
  return n > max ? `, … ${n - max} more` : ''
}

function link(target: string): string {
  if (/^https?:\/\/[^\s<>()]+$/.test(target)) return `<${target}>`
  return codeSpan(target)
}

/** A link to the other report's HTML form; only http(s) URLs and relative paths become links. */
function htmlLink(target: string): string {
  const t = target.replace(/report\.md$/, 'report.html')
  const safe = /^https?:\/\/[^\s<>()]+$/.test(t) || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(t)
  return safe ? `<a href="${escapeHtml(t)}">${escapeHtml(t)}</a>` : escapeHtml(t)
}

/** The block-count column's header: on a confirmation round the counts are the first run's panel. */
function blocksHeader(d: { round: number }): string {
  return d.round > 0 ? 'Outcome-complete blocks (first run)' : 'Outcome-complete blocks'
}

/** An effect as Markdown: numbers as formatted; an undefined one's reason (text from a run) escaped. */
function formatEffect(e: Signal['effect']): string {
  return e.estimate === null ? escapeMarkdown(formatEffectRaw(e)) : formatEffectRaw(e)
}

/**
 * The rerun's deciding test as Markdown. Its method name and an undefined figure's reason are read
 * from the artifact: both are escaped, the numbers and interval brackets left as they are.
 */
function formatRerunTest(r: NonNullable<Signal['rerun']>): string {
  // Every text field of the test and of the figure shown is read from the artifact: escaped.
  const test = r.test
    ? {
        ...r.test,
        method: escapeMarkdown(r.test.method),
        ...(r.test.estimand === undefined ? {} : { estimand: escapeMarkdown(r.test.estimand) }),
        ...(r.test.stages
          ? { stages: r.test.stages.map((s) => ({ ...s, stage: escapeMarkdown(s.stage) })) }
          : {}),
      }
    : undefined
  const estimate = r.estimate
    ? {
        ...r.estimate,
        method: escapeMarkdown(r.estimate.method),
        reason: r.estimate.reason === null ? null : escapeMarkdown(r.estimate.reason),
      }
    : undefined
  const safe = { ...r, ...(test ? { test } : {}), ...(estimate ? { estimate } : {}) }
  const text = formatRerunTestRaw(safe)
  return r.rerun_only.estimate === null || r.combined.estimate === null ? escapeMarkdown(text) : text
}
