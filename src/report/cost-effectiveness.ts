import type { Comparison } from '../records/comparison.js'
import type { CostEffectiveness, Estimate, NetBenefit } from '../records/cost-effectiveness.js'
import { fmtCi, fmtNum, fmtPointsBound, fmtPp, fmtRate, fmtValue } from '../util/format.js'
import { codeSpan, escapeHtml as e, escapeMarkdown, jsonForScript } from './escape.js'

/**
 * The "Cost-effectiveness" section of both reports (comparison.json `cost_effectiveness`): each cell's
 * resolve rate against its expected spend per attempted instance with intervals on both axes and the
 * paired differences with the baseline, the Pareto frontier, and each comparison's paired net benefit
 * at the declared value per resolution. report.html adds the Pareto chart (drawn by
 * PARETO_APP_JS with the inlined Chart.js) and the same data as a <noscript> table. Unknown spend is
 * said to be unknown, never shown as $0. Pure.
 */

const usd = (x: number) => fmtValue(x, 'usd')
const rateCi = (ci: Estimate['ci']) => fmtCi(ci, (x) => fmtRate(x))
const usdCi = (ci: Estimate['ci']) => fmtCi(ci, usd)

function rateText(x: Estimate): string {
  return x.estimate === null ? `— (${x.reason ?? 'unknown'})` : `${fmtRate(x.estimate)} ${rateCi(x.ci)}`
}
function spendText(x: Estimate): string {
  return x.estimate === null
    ? `unknown (${x.reason ?? 'spend unpriced'})`
    : `${usd(x.estimate)} ${usdCi(x.ci)}`
}
function diffRateText(x: Estimate): string {
  return x.estimate === null
    ? `— (${x.reason ?? 'unknown'})`
    : `${fmtPp(x.estimate * 100)} ${fmtCi(x.ci, (v) => fmtPointsBound(v * 100))}`
}
function diffSpendText(x: Estimate): string {
  if (x.estimate === null) return `unknown (${x.reason ?? 'spend unpriced'})`
  const signed = (v: number) => (v > 0 ? `+${usd(v)}` : usd(v))
  return `${signed(x.estimate)} ${fmtCi(x.ci, signed)}`
}
function frontierText(f: boolean | null): string {
  return f === null ? 'not placed' : f ? 'on the frontier' : 'dominated'
}

/** One line per comparison: the net benefit, or why there is none (never $0 for unknown spend). */
export function netBenefitLine(nb: NetBenefit): string {
  const v = nb.net_benefit_usd
  const head = `${nb.baseline} → ${nb.treatment}: net benefit at ${usd(nb.value_per_resolution_usd)} per resolution`
  if (v.estimate === null) return `${head}: unknown (${v.reason ?? 'spend unknown'})`
  const parts = [
    `${head}: ${v.estimate >= 0 ? '+' : ''}${usd(v.estimate)} per attempted instance ${usdCi(v.ci)}${v.ci ? ` (${v.method})` : ` (${v.reason ?? ''})`}`,
    `over ${nb.n} blocks`,
    `Δ resolved ${fmtNum(nb.resolved_diff, 3)} per instance, Δ spend ${nb.spend_diff_usd === null ? '—' : usd(nb.spend_diff_usd)}`,
  ]
  return parts.join('; ')
}

function noValueLine(): string {
  return 'Net benefit: no value per resolution declared (manifest reporting.value_per_resolution_usd).'
}

/** report.md's section. */
export function costEffectivenessMarkdown(c: Comparison): string | null {
  const ce = c.cost_effectiveness
  if (!ce) return null
  const lines = ['## Cost-effectiveness', '', `_${escapeMarkdown(ce.rule)}._`, '']
  lines.push(
    `Blocks with known spend for every cell: ${ce.blocks}.${ce.reason ? ` ${escapeMarkdown(ce.reason)}.` : ''}`,
    '',
  )
  lines.push(
    '| Cell | Resolve rate [CI] | Expected spend per attempted instance [CI] | Δ resolve rate vs baseline [CI] | Δ spend vs baseline [CI] | Pareto |',
    '|---|---|---|---|---|---|',
  )
  for (const p of ce.points) {
    lines.push(
      `| ${codeSpan(p.cell)} | ${escapeMarkdown(rateText(p.resolve_rate))} | ${escapeMarkdown(spendText(p.expected_spend_usd))} | ${p.vs_baseline ? escapeMarkdown(diffRateText(p.vs_baseline.resolve_rate_diff)) : 'baseline'} | ${p.vs_baseline ? escapeMarkdown(diffSpendText(p.vs_baseline.spend_diff_usd)) : 'baseline'} | ${frontierText(p.frontier)} |`,
    )
  }
  lines.push('')
  if (ce.value_per_resolution_usd === null) lines.push(`- ${escapeMarkdown(noValueLine())}`)
  for (const nb of ce.net_benefit) lines.push(`- ${escapeMarkdown(netBenefitLine(nb))}`)
  lines.push('')
  return `${lines.join('\n')}\n`
}

/** The Pareto chart's data (report.html reads it from `#hw-pareto`). */
export function paretoChartData(ce: CostEffectiveness) {
  const placed = ce.points.filter(
    (p) => p.expected_spend_usd.estimate !== null && p.resolve_rate.estimate !== null,
  )
  return {
    empty: placed.length === 0 ? (ce.reason ?? 'spend unknown') : null,
    points: placed.map((p) => ({
      cell: p.cell,
      x: p.expected_spend_usd.estimate,
      y: p.resolve_rate.estimate,
      xci: p.expected_spend_usd.ci,
      yci: p.resolve_rate.ci,
      frontier: p.frontier === true,
    })),
    frontier: placed
      .filter((p) => p.frontier === true)
      .map((p) => ({ x: p.expected_spend_usd.estimate, y: p.resolve_rate.estimate }))
      .sort((a, b) => a.x! - b.x! || a.y! - b.y!),
  }
}

