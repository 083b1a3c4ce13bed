import { freshInputNotComparable } from '../detect/comparable.js'
import type { Decision } from '../detect/schema.js'
import type { Comparison, ComparisonEntry, MetricName } from '../records/comparison.js'
import { METRIC_NAMES } from '../records/comparison.js'
import { isUnisolated, UNISOLATED_WARNING } from '../sandbox/contract.js'
import {
  fmtCi,
  fmtInt,
  fmtMde,
  fmtNum,
  fmtP,
  fmtPointsCi,
  fmtPp,
  fmtRate,
  fmtRatio,
  fmtValue,
  mcnemarText,
  mdeNote,
  panelText,
  routeText,
} from '../util/format.js'
import { adjustedLabel, adjustedP } from './adjusted.js'
import { fitSections, GITHUB_BODY_LIMIT, type Section } from './budget.js'
import { capabilityMarkdownRows } from './capabilities.js'
import {
  classificationMarkdown,
  denominatorsLine,
  evaluatedShareMarkdown,
  notEvaluatedReason,
} from './classification.js'
import { costEffectivenessMarkdown } from './cost-effectiveness.js'
import { type DecisionView, decisionMarkdown } from './decision.js'
import { environmentLines } from './environment.js'
import { codeSpan, encodePathSegments, escapeMarkdown, neutralizeMentions } from './escape.js'
import { type HistoryLink, historyLinkMarkdown } from './history-link.js'
import { modelRoutesText, modelsMarkdownSection } from './models.js'
import { isAaPair, noiseFloorLines } from './noise-floor.js'
import { requestProfileMarkdown } from './request-profile.js'
import { scorecardMarkdown } from './scorecard.js'
import { confirmedMetrics, verdictSentences } from './verdict.js'

export interface MarkdownOptions {
  /** Where the full report lives (a URL or a file name next to report.md). */
  fullReport?: string
  /** Character budget (default 65,536, GitHub's body limit). */
  limit?: number
  /** Characters left free for a publisher's marker or footer. */
  reserve?: number
  /** Heading level of the title (1 for report.md, 2 inside a comment). */
  titleLevel?: 1 | 2 | 3
  /** The detection stage's decision: shown as a "Decision" section under the header, never dropped. */
  decision?: DecisionView | null
  /** Open with the verdict in plain sentences (default true; false where a publisher already did). */
  verdict?: boolean
  /**
   * The artifacts folder relative to the report (e.g. `artifacts`), so that the per-instance table's
   * ATIF links resolve from the report; absent: links are relative to the artifacts folder.
   */
  artifactsHref?: string
  /** The experiment's weekly history page, linked under the run line; absent: no history is named. */
  history?: HistoryLink | null
}

export const METRIC_LABELS: Record<MetricName, string> = {
  spend_usd: 'Spend (USD)',
  proxy_requests: 'Proxy requests',
  input_tokens: 'Input tokens',
  input_fresh_tokens: 'Fresh input tokens',
  cache_read_tokens: 'Cache-read tokens',
  cache_write_tokens: 'Cache-write tokens',
  output_tokens: 'Output tokens',
  wall_s: 'Harness wall time',
}

const OUTCOME_MARK: Record<string, string> = {
  resolved: '✓',
  unresolved: '✗',
  infra_error: '⚠ infra',
  ungraded: '? ungraded',
  missing: '∅ missing',
}

/**
 * report.md: header, outcome table, resource table with intervals, request shape, the instances that
 * drive the difference, incomplete blocks, a per-instance table, and the scope statement — within a
 * character budget (F13: whole sections dropped from the bottom, tables cut at row boundaries and
 * closed, a pointer to the full report, the scope statement always kept). Text quoted from runs is
 * escaped (escape.ts). Pure and deterministic.
 */
