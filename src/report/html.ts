import type { Comparison, MetricName } from '../compare/schema.js'
import { METRIC_NAMES } from '../compare/schema.js'
import { chartSources } from './assets.js'
import { type DecisionView, decisionHtml } from './decision.js'
import { escapeHtml as e, jsonForScript } from './escape.js'
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
} from './format.js'
import { REPORT_APP_JS } from './html-app.js'
import { blocksText, driftLines, METRIC_LABELS, telemetryText } from './markdown.js'
import { isAaPair, noiseFloorLines } from './noise-floor.js'

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
export function renderHtmlReport(c: Comparison, opts: { decision?: DecisionView | null } = {}): string {
  const { chart, matrix } = chartSources()
  const title = c.kind === 'published' ? 'published results' : c.experiment_id
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>Harness Watch — ${e(title)}</title>`,
    `<style>${CSS}</style>`,
    '</head><body>',
    `<h1>Harness Watch — ${e(title)}</h1>`,
    headerTable(c),
    ...(opts.decision ? [decisionHtml(opts.decision)] : []),
    outcomeTable(c),
    resourceTables(c),
    '<section class="charts">',
    chartBox('Paired resources per block (log–log, dashed: y = x)', 'chart-scatter', 640, 420, pairSelect(c)),
    chartBox(
      'Ratios treatment / baseline with intervals (forest plot)',
      'chart-forest',
      720,
      Math.max(220, forestRows(c).length * 22 + 80),
    ),
    chartBox(
      'Outcome per instance and cell',
      'chart-grid',
      Math.min(4000, Math.max(480, c.instances.length * 8 + 120)),
      c.cells.length * 26 + 90,
      `<p class="legend">${OUTCOMES.map((o) => `<span class="sw ${o}"></span>${e(o.replace('_', ' '))}`).join(' ')}</p>`,
    ),
    '</section>',
    instanceTable(c),
    incompleteTable(c),
    `<section><h2>Scope</h2><p>${e(c.scope_statement)}</p></section>`,
    `<script type="application/json" id="hw-data">${jsonForScript(chartData(c))}</script>`,
    `<script>${chart}</script>`,
    `<script>${matrix}</script>`,
    `<script>${REPORT_APP_JS}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}

function chartBox(title: string, id: string, w: number, h: number, extra = ''): string {
  return `<div class="chart"><h2>${e(title)}</h2>${extra}<canvas id="${id}" width="${w}" height="${h}"></canvas></div>`
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
    `${routeText(s.model) ?? '—'}${s.model.observed.length ? `; observed ${s.model.observed.join(', ')}` : ''}`,
  ])
  for (const cell of c.cells) {
    rows.push([
      `${cell.role} ${cell.id}`,
      `${cell.harness} ${cell.version_declared ?? '—'}${cell.versions_observed.length ? ` (observed ${cell.versions_observed.join(', ')})` : ''}${cell.config_hash ? `, config ${cell.config_hash.slice(0, 12)}` : ''}${cell.model_declared && c.kind === 'published' ? `, model ${cell.model_declared}` : ''}`,
    ])
  }
  const p = s.panel
  rows.push(['Panel', panelText(p)])
  if (s.verifier) rows.push(['Verifier', s.verifier])
  if (s.budgets) rows.push(['Limits and budgets', s.budgets])
  if (s.retries) rows.push(['Retries', s.retries])
  rows.push(['Trials', `k = ${s.trials}`])
  rows.push(['Telemetry', `${s.telemetry_source ? `${s.telemetry_source}; ` : ''}${telemetryText(c)}`])
  rows.push(['Blocks', blocksText(c)])
  for (const d of driftLines(c, (x) => x)) rows.push(['Config drift', d])
  rows.push([
    'Statistics',
    `seed ${s.seed}, B = ${s.bootstrap_resamples}, ${s.confidence_level * 100}% intervals`,
  ])
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
  return `<section><h2>Outcome</h2><p class="rule">${e(c.rules.outcome ?? '')}</p><table>${head}${rows.join('')}</table>${mde}</section>`
}