function pointsTable(ce: CostEffectiveness): string {
  const head = [
    'cell',
    'resolve rate [CI]',
    'expected spend per attempted instance [CI]',
    'Δ resolve rate vs baseline [CI]',
    'Δ spend vs baseline [CI]',
    'Pareto',
  ]
  const rows = ce.points.map(
    (p) =>
      `<tr data-cell="${e(p.cell)}" data-frontier="${p.frontier === null ? '' : String(p.frontier)}"><td>${e(p.cell)}</td><td>${e(rateText(p.resolve_rate))}</td><td>${e(spendText(p.expected_spend_usd))}</td><td>${p.vs_baseline ? e(diffRateText(p.vs_baseline.resolve_rate_diff)) : 'baseline'}</td><td>${p.vs_baseline ? e(diffSpendText(p.vs_baseline.spend_diff_usd)) : 'baseline'}</td><td>${e(frontierText(p.frontier))}</td></tr>`,
  )
  return `<table class="chart-data pareto"><thead><tr>${head.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`
}

/** report.html's section: the chart (with its data as a <noscript> table), the table, the net benefit. */
export function costEffectivenessHtml(c: Comparison): string {
  const ce = c.cost_effectiveness
  if (!ce) return ''
  const figure = `<figure class="chart"><figcaption>${e('Resolve rate against expected spend per attempted instance (Pareto view; filled: on the frontier)')}</figcaption><canvas id="chart-pareto" width="640" height="420"></canvas><noscript>${pointsTable(ce)}</noscript></figure>`
  const net = [
    ...(ce.value_per_resolution_usd === null ? [noValueLine()] : []),
    ...ce.net_benefit.map((nb) => netBenefitLine(nb)),
  ]
  return [
    '<section><h2>Cost-effectiveness</h2>',
    `<p class="rule">${e(ce.rule)}</p>`,
    `<p>${e(`Blocks with known spend for every cell: ${ce.blocks}.${ce.reason ? ` ${ce.reason}.` : ''}`)}</p>`,
    figure,
    `<ul class="net-benefit">${net.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`,
    `<script type="application/json" id="hw-pareto">${jsonForScript(paretoChartData(ce))}</script>`,
    '</section>',
  ].join('')
}

/**
 * The Pareto chart's script (plain ES2017, with the inlined Chart.js): one point per cell at (expected
 * spend, resolve rate), its intervals on both axes as segments, the frontier as a dashed line through
 * the frontier cells. Sets `data-drawn="true"` on the canvas, or `data-empty` with the reason.
 */
export const PARETO_APP_JS = `
(function () {
  'use strict';
  var canvas = document.getElementById('chart-pareto');
  var el = document.getElementById('hw-pareto');
  if (!canvas || !el) return;
  function empty(reason) {
    canvas.setAttribute('data-empty', reason);
    var p = document.createElement('p');
    p.className = 'empty';
    p.textContent = reason;
    canvas.parentNode.insertBefore(p, canvas);
  }
  try {
    var d = JSON.parse(el.textContent);
    if (typeof Chart === 'undefined') { empty('Chart.js did not load'); return; }
    if (d.empty) { empty(d.empty); return; }
    var sets = [];
    d.points.forEach(function (p) {
      if (p.xci) sets.push({ type: 'line', label: '', data: [{ x: p.xci[0], y: p.y }, { x: p.xci[1], y: p.y }], borderColor: 'rgba(97,97,97,0.7)', pointRadius: 0, fill: false, interval: true });
      if (p.yci) sets.push({ type: 'line', label: '', data: [{ x: p.x, y: p.yci[0] }, { x: p.x, y: p.yci[1] }], borderColor: 'rgba(97,97,97,0.7)', pointRadius: 0, fill: false, interval: true });
    });
    sets.push({ type: 'line', label: 'Pareto frontier', data: d.frontier, borderColor: '#2e7d32', borderDash: [6, 4], pointRadius: 0, fill: false });
    // One dataset per cell, so the legend names each point; filled on the frontier, hollow when dominated.
    var palette = ['#1565c0', '#c62828', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037', '#2e7d32'];
    d.points.forEach(function (p, i) {
      var colour = palette[i % palette.length];
      sets.push({ type: 'scatter', label: p.cell + (p.frontier ? ' (frontier)' : ' (dominated)'), cell: true,
        data: [{ x: p.x, y: p.y, cell: p.cell, frontier: p.frontier }],
        pointRadius: 7, borderColor: colour, borderWidth: 2, backgroundColor: p.frontier ? colour : '#ffffff' });
    });
    new Chart(canvas, {
      type: 'scatter',
      data: { datasets: sets },
      options: {
        responsive: false, animation: false,
        scales: {
          x: { type: 'linear', title: { display: true, text: 'expected spend per attempted instance (USD)' } },
          y: { type: 'linear', min: 0, max: 1, title: { display: true, text: 'resolve rate' } }
        },
        plugins: {
          legend: { labels: { filter: function (item, data) { return !data.datasets[item.datasetIndex].interval; } } },
          tooltip: { filter: function (ctx) { return !!(ctx.raw && ctx.raw.cell); },
            callbacks: { label: function (ctx) { var r = ctx.raw; return r.cell + ': $' + r.x + ', ' + (r.y * 100).toFixed(1) + '%' + (r.frontier ? ' (frontier)' : ''); } } }
        }
      }
    });
    canvas.setAttribute('data-drawn', 'true');
  } catch (err) { empty('Pareto chart failed: ' + err.message); }
})();
`