export function renderMarkdownReport(c: Comparison, opts: MarkdownOptions = {}): string {
  const full = opts.fullReport ?? 'report.html'
  const { text } = fitSections(markdownSections(c, opts), {
    limit: opts.limit ?? GITHUB_BODY_LIMIT,
    reserve: opts.reserve ?? 0,
    pointer: (omitted) =>
      `> Shortened to fit ${fmtInt(opts.limit ?? GITHUB_BODY_LIMIT)} characters: ${omitted.length} section(s) left out or cut (${omitted.join(', ')}). Full report: ${linkTo(full)} and comparison.json.\n`,
    footer: scopeSection(c),
  })
  return text
}

/** The report's sections in order (for publishers that budget them differently). */
export function markdownSections(c: Comparison, opts: MarkdownOptions = {}): Section[] {
  const h = '#'.repeat(opts.titleLevel ?? 1)
  return [
    {
      id: 'header',
      text: header(c, h, opts.decision?.decision ?? null, opts.verdict ?? true, opts.history),
      keep: true,
    },
    ...(opts.decision ? [{ id: 'decision', text: decisionMarkdown(opts.decision), keep: true }] : []),
    { id: 'outcome', text: outcomeSection(c), keep: true },
    ...[modelsMarkdownSection(c)].filter((s) => s !== null),
    ...(c.classification ? [{ id: 'classification', text: classificationMarkdown(c), keep: true }] : []),
    { id: 'resources', text: resourceSection(c) },
    ...optional('cost-effectiveness', costEffectivenessMarkdown(c)),
    ...(c.scorecard ? [{ id: 'scorecard', text: scorecardMarkdown(c.scorecard, h) }] : []),
    { id: 'request-shape', text: requestShapeSection(c) + requestProfileMarkdown(c) },
    { id: 'drivers', text: driverSection(c) },
    incompleteSection(c),
    ...problemsSections(c),
    instanceSection(c, opts.artifactsHref),
  ]
}

function optional(id: string, text: string | null): Section[] {
  return text === null ? [] : [{ id, text }]
}

