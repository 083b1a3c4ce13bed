import type { History, HistoryRun } from '../detect/history.js'
import { fmtCi, fmtNum, fmtPointsBound, fmtPp, fmtRate, fmtRatio, fmtValue } from '../util/format.js'
import { chartSources } from './assets.js'
import { escapeHtml as e, jsonForScript } from './escape.js'

/**
 * history.html: one self-contained page (Chart.js inlined, no network) of an experiment's weekly series
 * (detect/history.ts): each cell's resolve rate per run with its interval, one line per cell and panel
 * segment, broken at every gap; the breaks; and a table of every run's figures with intervals, decision,
 * confirmed breaches, change points and capability changes. Without JavaScript the chart is a
 * <noscript> table. Every text from the files is escaped here. Pure.
 */
export function renderHistoryHtml(h: History): string {
  const { chart } = chartSources()
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>Harness Watch history — ${e(h.experiment_id)}</title>`,
    `<style>${CSS}</style>`,
    '</head><body>',
    `<h1>Harness Watch history — ${e(h.experiment_id)}</h1>`,
    `<p>${e(`${h.runs.length} run(s) in ${h.segments.length} panel segment(s); cadence ${h.cadence_days} days.`)}</p>`,
    `<ul class="rule">${h.rules.map((r) => `<li>${e(r)}</li>`).join('')}</ul>`,
    breaksSection(h),
    `<figure class="chart"><figcaption>${e('Resolve rate per run and cell (95% interval; one line per cell and panel; broken at gaps)')}</figcaption><canvas id="chart-history" width="${Math.min(2400, Math.max(640, chartLabels(h).length * 70 + 160))}" height="420"></canvas><noscript>${chartFallback(h)}</noscript></figure>`,
    runsSection(h),
    `<script type="application/json" id="hw-history">${jsonForScript(chartData(h))}</script>`,
    `<script>${chart}</script>`,
    `<script>${HISTORY_APP_JS}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}

function runLabel(r: HistoryRun): string {
  return `${r.run_id ?? '?'}${r.round > 0 ? ` r${r.round}` : ''}${r.started_at ? ` (${r.started_at.slice(0, 10)})` : ''}`
}

/** The x axis: each run, with a "gap" slot before a run that follows a gap (the line breaks there). */
function chartLabels(h: History): Array<{ label: string; run: number | null }> {
  const out: Array<{ label: string; run: number | null }> = []
  h.runs.forEach((r, i) => {
    if (i > 0 && r.break_before && r.break_before.kind !== 'panel_changed')
      out.push({ label: `(${r.break_before.kind.replace('_', ' ')})`, run: null })
    out.push({ label: runLabel(r), run: i })
  })
  return out
}

function chartData(h: History) {
  const labels = chartLabels(h)
  const series: Array<{
    label: string
    segment: number
    values: Array<number | null>
    lo: Array<number | null>
    hi: Array<number | null>
  }> = []
  h.segments.forEach((_, s) => {
    const cells = [...new Set(h.runs.filter((r) => r.segment === s).flatMap((r) => r.cells.map((c) => c.id)))]
    for (const cell of cells) {
      const at = (l: { run: number | null }) => {
        if (l.run === null) return null
        const r = h.runs[l.run]!
        return r.segment === s ? (r.cells.find((c) => c.id === cell) ?? null) : null
      }
      series.push({
        label: h.segments.length > 1 ? `${cell} · panel ${s + 1}` : cell,
        segment: s,
        values: labels.map((l) => at(l)?.resolve_rate.estimate ?? null),
        lo: labels.map((l) => at(l)?.resolve_rate.ci?.[0] ?? null),
        hi: labels.map((l) => at(l)?.resolve_rate.ci?.[1] ?? null),
      })
    }
  })
  return { labels: labels.map((l) => l.label), series }
}

