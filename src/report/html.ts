import type { Comparison, MetricName } from '../records/comparison.js'
import { METRIC_NAMES } from '../records/comparison.js'
import {
  fmtCi,
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
import { chartSources } from './assets.js'
import { capabilityRows, capabilityTableHtml } from './capabilities.js'
import { classificationHtml, evaluatedShareHtml } from './classification.js'
import { costEffectivenessHtml, PARETO_APP_JS } from './cost-effectiveness.js'
import { type DecisionView, decisionHtml } from './decision.js'
import { environmentLines } from './environment.js'
import { escapeHtml as e, jsonForScript } from './escape.js'
import { type HistoryLink, historyLinkHtml } from './history-link.js'
import { REPORT_APP_JS } from './html-app.js'
import {
  atifHref,
  blocksText,
  driftLines,
  METRIC_LABELS,
  notComparable,
  plainPath,
  telemetryText,
} from './markdown.js'
import { modelRoutesText, modelsHtmlSection } from './models.js'
import { isAaPair, noiseFloorLines } from './noise-floor.js'
import { requestProfileHtml } from './request-profile.js'
import { scorecardHtml } from './scorecard.js'

const OUTCOMES = ['resolved', 'unresolved', 'infra_error', 'ungraded', 'missing'] as const
const MARK: Record<string, string> = {
  resolved: '✓',
  unresolved: '✗',
  infra_error: '⚠',
  ungraded: '?',
  missing: '∅',
}

/**
 * report.html: one self-contained file (styles, data, Chart.js and chartjs-chart-matrix inlined; no
 * network) with the header, outcome and resource tables, a sortable, filterable per-instance table,
 * and three charts: paired scatter (log–log, y = x), forest plot of ratios with intervals, and the
 * per-instance outcome grid. Everything quoted from runs is HTML-escaped; the data travels as JSON in
 * a script element with `<` escaped. Pure and deterministic.
 */
export function renderHtmlReport(
  c: Comparison,
  opts: { decision?: DecisionView | null; artifactsHref?: string; history?: HistoryLink | null } = {},
): string {
  const { chart, matrix } = chartSources()
  const title = c.kind === 'published' ? 'published results' : c.experiment_id
  const data = chartData(c)
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>Harness Watch — ${e(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head><body>',
    `<h1>Harness Watch — ${e(title)}</h1>`,
    evaluatedShareHtml(c),
    historyLinkHtml(opts.history),
    headerTable(c),
    ...(opts.decision ? [decisionHtml(opts.decision)] : []),
    classificationHtml(c),
    ...(c.scorecard ? [scorecardHtml(c.scorecard)] : []),
    outcomeTable(c),
    modelsHtmlSection(c),
    resourceTables(c),
    costEffectivenessHtml(c),
    requestShapeTable(c),
    capabilityTableHtml(c),
    requestProfileHtml(c),
    driverTables(c),
    '<div class="charts">',
    chartBox(
      'Paired resources per block (log–log, dashed: y = x)',
      'chart-scatter',
      640,
      420,
      pairSelect(c),
      scatterFallback(data.pairs),
    ),
    chartBox(
      'Ratios treatment / baseline with intervals (forest plot)',
      'chart-forest',
      720,
      Math.max(220, forestRows(c).length * 22 + 80),
      '',
      forestFallback(c),
    ),
    chartBox(
      'Outcome per instance and cell',
      'chart-grid',
      Math.min(4000, Math.max(480, c.instances.length * 8 + 120)),
      c.cells.length * 26 + 90,
      `<p class="legend">${OUTCOMES.map((o) => `<span class="sw ${o}"></span>${e(o.replace('_', ' '))}`).join(' ')}</p>`,
      gridFallback(c),
    ),
    '</div>',
    incompleteTable(c),
    ...problemSections(c),
    instanceTable(c, opts.artifactsHref),
    `<section><h2>Scope</h2><p>${e(c.scope_statement)}</p></section>`,
    `<script type="application/json" id="hw-data">${jsonForScript(data)}</script>`,
    `<script>${chart}</script>`,
    `<script>${matrix}</script>`,
    `<script>${REPORT_APP_JS}</script>`,
    `<script>${PARETO_APP_JS}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}

function chartBox(title: string, id: string, w: number, h: number, extra = '', fallback = ''): string {
  // A figure, not a section: report.md has no chart, so the two reports' section lists stay equal.
  // Without JavaScript the chart's data is a table (<noscript>), so nothing is only in a picture.
  const noscript = fallback ? `<noscript>${fallback}</noscript>` : ''
  return `<figure class="chart"><figcaption>${e(title)}</figcaption>${extra}<canvas id="${id}" width="${w}" height="${h}"></canvas>${noscript}</figure>`
}

/** Rows a chart's <noscript> table lists before "… N more" (the instance table holds them all). */
const FALLBACK_ROWS = 200

function fallbackTable(cls: string, head: string[], rows: string[][], more: number): string {
  const th = head.map((h) => `<th>${e(h)}</th>`).join('')
  const body = rows.map((r) => `<tr>${r.map((x) => `<td>${x}</td>`).join('')}</tr>`).join('')
  const tail = more > 0 ? `<tr><td colspan="${head.length}">… ${more} more</td></tr>` : ''
  return `<table class="chart-data ${cls}"><thead><tr>${th}</tr></thead><tbody>${body}${tail}</tbody></table>`
}

/** The scatter's points as a table: per comparison, instance and both values (the first rows, then a count). */
function scatterFallback(pairs: ReturnType<typeof chartData>['pairs']): string {
  const rows: string[][] = []
  let total = 0
  for (const p of pairs) {
    total += p.points.length
    for (const [instance, b, t] of p.points.slice(0, FALLBACK_ROWS - rows.length))
      rows.push([e(p.label), e(p.metricLabel), e(instance), fmtNum(b), fmtNum(t)])
  }
  if (total === 0) return '<p>No paired points.</p>'
  return fallbackTable(
    'scatter',
    ['comparison', 'metric', 'instance', 'baseline', 'treatment'],
    rows,
    total - rows.length,
  )
}

/** The forest plot's rows: ratio, interval and method. */
function forestFallback(c: Comparison): string {
  const f = forestRows(c)
  if (f.length === 0) return '<p>No ratio to plot.</p>'
  const rows = f
    .slice(0, FALLBACK_ROWS)
    .map((r) => [
      e(r.label),
      fmtRatio(r.est),
      r.lo === null || r.hi === null ? '—' : `[${fmtNum(r.lo)}, ${fmtNum(r.hi)}]`,
      e(r.method),
    ])
  return fallbackTable('forest', ['ratio', 'estimate', 'interval', 'method'], rows, f.length - rows.length)
}

/** The outcome grid as a table: one row per instance, one column per cell. */
function gridFallback(c: Comparison): string {
  const cells = c.cells.map((x) => x.id)
  const rows = c.instances
    .slice(0, FALLBACK_ROWS)
    .map((r) => [e(r.instance), ...cells.map((id) => e(r.cells[id]?.outcome ?? 'missing'))])
  return fallbackTable('grid', ['instance', ...cells], rows, c.instances.length - rows.length)
}

function pairSelect(c: Comparison): string {
  if (c.comparisons.length <= 1) return ''
  const opts = c.comparisons.map(
    (x, i) => `<option value="${i}">${e(`${x.baseline} → ${x.treatment}`)}</option>`,
  )
  return `<p><label>Comparison <select id="pair-select">${opts.join('')}</select></label></p>`
}

function headerTable(c: Comparison): string {
  const s = c.stamp
  const rows: Array<[string, string]> = []
  if (c.kind === 'experiment')
    rows.push([
      'Run',
      `${c.run_id ?? '—'} · round ${c.round} · ${s.started_at ?? '?'} → ${s.ended_at ?? '?'}`,
    ])
  rows.push([
    'Model route',
    `${modelRoutesText(c) ?? routeText(s.model) ?? '—'}${s.model.observed.length ? `; observed ${s.model.observed.join(', ')}` : ''}`,
  ])
  for (const cell of c.cells) {
    rows.push([
      `${cell.role} ${cell.id}`,
      `${cell.harness} ${cell.version_declared ?? '—'}${cell.versions_observed.length ? ` (observed ${cell.versions_observed.join(', ')})` : ''}${cell.config_hash ? `, config ${cell.config_hash.slice(0, 12)}` : ''}${cell.model_declared && (c.kind === 'published' || c.models) ? `, model ${cell.model_declared}` : ''}`,
    ])
  }
  const p = s.panel
  rows.push(['Panel', panelText(p)])
  if (s.verifier) rows.push(['Verifier', s.verifier])
  if (s.budgets) rows.push(['Limits and budgets', s.budgets])
  if (s.retries) rows.push(['Retries', s.retries])
  for (const env of environmentLines(s.environments ?? [])) rows.push(['Environment', env])
  rows.push(['Trials', `k = ${s.trials}`])
  rows.push(['Telemetry', `${s.telemetry_source ? `${s.telemetry_source}; ` : ''}${telemetryText(c)}`])
  rows.push(['Blocks', blocksText(c)])
  for (const d of driftLines(c, (x) => x)) rows.push(['Config drift', d])
  rows.push(...capabilityRows(c))
  rows.push([
    'Statistics',
    `seed ${s.seed}, B = ${s.bootstrap_resamples} bootstrap resamples, ${s.confidence_level * 100}% intervals`,
  ])
  if (s.manifest_sha256) rows.push(['Manifest', `sha256 ${s.manifest_sha256.slice(0, 12)}`])
  if (c.missing_legs.length)
    rows.push(['Missing legs', c.missing_legs.map((l) => `${l.leg} (${l.reason})`).join('; ')])
  if (c.input_errors.length)
    rows.push([
      'Unreadable input',
      `${c.input_errors.length} file(s) or row(s); see comparison.json input_errors`,
    ])
  return `<table class="kv">${rows.map(([k, v]) => `<tr><th>${e(k)}</th><td>${e(v)}</td></tr>`).join('')}</table>`
}

function outcomeTable(c: Comparison): string {
  const head =
    '<tr><th>Baseline → treatment</th><th>n</th><th>W / L / T</th><th>Baseline</th><th>Treatment</th><th>Δ resolve rate [CI]</th><th>McNemar p (two-sided · one-sided · mid-p)</th><th>MDE</th></tr>'
  const rows = c.comparisons.map((x) => {
    const o = x.outcome
    if (x.not_evaluated)
      return `<tr><td>${e(`${x.baseline} → ${x.treatment}`)}</td><td>0</td><td>—</td><td>—</td><td>—</td><td colspan="3">${e(`not evaluated: ${x.not_evaluated}`)}</td></tr>`
    return `<tr><td>${e(`${x.baseline} → ${x.treatment}${isAaPair(c, x) ? ' (A/A)' : ''}`)}</td><td>${o.n}</td><td>${o.n === 0 ? '—' : `${o.wins} / ${o.losses} / ${o.ties}`}</td><td>${fmtRate(o.baseline_rate)}</td><td>${fmtRate(o.treatment_rate)}</td><td>${e(`${fmtPp(o.diff_pp)} ${fmtPointsCi(o.diff_ci)}`)}</td><td>${e(mcnemarText(o))}</td><td>${e(fmtMde(x.mde))}</td></tr>`
  })
  const notes = [...new Set(c.comparisons.map((x) => mdeNote(x.mde)).filter((x) => x !== null))]
  const mde = [
    ...noiseFloorLines(c).map((n) => `<p class="note"><strong>Noise floor.</strong> ${e(n)}</p>`),
    ...notes.map((n) => `<p class="note">MDE: ${e(n)}</p>`),
  ].join('')
  const rule = `${c.rules.outcome ?? ''}. Difference interval: ${c.rules.diff_interval ?? ''}`
  return `<section><h2>Outcome</h2><p class="rule">${e(rule)}</p><table>${head}${rows.join('')}</table>${mde}${cellCounts(c)}</section>`
}

/** Per-cell counts (k = 1: final outcomes; k > 1: pass@i and pass^i), as in report.md's Outcome section. */
function cellCounts(c: Comparison): string {
  const k = c.stamp.trials
  const ks = Array.from({ length: k }, (_, i) => i + 1)
  const head =
    k > 1
      ? `<tr><th>Cell</th><th>Resolve rate on outcome-complete blocks (n)</th>${ks.map((i) => `<th>pass@${i}</th>`).join('')}${ks.map((i) => `<th>pass^${i}</th>`).join('')}</tr>`
      : '<tr><th>Cell</th><th>Resolve rate on outcome-complete blocks (n)</th><th>Resolved</th><th>Unresolved</th><th>Infra error</th><th>Ungraded</th><th>Missing</th></tr>'
  const rows = c.cells.map((cell) => {
    const rr = `<td>${e(cell.id)}</td><td class="n">${fmtRate(cell.resolve_rate.value)} (${cell.resolve_rate.n})</td>`
    if (k > 1) {
      const v = (p: { value: number | null }) => `<td class="n">${fmtNum(p.value, 3)}</td>`
      return `<tr>${rr}${cell.pass_at_k.map(v).join('')}${cell.pass_hat_k.map(v).join('')}</tr>`
    }
    const f = cell.final_outcomes
    const counts = [f.resolved, f.unresolved, f.infra_error, f.ungraded, f.missing]
    return `<tr>${rr}${counts.map((n) => `<td class="n">${n}</td>`).join('')}</tr>`
  })
  const denom =
    k > 1 ? `<p class="rule">pass@k / pass^k denominator: ${e(c.cells[0]?.pass_k_denominator ?? '')}</p>` : ''
  return c.cells.length === 0 ? '' : `<table>${head}${rows.join('')}</table>${denom}`
}

function requestShapeTable(c: Comparison): string {
  const med = (s: { median: number | null; p90: number | null }) =>
    s.median === null ? '—' : `${fmtNum(s.median, 4)} [${fmtNum(s.p90, 4)}]`
  const rows = c.cells.map((cell) => {
    const r = cell.request_shape
    const v = [
      r.first_request_bytes,
      r.first_request_tools,
      r.input_tokens_per_request,
      r.requests_per_task,
      r.aux_requests_per_task,
    ]
    return `<tr><td>${e(cell.id)}</td><td class="n">${r.n}</td>${v.map((x) => `<td>${e(med(x))}</td>`).join('')}</tr>`
  })
  return [
    '<section><h2>Request shape at the proxy</h2>',
    '<p class="rule">Per instance with complete telemetry (mean over trials); median [P90] across instances.</p>',
    '<table><tr><th>Cell</th><th>n</th><th>First-request bytes</th><th>Tools in first request</th><th>Input tokens / request</th><th>Requests / task</th><th>Aux requests / task</th></tr>',
    `${rows.join('')}</table></section>`,
  ].join('')
}

function driverTables(c: Comparison): string {
  const parts = ['<section><h2>Instances driving the difference</h2>']
  for (const x of c.comparisons) {
    parts.push(`<h3>${e(`${x.baseline} → ${x.treatment}`)}</h3>`)
    const ids = (kind: string) => x.drivers.filter((d) => d.kind === kind).map((d) => d.instance)
    const losses = ids('treatment_loss')
    const wins = ids('treatment_win')
    parts.push(
      `<ul><li>${e(`Treatment losses (baseline only, b = ${losses.length}): ${losses.join(', ') || 'none'}`)}</li>`,
      `<li>${e(`Treatment wins (treatment only, c = ${wins.length}): ${wins.join(', ') || 'none'}`)}</li></ul>`,
    )
    const res = x.drivers.filter((d) => d.kind === 'residual')
    if (res.length > 0) {
      const metric = res[0]!.metric ?? 'spend_usd'
      const unit = x.metrics[metric].unit
      parts.push(
        `<p>${e(`Largest paired residuals of ${METRIC_LABELS[metric].toLowerCase()} (log ratio around the geometric mean ratio):`)}</p>`,
        '<table><tr><th>Instance</th><th>Baseline</th><th>Treatment</th><th>Ratio</th></tr>',
        ...res.map(
          (d) =>
            `<tr><td>${e(d.instance)}</td><td class="n">${e(fmtValue(d.baseline, unit))}</td><td class="n">${e(fmtValue(d.treatment, unit))}</td><td class="n">${d.log_ratio === null ? '—' : e(fmtRatio(Math.exp(d.log_ratio)))}</td></tr>`,
        ),
        '</table>',
      )
    }
  }
  parts.push('</section>')
  return parts.join('')
}

/** Missing legs, unreadable input and notes: the same sections report.md shows when there are any. */
function problemSections(c: Comparison): string[] {
  const out: string[] = []
  if (c.missing_legs.length > 0) {
    const rows = c.missing_legs.map(
      (l) =>
        `<tr><td>${e(l.leg)}</td><td>${e(l.cell)}</td><td class="n">${l.shard}</td><td>${e(l.artifact)}</td><td>${e(l.reason)}</td></tr>`,
    )
    out.push(
      `<section><h2>Missing legs</h2><table><tr><th>Leg</th><th>Cell</th><th>Shard</th><th>Artifact</th><th>Reason</th></tr>${rows.join('')}</table></section>`,
    )
  }
  if (c.input_errors.length > 0) {
    const rows = c.input_errors.map(
      (x) => `<tr><td>${e(`${x.file}${x.line ? `:${x.line}` : ''}`)}</td><td>${e(x.message)}</td></tr>`,
    )
    out.push(
      `<section><h2>Unreadable input</h2><table><tr><th>File:line</th><th>Problem</th></tr>${rows.join('')}</table></section>`,
    )
  }
  if (c.notes.length > 0) {
    out.push(`<section><h2>Notes</h2><ul>${c.notes.map((n) => `<li>${e(n)}</li>`).join('')}</ul></section>`)
  }
  return out
}

function resourceTables(c: Comparison): string {
  const parts = [
    '<section><h2>Resources</h2>',
    `<p class="rule">${e(c.rules.resources ?? '')}; ${e(c.rules.ratio_interval ?? '')}</p>`,
  ]
  for (const x of c.comparisons) {
    parts.push(`<h3>${e(`${x.baseline} → ${x.treatment}`)} (cost blocks: ${x.denominators.cost})</h3>`)
    parts.push(
      `<table><tr><th>Metric</th><th>n</th><th>Baseline mean · median · P90</th><th>Treatment mean · median · P90</th><th>Ratio of means [CI]</th><th>Geo-mean ratio</th><th>Paired Δ mean</th><th>Sign test p (${e(adjustedLabel(c))})</th></tr>`,
    )
    for (const m of METRIC_NAMES) {
      const r = x.metrics[m]
      const why = notComparable(c, x, m)
      if (why) {
        const raw = (a: typeof r.baseline) => (a.n === 0 ? '—' : `${fmtValue(a.mean, r.unit)} (as reported)`)
        parts.push(
          `<tr><td>${e(METRIC_LABELS[m])}</td><td>${r.n}</td><td>${e(raw(r.baseline))}</td><td>${e(raw(r.treatment))}</td><td>${e(`— (${why})`)}</td><td>—</td><td>—</td><td>—</td></tr>`,
        )
        continue
      }
      const arm = (a: typeof r.baseline) =>
        a.n === 0
          ? '—'
          : `${fmtValue(a.mean, r.unit)} · ${fmtValue(a.median, r.unit)} · ${fmtValue(a.p90, r.unit)}`
      const ratio =
        r.ratio_of_means.estimate === null
          ? `— (${r.ratio_of_means.reason ?? ''})`
          : `${fmtRatio(r.ratio_of_means.estimate)} ${fmtCi(r.ratio_of_means.ci, (v) => fmtNum(v, 3))} ${r.ratio_of_means.ci ? r.ratio_of_means.method : ''}`
      const holm = adjustedP(c, x, `sign:${m}`).p
      const sign =
        r.sign_test.p_two_sided === null
          ? '—'
          : `${fmtP(r.sign_test.p_two_sided)} (${fmtP(holm)}); ↑${r.sign_test.increases} ↓${r.sign_test.decreases} =${r.sign_test.ties}`
      parts.push(
        `<tr><td>${e(METRIC_LABELS[m])}</td><td>${r.n}</td><td>${e(arm(r.baseline))}</td><td>${e(arm(r.treatment))}</td><td>${e(ratio)}</td><td>${fmtRatio(r.geometric_mean_ratio.estimate)}</td><td>${e(fmtValue(r.paired_difference.mean, r.unit))}</td><td>${e(sign)}</td></tr>`,
      )
    }
    const cpr = x.cost_per_resolution
    parts.push(
      `<tr><td>Cost per resolution</td><td>${cpr.n}</td><td>${e(fmtValue(cpr.baseline.portfolio_cost_per_resolution, 'usd'))}</td><td>${e(fmtValue(cpr.treatment.portfolio_cost_per_resolution, 'usd'))}</td><td>${e(`${fmtRatio(cpr.ratio.estimate)} ${fmtCi(cpr.ratio.ci, (v) => fmtNum(v, 3))}${cpr.ratio.reason ? ` (${cpr.ratio.reason})` : ''}`)}</td><td></td><td></td><td></td></tr>`,
    )
    parts.push('</table>')
  }
  parts.push('</section>')
  return parts.join('')
}

function instanceTable(c: Comparison, artifactsHref?: string): string {
  const ids = c.cells.map((x) => x.id)
  const head = [
    '<th>Instance</th><th>Status</th>',
    ...ids.map(
      (id) =>
        `<th>${e(id)} outcome</th><th>${e(id)} spend</th><th>${e(id)} requests</th><th>${e(id)} wall s</th>`,
    ),
  ].join('')
  const statuses = [...new Set(c.instances.map((r) => r.status))].sort()
  const body = c.instances.map((row) => {
    const outcomes = new Set<string>()
    const cells = ids.map((id) => {
      const x = row.cells[id]
      if (!x) return '<td></td><td></td><td></td><td></td>'
      outcomes.add(x.outcome)
      const trials = x.trials > 1 ? ` ${x.resolved_trials}/${x.trials}` : ''
      return (
        `<td class="o ${x.outcome}" data-v="${e(x.outcome)}">${MARK[x.outcome] ?? ''}${trials}${x.coverage === 'complete' ? '' : ` <small>telemetry ${e(x.coverage)}</small>`}${atifAnchors(x.atif, artifactsHref)}</td>` +
        num(x.spend_usd, fmtValue(x.spend_usd, 'usd')) +
        num(x.proxy_requests, fmtNum(x.proxy_requests, 4)) +
        num(x.wall_s, fmtNum(x.wall_s, 4))
      )
    })
    return `<tr data-instance="${e(row.instance)}" data-status="${e(row.status)}" data-outcomes="${e([...outcomes].sort().join(' '))}"><td data-v="${e(row.instance)}">${e(row.instance)}</td><td data-v="${e(row.status)}">${e(row.status.replace('_', ' '))}</td>${cells.join('')}</tr>`
  })
  return [
    '<section><h2>Per-instance results</h2>',
    '<p class="filters"><label>Instance <input id="filter-text" type="search" placeholder="filter by id"></label> ',
    `<label>Status <select id="filter-status"><option value="">any</option>${statuses.map((s) => `<option value="${e(s)}">${e(s.replace('_', ' '))}</option>`).join('')}</select></label> `,
    `<label>Outcome in any cell <select id="filter-outcome"><option value="">any</option>${OUTCOMES.map((o) => `<option value="${o}">${e(o.replace('_', ' '))}</option>`).join('')}</select></label> `,
    `<span><span id="shown-count">${c.instances.length}</span> of ${c.instances.length} shown; click a column to sort</span></p>`,
    `<table id="instance-table" class="instances"><thead><tr>${head}</tr></thead><tbody>${body.join('\n')}</tbody></table></section>`,
  ].join('')
}

/** Links to a cell's ATIF files (checked plain when read); a path that is not is shown, not linked. */
function atifAnchors(paths: string[] | undefined, prefix?: string): string {
  if (!paths || paths.length === 0) return ''
  return paths
    .map((p, i) => {
      const label = paths.length > 1 ? `ATIF ${i + 1}` : 'ATIF'
      const title = `${e(p)} (ATIF v1.7)`
      const href = plainPath(p) ? atifHref(p, prefix) : null
      return href !== null
        ? ` <a class="atif" href="${e(href)}" title="${title}">${label}</a>`
        : ` <small>${label} ${e(p)}</small>`
    })
    .join('')
}

function num(v: number | null, text: string): string {
  return v === null ? '<td class="n" data-v="">—</td>' : `<td class="n" data-v="${v}">${e(text)}</td>`
}

function incompleteTable(c: Comparison): string {
  const b = c.blocks
  if (c.cells.length === 0)
    return `<section><h2>Incomplete blocks</h2><p>No cells scheduled: none of the ${b.planned} blocks ran, so none is complete.</p></section>`
  const quarantined = b.quarantined.length
    ? `; ${b.quarantined.length} quarantined: ${b.quarantined.join(', ')}`
    : ''
  const lead = `<p>${e(`${b.incomplete.length} of ${b.planned} blocks are incomplete (never counted as a loss or as zero)${quarantined}.`)}</p>`
  if (b.incomplete.length === 0) return `<section><h2>Incomplete blocks</h2>${lead}</section>`
  const rows = b.incomplete.map(
    (blk) =>
      `<tr><td>${e(blk.instance)}</td><td>${e(blk.reasons.map((r) => `${r.code}${r.cell ? ` [${r.cell}${r.trial !== null ? ` trial ${r.trial}` : ''}]` : ''}: ${r.detail}`).join('; '))}</td></tr>`,
  )
  return `<section><h2>Incomplete blocks</h2>${lead}<table><tr><th>Instance</th><th>Reasons</th></tr>${rows.join('')}</table></section>`
}

function forestRows(
  c: Comparison,
): Array<{ label: string; est: number; lo: number | null; hi: number | null; method: string }> {
  const out: Array<{ label: string; est: number; lo: number | null; hi: number | null; method: string }> = []
  for (const x of c.comparisons) {
    if (x.not_evaluated) continue
    const add = (
      name: string,
      r: { estimate: number | null; ci: [number, number] | null; method: string },
    ) => {
      if (r.estimate === null || r.estimate <= 0) return
      const ok = r.ci !== null && r.ci[0] > 0
      out.push({
        label: `${x.treatment} vs ${x.baseline}: ${name}`,
        est: r.estimate,
        lo: ok ? r.ci![0] : null,
        hi: ok ? r.ci![1] : null,
        method: r.method,
      })
    }
    for (const m of METRIC_NAMES)
      if (!notComparable(c, x, m)) add(METRIC_LABELS[m], x.metrics[m].ratio_of_means)
    add('Cost per resolution', x.cost_per_resolution.ratio)
  }
  return out
}

/** What the script needs: paired points per comparison, forest rows, the outcome grid. */
function chartData(c: Comparison) {
  const pairs = c.comparisons.map((x) => {
    const metric: MetricName = x.metrics.spend_usd.n > 0 ? 'spend_usd' : 'proxy_requests'
    const points: Array<[string, number, number]> = []
    let zeros = 0
    for (const row of c.instances) {
      if (row.status !== 'complete' && row.status !== 'cost_incomplete') continue
      const b = row.cells[x.baseline]
      const t = row.cells[x.treatment]
      if (!b || !t || b.coverage !== 'complete' || t.coverage !== 'complete') continue
      const vb = b[metric]
      const vt = t[metric]
      if (vb === null || vt === null) continue
      if (vb <= 0 || vt <= 0) {
        zeros++
        continue
      }
      points.push([row.instance, vb, vt])
    }
    return {
      label: `${x.baseline} → ${x.treatment}`,
      metricLabel: METRIC_LABELS[metric],
      points,
      zeros,
      empty: x.not_evaluated
        ? `not evaluated: ${x.not_evaluated}`
        : points.length === 0
          ? `no blocks with ${METRIC_LABELS[metric].toLowerCase()} on both sides`
          : null,
    }
  })
  const cells = c.cells.map((x) => x.id)
  const instances = c.instances.map((r) => r.instance)
  const values: Array<[number, number, string]> = []
  c.instances.forEach((row, i) => {
    cells.forEach((id, j) => {
      const x = row.cells[id]
      values.push([i, j, x ? x.outcome : 'missing'])
    })
  })
  return { pairs, forest: forestRows(c), grid: { cells, instances, values } }
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#212121;max-width:1400px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #e0e0e0;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f5f5f5}table.kv th{width:160px}td.n{text-align:right;font-variant-numeric:tabular-nums}
.instances th{cursor:pointer;user-select:none}.instances th[aria-sort=ascending]::after{content:" ▲"}.instances th[aria-sort=descending]::after{content:" ▼"}
td.o.resolved{color:#2e7d32}td.o.unresolved{color:#c62828}td.o.infra_error{color:#ef6c00}td.o.ungraded,td.o.missing{color:#757575}
.charts{display:flex;flex-wrap:wrap;gap:24px;margin-top:28px}.chart{overflow-x:auto;max-width:100%;margin:0}.chart figcaption{font-size:17px;font-weight:bold;margin:8px 0}.rule{color:#616161;font-size:12px}
.legend .sw{display:inline-block;width:12px;height:12px;margin:0 4px 0 10px;vertical-align:middle}
.sw.resolved{background:#2e7d32}.sw.unresolved{background:#c62828}.sw.infra_error{background:#ef6c00}.sw.ungraded{background:#757575}.sw.missing{background:#bdbdbd}
.empty{color:#757575;font-style:italic}.filters label{margin-right:12px}
`