function resourceTables(c: Comparison): string {
  const parts = [
    '<section><h2>Resources</h2>',
    `<p class="rule">${e(c.rules.resources ?? '')}; ${e(c.rules.ratio_interval ?? '')}</p>`,
  ]
  for (const x of c.comparisons) {
    parts.push(`<h3>${e(`${x.baseline} → ${x.treatment}`)} (cost blocks: ${x.denominators.cost})</h3>`)
    parts.push(
      '<table><tr><th>Metric</th><th>n</th><th>Baseline mean · median · P90</th><th>Treatment mean · median · P90</th><th>Ratio of means [CI]</th><th>Geo-mean ratio</th><th>Sign test p</th></tr>',
    )
    for (const m of METRIC_NAMES) {
      const r = x.metrics[m]
      const arm = (a: typeof r.baseline) =>
        a.n === 0
          ? '—'
          : `${fmtValue(a.mean, r.unit)} · ${fmtValue(a.median, r.unit)} · ${fmtValue(a.p90, r.unit)}`
      const ratio =
        r.ratio_of_means.estimate === null
          ? `— (${r.ratio_of_means.reason ?? ''})`
          : `${fmtRatio(r.ratio_of_means.estimate)} ${fmtCi(r.ratio_of_means.ci, (v) => fmtNum(v, 3))} ${r.ratio_of_means.ci ? r.ratio_of_means.method : ''}`
      parts.push(
        `<tr><td>${e(METRIC_LABELS[m])}</td><td>${r.n}</td><td>${e(arm(r.baseline))}</td><td>${e(arm(r.treatment))}</td><td>${e(ratio)}</td><td>${fmtRatio(r.geometric_mean_ratio.estimate)}</td><td>${fmtP(r.sign_test.p_two_sided)}</td></tr>`,
      )
    }
    const cpr = x.cost_per_resolution
    parts.push(
      `<tr><td>Cost per resolution</td><td>${cpr.n}</td><td>${e(fmtValue(cpr.baseline.portfolio_cost_per_resolution, 'usd'))}</td><td>${e(fmtValue(cpr.treatment.portfolio_cost_per_resolution, 'usd'))}</td><td>${e(`${fmtRatio(cpr.ratio.estimate)} ${fmtCi(cpr.ratio.ci, (v) => fmtNum(v, 3))}${cpr.ratio.reason ? ` (${cpr.ratio.reason})` : ''}`)}</td><td></td><td></td></tr>`,
    )
    parts.push('</table>')
  }
  parts.push('</section>')
  return parts.join('')
}

function instanceTable(c: Comparison): string {
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
        `<td class="o ${x.outcome}" data-v="${e(x.outcome)}">${MARK[x.outcome] ?? ''}${trials}${x.coverage === 'complete' ? '' : ` <small>telemetry ${e(x.coverage)}</small>`}</td>` +
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

function num(v: number | null, text: string): string {
  return v === null ? '<td class="n" data-v="">—</td>' : `<td class="n" data-v="${v}">${e(text)}</td>`
}

function incompleteTable(c: Comparison): string {
  const b = c.blocks
  if (b.incomplete.length === 0)
    return `<section><h2>Incomplete blocks</h2><p>None of ${b.planned}.</p></section>`
  const rows = b.incomplete.map(
    (blk) =>
      `<tr><td>${e(blk.instance)}</td><td>${e(blk.reasons.map((r) => `${r.code}${r.cell ? ` [${r.cell}${r.trial !== null ? ` trial ${r.trial}` : ''}]` : ''}: ${r.detail}`).join('; '))}</td></tr>`,
  )
  return `<section><h2>Incomplete blocks (${b.incomplete.length} of ${b.planned})</h2><table><tr><th>Instance</th><th>Reasons</th></tr>${rows.join('')}</table></section>`
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
    for (const m of METRIC_NAMES) add(METRIC_LABELS[m], x.metrics[m].ratio_of_means)
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
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{overflow-x:auto;max-width:100%}.rule{color:#616161;font-size:12px}
.legend .sw{display:inline-block;width:12px;height:12px;margin:0 4px 0 10px;vertical-align:middle}
.sw.resolved{background:#2e7d32}.sw.unresolved{background:#c62828}.sw.infra_error{background:#ef6c00}.sw.ungraded{background:#757575}.sw.missing{background:#bdbdbd}
.empty{color:#757575;font-style:italic}.filters label{margin-right:12px}
`