function chartFallback(h: History): string {
  const rows = h.runs.flatMap((r) =>
    r.cells.map(
      (c) =>
        `<tr data-run="${e(r.run_id ?? '')}" data-segment="${r.segment}"><td>${e(runLabel(r))}</td><td>${r.segment + 1}</td><td>${e(c.id)}</td><td>${e(`${fmtRate(c.resolve_rate.estimate)} ${fmtCi(c.resolve_rate.ci, fmtRate)}`)}</td><td class="n">${c.n}</td></tr>`,
    ),
  )
  return `<table class="chart-data history"><thead><tr><th>run</th><th>panel segment</th><th>cell</th><th>resolve rate [95% CI]</th><th>n</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function breaksSection(h: History): string {
  const breaks = h.runs.filter((r) => r.break_before !== null)
  const body =
    breaks.length === 0
      ? '<p>No break: every run follows the previous one on the same panel within the cadence.</p>'
      : `<ul class="breaks">${breaks.map((r) => `<li data-kind="${e(r.break_before!.kind)}"><strong>${e(r.break_before!.kind.replace('_', ' '))}</strong> before ${e(runLabel(r))}: ${e(r.break_before!.detail)}</li>`).join('')}</ul>`
  const segs = h.segments
    .map(
      (s, i) =>
        `<li>${e(`panel segment ${i + 1}: ${s.panel} [${s.panel_key}], runs ${s.runs.map((x) => x ?? '?').join(', ')}`)}</li>`,
    )
    .join('')
  return `<section><h2>Breaks in the series</h2>${body}<ul>${segs}</ul></section>`
}

function list(items: string[]): string {
  return items.length === 0 ? '—' : `<ul>${items.map((x) => `<li>${e(x)}</li>`).join('')}</ul>`
}

function runsSection(h: History): string {
  const rows = h.runs.map((r) => {
    const figures = r.comparisons.map((c) => {
      const nb = c.net_benefit_usd
      return `${c.baseline} → ${c.treatment} (n = ${c.n}): Δ resolve rate ${fmtPp(c.diff_pp.estimate)} ${fmtCi(c.diff_pp.ci, fmtPointsBound)}; spend ${fmtRatio(c.spend_ratio.estimate)} ${fmtCi(c.spend_ratio.ci, (x) => fmtNum(x, 3))}${nb ? `; net benefit ${nb.estimate === null ? 'unknown' : fmtValue(nb.estimate, 'usd')} ${fmtCi(nb.ci, (x) => fmtValue(x, 'usd'))}` : ''}`
    })
    const cells = r.cells.map(
      (c) =>
        `${c.id} ${c.version ?? '?'}: ${fmtRate(c.resolve_rate.estimate)} ${fmtCi(c.resolve_rate.ci, fmtRate)} (n = ${c.n})`,
    )
    const decision = r.decision ? `${r.decision.status}: ${r.decision.summary}` : 'no decision.json'
    return `<tr data-run="${e(r.run_id ?? '')}"${r.break_before ? ` class="after-break" data-break="${e(r.break_before.kind)}"` : ''}><td>${e(runLabel(r))}<br><small>${e(r.file)}</small></td><td>${r.segment + 1}</td><td>${list(cells)}</td><td>${list(figures)}</td><td>${e(decision)}</td><td>${list(r.confirmed_breaches.map((b) => `${b.id}: ${b.rule}`))}</td><td>${list(r.change_points.map((c) => `${c.cell} ${c.direction} (${c.source}): ${c.detail}`))}</td><td>${list(r.capability_changes.map((c) => `${c.cell}: ${c.change}`))}</td></tr>`
  })
  return `<section><h2>Runs</h2><table class="runs"><thead><tr><th>Run</th><th>Panel segment</th><th>Cells: resolve rate [95% CI]</th><th>Comparisons [CI]</th><th>Decision</th><th>Confirmed breaches</th><th>Change points</th><th>Capability changes</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`
}

/** The page's script: one line per (cell, segment) with interval bars; null values break the line. */
export const HISTORY_APP_JS = `
(function () {
  'use strict';
  var canvas = document.getElementById('chart-history');
  function empty(reason) {
    canvas.setAttribute('data-empty', reason);
    var p = document.createElement('p');
    p.className = 'empty';
    p.textContent = reason;
    canvas.parentNode.insertBefore(p, canvas);
  }
  try {
    var d = JSON.parse(document.getElementById('hw-history').textContent);
    if (typeof Chart === 'undefined') { empty('Chart.js did not load'); return; }
    if (d.series.length === 0) { empty('no cell with a resolve rate'); return; }
    var palette = ['#1565c0', '#c62828', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037'];
    var sets = [];
    d.series.forEach(function (s, i) {
      var colour = palette[i % palette.length];
      sets.push({ type: 'line', label: s.label, data: s.values, borderColor: colour, backgroundColor: colour, spanGaps: false, pointRadius: 4, borderDash: s.segment > 0 ? [6, 3] : [] });
      sets.push({ type: 'bar', label: s.label + ' interval', data: s.lo.map(function (lo, j) { return lo === null ? null : [lo, s.hi[j]]; }), backgroundColor: colour + '33', barPercentage: 0.15, grouped: false, interval: true });
    });
    new Chart(canvas, {
      data: { labels: d.labels, datasets: sets },
      options: {
        responsive: false, animation: false,
        scales: { y: { min: 0, max: 1, title: { display: true, text: 'resolve rate' } } },
        plugins: { legend: { labels: { filter: function (item, data) { return !data.datasets[item.datasetIndex].interval; } } } }
      }
    });
    canvas.setAttribute('data-drawn', 'true');
  } catch (err) { empty('history chart failed: ' + err.message); }
})();
`

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#212121;max-width:1600px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #e0e0e0;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right}td ul{margin:0;padding-left:16px}
tr.after-break td{border-top:3px double #c62828}.rule{color:#616161;font-size:12px}
.chart{overflow-x:auto;max-width:100%;margin:16px 0}.chart figcaption{font-weight:bold;margin:8px 0}.empty{color:#757575;font-style:italic}
`