function linkTo(target: string): string {
  if (/^https?:\/\//.test(target)) return `<${target.replace(/[<>\s]/g, encodeURIComponent)}>`
  return codeSpan(target)
}

function cellName(c: Comparison, id: string): string {
  return codeSpan(c.cells.find((x) => x.id === id)?.id ?? id)
}

function header(
  c: Comparison,
  h: string,
  decision: Decision | null,
  verdict: boolean,
  history?: HistoryLink | null,
): string {
  const s = c.stamp
  const lines: string[] = []
  const title = c.kind === 'published' ? 'published results' : codeSpan(c.experiment_id)
  lines.push(`${h} Harness Watch — ${title}`, '')
  // The verdict first, in plain words: what was confirmed, then one sentence per compared metric.
  const confirmed = decision && verdict ? confirmedMetrics(decision, codeSpan) : null
  if (confirmed) lines.push(`**Confirmed on a rerun: ${confirmed}.**`, '')
  const sentences = verdict ? verdictSentences(decision, c, codeSpan) : []
  if (sentences.length > 0) lines.push(...sentences, '')
  const when =
    s.started_at || s.ended_at ? ` · ${codeSpan(s.started_at ?? '?')} → ${codeSpan(s.ended_at ?? '?')}` : ''
  if (c.kind === 'experiment') {
    lines.push(`Run ${c.run_id ? codeSpan(c.run_id) : '—'} · round ${c.round}${when}`, '')
  }
  const historyLine = historyLinkMarkdown(history)
  if (historyLine) lines.push(historyLine, '')
  const share = evaluatedShareMarkdown(c)
  if (share) lines.push(share, '')
  if (c.cells.length === 0) {
    lines.push(
      `> **No cells scheduled:** the plan selects no cell, so nothing was run and none of the ${c.blocks.planned} planned blocks is compared.`,
      '',
    )
  }
  const unisolated = (s.isolation ?? []).filter((i) => isUnisolated(i.backend))
  if (unisolated.length > 0) {
    const which = unisolated.map((i) => codeSpan(i.backend)).join(', ')
    lines.push(`> **Not isolated (${which}):** ${escapeMarkdown(UNISOLATED_WARNING)}`, '')
  }
  const drift = driftLines(c)
  if (drift.length > 0) lines.push(...drift.map((d) => `> **Config drift:** ${d}`), '')
  if (c.missing_legs.length > 0 || c.input_errors.length > 0) {
    lines.push(
      `> **Incomplete input:** ${c.missing_legs.length} missing leg(s), ${c.input_errors.length} unreadable file(s) or row(s) — listed below; their blocks are not compared.`,
      '',
    )
  }
  lines.push('| | |', '|---|---|')
  const route = modelRoutesText(c) ?? routeText(s.model)
  const model = route ? escapeMarkdown(route) : '—'
  const observed = s.model.observed.length ? `; observed ${s.model.observed.map(codeSpan).join(', ')}` : ''
  lines.push(`| Model route | ${model}${observed} |`)
  for (const cell of c.cells) {
    const role = cell.role === 'baseline' ? 'Baseline' : cell.role === 'treatment' ? 'Treatment' : 'Cell'
    const versions = cell.versions_observed.length
      ? ` (observed ${cell.versions_observed.map(codeSpan).join(', ')})`
      : ''
    const hash = cell.config_hash ? `, config ${codeSpan(cell.config_hash.slice(0, 12))}` : ''
    const m =
      (c.kind === 'published' || c.models) && cell.model_declared
        ? `, model ${codeSpan(cell.model_declared)}`
        : ''
    lines.push(
      `| ${role} ${codeSpan(cell.id)} | ${codeSpan(cell.harness)} ${cell.version_declared ? codeSpan(cell.version_declared) : '—'}${versions}${hash}${m} |`,
    )
  }
  lines.push(`| Panel | ${escapeMarkdown(panelText(s.panel))} |`)
  if (s.verifier) lines.push(`| Verifier | ${escapeMarkdown(s.verifier)} |`)
  if (s.budgets) lines.push(`| Limits and budgets | ${escapeMarkdown(s.budgets)} |`)
  if (s.retries) lines.push(`| Retries | ${escapeMarkdown(s.retries)} |`)
  if (s.isolation && s.isolation.length > 0) lines.push(`| Isolation | ${isolationText(s.isolation)} |`)
  lines.push(...capabilityMarkdownRows(c))
  for (const env of environmentLines(s.environments ?? []))
    lines.push(`| Environment | ${escapeMarkdown(env)} |`)
  lines.push(`| Trials | k = ${s.trials} |`)
  lines.push(
    `| Telemetry | ${s.telemetry_source ? `${escapeMarkdown(s.telemetry_source)}; ` : ''}${escapeMarkdown(telemetryText(c))} |`,
  )
  lines.push(`| Blocks | ${blocksText(c)} |`)
  const denominators = denominatorsLine(c)
  if (denominators) lines.push(`| Denominators | ${escapeMarkdown(denominators)} |`)
  lines.push(
    `| Statistics | ${escapeMarkdown(`seed ${s.seed}, B = ${s.bootstrap_resamples} bootstrap resamples, ${s.confidence_level * 100}% intervals`)} |`,
  )
  if (s.manifest_sha256) lines.push(`| Manifest | sha256 ${codeSpan(s.manifest_sha256.slice(0, 12))} |`)
  return `${lines.join('\n')}\n`
}

/** The Isolation line of the header: each backend with its canary result and how many legs used it. */
export function isolationText(rows: NonNullable<Comparison['stamp']['isolation']>): string {
  return rows
    .map((r) => {
      const canary = r.canary ? `, canary ${escapeMarkdown(r.canary)}` : ''
      return `${codeSpan(r.backend)} (${r.legs} leg${r.legs === 1 ? '' : 's'}${canary})`
    })
    .join('; ')
}

/** The Blocks line of the header: counts, or "no cells scheduled" when the plan selects none (F11). */
export function blocksText(c: Comparison): string {
  const b = c.blocks
  if (c.cells.length === 0) return `no cells scheduled: ${b.planned} planned, none run or compared`
  return `${b.planned} planned · ${b.outcome_complete} outcome-complete · ${b.complete} complete · ${b.incomplete.length} incomplete`
}

/**
 * Legs that ran under another manifest version or config hash, grouped by what they state:
 * "2 legs ran under manifest sha256 9b38… while the plan says 33f9… (`a/leg.json`, `b/leg.json`)".
 * Plain text with code spans (for Markdown); empty when every leg matches the plan.
 */
export function driftLines(c: Comparison, code: (s: string) => string = codeSpan): string[] {
  const drift = c.drift ?? []
  const out: string[] = []
  const group = (
    key: (d: (typeof drift)[number]) => string | null,
    text: (v: string, n: number) => string,
  ) => {
    const by = new Map<string, string[]>()
    for (const d of drift) {
      const v = key(d)
      if (v === null) continue
      by.set(v, [...(by.get(v) ?? []), d.file])
    }
    for (const [v, files] of [...by].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
      out.push(
        `${text(v, files.length)} (${files.map(code).join(', ')}); their blocks are ${code('config_drift')} and not compared.`,
      )
    }
  }
  const planned = c.stamp.manifest_sha256
  group(
    (d) => d.manifest_sha256,
    (v, n) =>
      `${n} leg${n === 1 ? '' : 's'} ran under manifest sha256 ${code(`${v.slice(0, 12)}…`)} while the plan says ${code(`${(planned ?? '?').slice(0, 12)}…`)}`,
  )
  group(
    (d) => (d.config_hash === null ? null : `${d.cell}\u0000${d.config_hash}`),
    (v, n) => {
      const [cell, hash] = v.split('\u0000') as [string, string]
      const want = c.cells.find((x) => x.id === cell)?.config_hash ?? '?'
      return `${n} leg${n === 1 ? '' : 's'} of cell ${code(cell)} ran with config hash ${code(`${hash.slice(0, 12)}…`)} while the plan says ${code(`${want.slice(0, 12)}…`)}`
    },
  )
  return out
}

function outcomeSection(c: Comparison): string {
  const lines = ['## Outcome', '']
  lines.push(
    `_Rule: ${escapeMarkdown(c.rules.outcome ?? '')}. Difference interval: ${escapeMarkdown(c.rules.diff_interval ?? '')}._`,
    '',
  )
  if (c.cells.length === 0) {
    lines.push('No cells scheduled: nothing was run, so nothing is compared.', '')
    return `${lines.join('\n')}\n`
  }
  if (c.comparisons.length === 0) {
    lines.push('No comparison: the plan names no treatment.', '')
  } else {
    lines.push(
      '| Baseline → treatment | n | W / L / T | Baseline | Treatment | Δ resolve rate [CI] | McNemar p two-sided · one-sided · mid-p | MDE |',
      '|---|---:|---|---:|---:|---|---|---:|',
    )
    for (const cmp of c.comparisons) {
      const o = cmp.outcome
      const notEvaluated = notEvaluatedReason(cmp)
      if (notEvaluated) {
        lines.push(
          `| ${cellName(c, cmp.baseline)} → ${cellName(c, cmp.treatment)} | 0 | — | — | — | not evaluated: ${escapeMarkdown(notEvaluated)} | — | — |`,
        )
        continue
      }
      lines.push(
        `| ${cellName(c, cmp.baseline)} → ${cellName(c, cmp.treatment)}${isAaPair(c, cmp) ? ' (A/A)' : ''} | ${o.n} | ${o.n === 0 ? '—' : `${o.wins} / ${o.losses} / ${o.ties}`} | ${fmtRate(o.baseline_rate)} | ${fmtRate(o.treatment_rate)} | ${fmtPp(o.diff_pp)} ${fmtPointsCi(o.diff_ci)} | ${escapeMarkdown(mcnemarText(o))} | ${fmtMde(cmp.mde)} |`,
      )
    }
    lines.push('')
    lines.push(
      '_W / L / T from the treatment’s side: W = treatment-only resolved (c), L = baseline-only (b). One-sided p is in the regression direction (treatment resolves less). A non-significant difference smaller than the MDE is not evidence of parity._',
      '',
    )
    for (const line of noiseFloorLines(c)) lines.push(`**Noise floor.** ${escapeMarkdown(line)}`, '')
    const notes = [...new Set(c.comparisons.map((x) => mdeNote(x.mde)).filter((x) => x !== null))]
    for (const note of notes)
      lines.push(
        `_MDE: ${escapeMarkdown(note)}; a non-significant difference here says nothing about parity._`,
        '',
      )
  }
  const k = c.stamp.trials
  lines.push(
    k > 1
      ? `| Cell | Resolve rate on outcome-complete blocks (n) | ${range(k)
          .map((i) => `pass@${i}`)
          .join(' | ')} | ${range(k)
          .map((i) => `pass^${i}`)
          .join(' | ')} |`
      : '| Cell | Resolve rate on outcome-complete blocks (n) | Resolved | Unresolved | Infra error | Ungraded | Missing |',
  )
  lines.push(k > 1 ? `|---|---:|${'---:|'.repeat(2 * k)}` : '|---|---:|---:|---:|---:|---:|---:|')
  for (const cell of c.cells) {
    const rr = `${fmtRate(cell.resolve_rate.value)} (${cell.resolve_rate.n})`
    if (k > 1) {
      lines.push(
        `| ${codeSpan(cell.id)} | ${rr} | ${cell.pass_at_k.map((p) => fmtNum(p.value, 3)).join(' | ')} | ${cell.pass_hat_k.map((p) => fmtNum(p.value, 3)).join(' | ')} |`,
      )
    } else {
      const f = cell.final_outcomes
      lines.push(
        `| ${codeSpan(cell.id)} | ${rr} | ${f.resolved} | ${f.unresolved} | ${f.infra_error} | ${f.ungraded} | ${f.missing} |`,
      )
    }
  }
  lines.push('')
  if (k > 1)
    lines.push(`_pass@k / pass^k denominator: ${escapeMarkdown(c.cells[0]?.pass_k_denominator ?? '')}._`, '')
  return `${lines.join('\n')}\n`
}

function range(k: number): number[] {
  return Array.from({ length: k }, (_, i) => i + 1)
}

function resourceSection(c: Comparison): string {
  const lines = ['## Resources', '']
  lines.push(
    `_${escapeMarkdown(c.rules.resources ?? '')}. Interval: ${escapeMarkdown(c.rules.ratio_interval ?? '')}. Quantiles: ${escapeMarkdown(c.rules.quantiles ?? '')}._`,
    '',
  )
  for (const cmp of c.comparisons) {
    lines.push(`### ${cellName(c, cmp.baseline)} → ${cellName(c, cmp.treatment)}`, '')
    lines.push(
      `Denominators: coverage ${cmp.denominators.coverage} planned blocks · outcome ${cmp.denominators.outcome} · cost ${cmp.denominators.cost} (complete telemetry on both sides).`,
      '',
    )
    lines.push(
      `| Metric | n | Baseline mean · median · P90 | Treatment mean · median · P90 | Ratio of means [CI] | Geo-mean ratio | Paired Δ mean | Sign test p (${adjustedLabel(c)}) |`,
      '|---|---:|---|---|---|---:|---:|---|',
    )
    for (const m of METRIC_NAMES) lines.push(metricRow(c, cmp, m, notComparable(c, cmp, m)))
    lines.push('')
    const cpr = cmp.cost_per_resolution
    const arm = (a: typeof cpr.baseline) =>
      `expected ${fmtValue(a.expected_cost_per_attempted_instance, 'usd')} per attempted instance; portfolio ${a.portfolio_cost_per_resolution === null ? `— (${escapeMarkdown(a.reason ?? 'undefined')})` : fmtValue(a.portfolio_cost_per_resolution, 'usd')} per resolution (${fmtValue(a.total_spend_usd, 'usd')} / ${fmtNum(a.resolutions, 4)}); conditional on success ${fmtValue(a.conditional_on_success.mean, 'usd')} (n = ${a.conditional_on_success.n})`
    lines.push(`- **Cost per resolution** over ${cpr.n} blocks:`)
    lines.push(`  - baseline: ${arm(cpr.baseline)}`)
    lines.push(`  - treatment: ${arm(cpr.treatment)}`)
    lines.push(
      `  - ratio treatment / baseline: ${fmtRatio(cpr.ratio.estimate)} ${fmtCi(cpr.ratio.ci, (x) => fmtNum(x, 3))}${cpr.ratio.ci ? ` (${cpr.ratio.method})` : cpr.ratio.reason ? ` (${escapeMarkdown(cpr.ratio.reason)})` : ''}`,
      '',
    )
  }
  return `${lines.join('\n')}\n`
}

/**
 * Why a metric's ratio between the two cells is not shown (fresh input across wire APIs whose input
 * accounting differs: detect/comparable.ts), or null.
 */
export function notComparable(c: Comparison, cmp: ComparisonEntry, m: MetricName): string | null {
  return m === 'input_fresh_tokens' ? freshInputNotComparable(c, cmp.baseline, cmp.treatment) : null
}

function metricRow(
  c: Comparison,
  cmp: ComparisonEntry,
  m: MetricName,
  incomparable: string | null = null,
): string {
  const x = cmp.metrics[m]
  const u = x.unit
  if (incomparable) {
    const arm = (a: typeof x.baseline) => (a.n === 0 ? '—' : `${fmtValue(a.mean, u)} (as reported)`)
    return `| ${METRIC_LABELS[m]} | ${x.n} | ${arm(x.baseline)} | ${arm(x.treatment)} | — (${escapeMarkdown(incomparable)}) | — | — | — |`
  }
  const arm = (a: typeof x.baseline) =>
    a.n === 0 ? '—' : `${fmtValue(a.mean, u)} · ${fmtValue(a.median, u)} · ${fmtValue(a.p90, u)}`
  const r = x.ratio_of_means
  const ratio =
    r.estimate === null
      ? `— (${escapeMarkdown(r.reason ?? 'undefined')})`
      : `${fmtRatio(r.estimate)} ${fmtCi(r.ci, (v) => fmtNum(v, 3))}${r.ci ? ` ${r.method}` : ''}`
  const gm = x.geometric_mean_ratio
  const gmText =
    gm.estimate === null
      ? '—'
      : `${fmtRatio(gm.estimate)}${gm.zeros_excluded ? ` (${gm.zeros_excluded} zero blocks excluded)` : ''}`
  const sign =
    x.sign_test.p_two_sided === null
      ? '—'
      : `${fmtP(x.sign_test.p_two_sided)} (${fmtP(adjustedP(c, cmp, `sign:${m}`).p)}); ↑${x.sign_test.increases} ↓${x.sign_test.decreases} =${x.sign_test.ties}`
  return `| ${METRIC_LABELS[m]} | ${x.n} | ${arm(x.baseline)} | ${arm(x.treatment)} | ${ratio} | ${gmText} | ${fmtValue(x.paired_difference.mean, u)} | ${sign} |`
}

function requestShapeSection(c: Comparison): string {
  const lines = ['## Request shape at the proxy', '']
  lines.push('_Per instance with complete telemetry (mean over trials); median [P90] across instances._', '')
  lines.push(
    '| Cell | n | First-request bytes | Tools in first request | Input tokens / request | Requests / task | Aux requests / task |',
    '|---|---:|---|---|---|---|---|',
  )
  const med = (s: { median: number | null; p90: number | null }) =>
    s.median === null ? '—' : `${fmtNum(s.median, 4)} [${fmtNum(s.p90, 4)}]`
  for (const cell of c.cells) {
    const r = cell.request_shape
    lines.push(
      `| ${codeSpan(cell.id)} | ${r.n} | ${med(r.first_request_bytes)} | ${med(r.first_request_tools)} | ${med(r.input_tokens_per_request)} | ${med(r.requests_per_task)} | ${med(r.aux_requests_per_task)} |`,
    )
  }
  return `${lines.join('\n')}\n\n`
}

function driverSection(c: Comparison): string {
  const lines = ['## Instances driving the difference', '']
  for (const cmp of c.comparisons) {
    lines.push(`### ${cellName(c, cmp.baseline)} → ${cellName(c, cmp.treatment)}`, '')
    const losses = cmp.drivers.filter((d) => d.kind === 'treatment_loss').map((d) => codeSpan(d.instance))
    const wins = cmp.drivers.filter((d) => d.kind === 'treatment_win').map((d) => codeSpan(d.instance))
    lines.push(`- Treatment losses (baseline only, b = ${losses.length}): ${losses.join(', ') || 'none'}`)
    lines.push(`- Treatment wins (treatment only, c = ${wins.length}): ${wins.join(', ') || 'none'}`, '')
    const res = cmp.drivers.filter((d) => d.kind === 'residual')
    if (res.length > 0) {
      const metric = res[0]!.metric ?? 'spend_usd'
      const unit = cmp.metrics[metric].unit
      lines.push(
        `Largest paired residuals of ${neutralizeMentions(METRIC_LABELS[metric].toLowerCase())} (log ratio around the geometric mean ratio):`,
        '',
      )
      lines.push('| Instance | Baseline | Treatment | Ratio |', '|---|---:|---:|---:|')
      for (const d of res) {
        lines.push(
          `| ${codeSpan(d.instance)} | ${fmtValue(d.baseline, unit)} | ${fmtValue(d.treatment, unit)} | ${d.log_ratio === null ? '—' : fmtRatio(Math.exp(d.log_ratio))} |`,
        )
      }
      lines.push('')
    }
  }
  return `${lines.join('\n')}\n`
}

function incompleteSection(c: Comparison): Section {
  const b = c.blocks
  if (c.cells.length === 0) {
    return {
      id: 'incomplete',
      text: `## Incomplete blocks\n\nNo cells scheduled: none of the ${b.planned} blocks ran, so none is complete.\n\n`,
    }
  }
  const head = [
    '## Incomplete blocks',
    '',
    `${b.incomplete.length} of ${b.planned} blocks are incomplete (never counted as a loss or as zero)${b.quarantined.length ? `; ${b.quarantined.length} quarantined: ${b.quarantined.map(codeSpan).join(', ')}` : ''}.`,
    '',
  ]
  if (b.incomplete.length === 0) return { id: 'incomplete', text: `${head.join('\n')}\n` }
  head.push('| Instance | Reasons |', '|---|---|', '')
  const rows = b.incomplete.map((blk) => {
    const reasons = blk.reasons
      .map(
        (r) =>
          `${codeSpan(r.code)}${r.cell ? ` ${codeSpan(r.cell)}` : ''}${r.trial !== null ? ` trial ${r.trial}` : ''}: ${escapeMarkdown(r.detail)}`,
      )
      .join('; ')
    return `| ${codeSpan(blk.instance)} | ${reasons} |\n`
  })
  return { id: 'incomplete', head: head.join('\n'), rows, tail: '\n' }
}

function problemsSections(c: Comparison): Section[] {
  const out: Section[] = []
  if (c.missing_legs.length > 0) {
    const head = '## Missing legs\n\n| Leg | Cell | Shard | Artifact | Reason |\n|---|---|---:|---|---|\n'
    const rows = c.missing_legs.map(
      (l) =>
        `| ${codeSpan(l.leg)} | ${codeSpan(l.cell)} | ${l.shard} | ${codeSpan(l.artifact)} | ${escapeMarkdown(l.reason)} |\n`,
    )
    out.push({ id: 'missing-legs', head, rows, tail: '\n' })
  }
  if (c.input_errors.length > 0) {
    const head = '## Unreadable input\n\n| File:line | Problem |\n|---|---|\n'
    const rows = c.input_errors.map(
      (e) => `| ${codeSpan(`${e.file}${e.line ? `:${e.line}` : ''}`)} | ${escapeMarkdown(e.message)} |\n`,
    )
    out.push({ id: 'input-errors', head, rows, tail: '\n' })
  }
  if (c.notes.length > 0) {
    out.push({
      id: 'notes',
      text: `## Notes\n\n${c.notes.map((n) => `- ${escapeMarkdown(n)}`).join('\n')}\n`,
    })
  }
  return out
}

function instanceSection(c: Comparison, artifactsHref?: string): Section {
  const ids = c.cells.map((x) => x.id)
  // Header and separator from one column list, so they always have the same number of columns.
  const columns = ['Instance', 'Status', ...ids.map(codeSpan)]
  const withAtif = c.instances.some((r) => Object.values(r.cells).some((x) => (x.atif ?? []).length > 0))
  const head = [
    '<details><summary>Per-instance results</summary>',
    '',
    ...(withAtif
      ? [
          "ATIF: each attempt's trajectory as ATIF v1.7, a file inside its leg's artifact (metrics from the proxy ledger).",
          '',
        ]
      : []),
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    '',
  ].join('\n')
  const rows = c.instances.map((row) => {
    const cells = ids.map((id) => {
      const x = row.cells[id]
      if (!x) return '—'
      const trials = x.trials > 1 ? ` ${x.resolved_trials}/${x.trials}` : ''
      const spend = x.spend_usd === null ? '' : ` ${fmtValue(x.spend_usd, 'usd')}`
      const reqs = x.proxy_requests === null ? '' : ` · ${fmtNum(x.proxy_requests, 3)} req`
      const cov = x.coverage === 'complete' ? '' : ` · telemetry ${x.coverage}`
      return `${OUTCOME_MARK[x.outcome] ?? x.outcome}${trials}${spend}${reqs}${cov}${atifLinks(x.atif, artifactsHref)}`
    })
    return `| ${[codeSpan(row.instance), row.status.replace('_', ' '), ...cells].join(' | ')} |\n`
  })
  return { id: 'instances', head, rows, tail: '\n</details>\n' }
}

/**
 * Links to a cell's ATIF files. The paths were checked plain when read (letters, digits, `._+@=-`, no
 * `..`); one that is not is shown as code, never linked. `prefix`: the artifacts folder relative to
 * the report.
 */
export function atifLinks(paths: string[] | undefined, prefix?: string): string {
  if (!paths || paths.length === 0) return ''
  return paths
    .map((p, i) => {
      const label = paths.length > 1 ? `ATIF ${i + 1}` : 'ATIF'
      const href = plainPath(p) ? atifHref(p, prefix) : null
      return href !== null ? ` · [${label}](${href})` : ` · ${label} ${codeSpan(p)}`
    })
    .join('')
}

/** A relative path of plain segments, safe as a link target. */
export function plainPath(p: string): boolean {
  return /^[A-Za-z0-9._+@=/-]+$/.test(p) && !p.startsWith('/') && !p.split('/').includes('..')
}

/**
 * The link to an artifact path from the report: the prefix's segments percent-encoded (it may come from
 * a forged comparison.json), then the path (plain by {@link plainPath}); null when the prefix is not
 * a relative path of non-empty segments (`/x` or `//host` would leave the reports' folder).
 */
export function atifHref(p: string, prefix?: string): string | null {
  if (!prefix || prefix === '.') return p
  const segments = prefix.split('/')
  if (segments.some((s) => s === '')) return null
  return `${encodePathSegments(segments)}/${p}`
}

function scopeSection(c: Comparison): string {
  // comparison.json is an artifact: its scope statement is quoted text like any other field.
  return `## Scope\n\n${escapeMarkdown(c.scope_statement)}\n`
}

/**
 * Telemetry coverage of the attempts that were read, e.g. "40 of 40 recorded attempts complete (0
 * partial, 0 missing, 0 unknown); 1 leg missing: its attempts are not counted".
 */
export function telemetryText(c: Comparison): string {
  const t = c.telemetry_coverage
  const legs = c.missing_legs.length
  const missing =
    legs > 0
      ? `; ${legs} leg${legs === 1 ? '' : 's'} missing: ${legs === 1 ? 'its' : 'their'} attempts are not counted`
      : ''
  return `${t.complete} of ${t.attempts} recorded attempts complete (${t.partial} partial, ${t.missing} missing, ${t.unknown} unknown)${missing}`
}
