/**
 * The script of report.html (plain ES2017, runs in any current browser, no network): sorts and filters
 * the per-instance table, and draws three charts with the inlined Chart.js — the paired scatter
 * (log–log with the y = x line), the forest plot of ratios with intervals, and the per-instance
 * outcome grid (chartjs-chart-matrix). Each canvas gets `data-drawn="true"` once its chart exists, or
 * `data-empty` with the reason shown beside it.
 */
export const REPORT_APP_JS = String.raw`
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('hw-data').textContent);
  var COLORS = { resolved: '#2e7d32', unresolved: '#c62828', infra_error: '#ef6c00', ungraded: '#757575', missing: '#bdbdbd' };

  // ---- table: sort and filter ----
  var table = document.getElementById('instance-table');
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var sortKey = -1, sortDir = 1;
  function cellValue(row, i) {
    var td = row.cells[i];
    var v = td ? td.getAttribute('data-v') : null;
    if (v === null || v === '') return { n: null, s: td ? td.textContent : '' };
    var num = Number(v);
    return isNaN(num) ? { n: null, s: v } : { n: num, s: v };
  }
  function compare(a, b, i) {
    var x = cellValue(a, i), y = cellValue(b, i);
    if (x.n !== null && y.n !== null) return x.n - y.n;
    if (x.n !== null) return -1;
    if (y.n !== null) return 1;
    return x.s < y.s ? -1 : x.s > y.s ? 1 : 0;
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.addEventListener('click', function () {
      sortDir = sortKey === i ? -sortDir : 1;
      sortKey = i;
      var sorted = rows.slice().sort(function (a, b) {
        var c = compare(a, b, i);
        if (c === 0) c = compare(a, b, 0);
        return c * sortDir;
      });
      sorted.forEach(function (r) { tbody.appendChild(r); });
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', sortDir > 0 ? 'ascending' : 'descending');
    });
  });
  var filterText = document.getElementById('filter-text');
  var filterStatus = document.getElementById('filter-status');
  var filterOutcome = document.getElementById('filter-outcome');
  function applyFilter() {
    var q = filterText.value.trim().toLowerCase();
    var st = filterStatus.value;
    var oc = filterOutcome.value;
    var shown = 0;
    rows.forEach(function (r) {
      var ok = (!q || r.getAttribute('data-instance').toLowerCase().indexOf(q) !== -1) &&
        (!st || r.getAttribute('data-status') === st) &&
        (!oc || (' ' + r.getAttribute('data-outcomes') + ' ').indexOf(' ' + oc + ' ') !== -1);
      r.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById('shown-count').textContent = String(shown);
  }
  [filterText, filterStatus, filterOutcome].forEach(function (el) {
    el.addEventListener('input', applyFilter);
    el.addEventListener('change', applyFilter);
  });
  applyFilter();

  // ---- charts ----
  function empty(canvas, reason) {
    canvas.setAttribute('data-empty', reason);
    var p = document.createElement('p');
    p.className = 'empty';
    p.textContent = reason;
    canvas.parentNode.insertBefore(p, canvas);
  }
  function drawn(canvas) { canvas.setAttribute('data-drawn', 'true'); }
  if (typeof Chart === 'undefined') {
    Array.prototype.forEach.call(document.querySelectorAll('canvas'), function (c) { empty(c, 'Chart.js did not load'); });
    return;
  }
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;

  // Log axes: label only 1, 2 and 5 × 10^k, in plain short form.
  function logTick(v) {
    var n = Number(v);
    if (!(n > 0)) return '';
    var m = n / Math.pow(10, Math.floor(Math.log10(n) + 1e-9));
    if (!(Math.abs(m - 1) < 1e-6 || Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6)) return '';
    return String(Number(n.toPrecision(2)));
  }

  var scatterChart = null;
  function drawScatter(index) {
    var canvas = document.getElementById('chart-scatter');
    var pair = data.pairs[index];
    if (scatterChart) { scatterChart.destroy(); scatterChart = null; }
    if (!pair || pair.points.length === 0) { empty(canvas, pair ? pair.empty : 'no comparison'); return; }
    var lo = Infinity, hi = 0;
    var pts = pair.points.map(function (p) {
      lo = Math.min(lo, p[1], p[2]); hi = Math.max(hi, p[1], p[2]);
      return { x: p[1], y: p[2], id: p[0] };
    });
    scatterChart = new Chart(canvas, {
      type: 'scatter',
      data: { datasets: [
        { label: pair.label, data: pts, backgroundColor: 'rgba(21,101,192,0.6)', pointRadius: 3 },
        { type: 'line', label: 'y = x', data: [{ x: lo, y: lo }, { x: hi, y: hi }], borderColor: '#616161', borderDash: [4, 4], pointRadius: 0, fill: false }
      ] },
      options: {
        responsive: false, animation: false,
        scales: {
          x: { type: 'logarithmic', ticks: { callback: logTick }, title: { display: true, text: 'baseline ' + pair.metricLabel } },
          y: { type: 'logarithmic', ticks: { callback: logTick }, title: { display: true, text: 'treatment ' + pair.metricLabel } }
        },
        plugins: { tooltip: { callbacks: { label: function (ctx) { var r = ctx.raw; return (r.id || '') + ': ' + r.x + ' → ' + r.y; } } } }
      }
    });
    drawn(canvas);
  }
  var select = document.getElementById('pair-select');
  if (select) select.addEventListener('change', function () { drawScatter(Number(select.value)); });
  try { drawScatter(0); } catch (e) { empty(document.getElementById('chart-scatter'), 'scatter failed: ' + e.message); }

  try {
    var fcanvas = document.getElementById('chart-forest');
    var rowsF = data.forest;
    if (rowsF.length === 0) empty(fcanvas, 'no ratio with an interval');
    else {
      var labels = rowsF.map(function (r) { return r.label; });
      new Chart(fcanvas, {
        type: 'bar',
        data: {
          labels: labels,
          datasets: [
            { type: 'bar', label: 'interval', data: rowsF.map(function (r) { return r.lo === null ? null : [r.lo, r.hi]; }), backgroundColor: 'rgba(21,101,192,0.35)', borderColor: '#1565c0', borderWidth: 1, barPercentage: 0.5, indexAxis: 'y' },
            { type: 'line', label: 'ratio of means', data: rowsF.map(function (r) { return { x: r.est, y: r.label }; }), showLine: false, pointRadius: 4, backgroundColor: '#0d47a1', borderColor: '#0d47a1', indexAxis: 'y' },
            { type: 'line', label: 'no difference (1×)', data: [{ x: 1, y: labels[0] }, { x: 1, y: labels[labels.length - 1] }], borderColor: '#9e9e9e', borderDash: [4, 4], pointRadius: 0, indexAxis: 'y' }
          ]
        },
        options: {
          responsive: false, animation: false, indexAxis: 'y',
          scales: { x: { type: 'logarithmic', ticks: { callback: logTick }, title: { display: true, text: 'treatment / baseline' } }, y: { type: 'category', labels: labels } }
        }
      });
      drawn(fcanvas);
    }
  } catch (e) { empty(document.getElementById('chart-forest'), 'forest plot failed: ' + e.message); }

  try {
    var gcanvas = document.getElementById('chart-grid');
    var g = data.grid;
    if (g.instances.length === 0 || g.cells.length === 0) empty(gcanvas, 'no instances');
    else {
      new Chart(gcanvas, {
        type: 'matrix',
        data: { datasets: [{
          label: 'outcome',
          data: g.values.map(function (v) { return { x: g.instances[v[0]], y: g.cells[v[1]], v: v[2] }; }),
          backgroundColor: function (ctx) { var d = ctx.dataset.data[ctx.dataIndex]; return d ? COLORS[d.v] || '#000' : '#000'; },
          borderWidth: 0,
          width: function (ctx) { var a = ctx.chart.chartArea; return a ? Math.max(1, a.width / g.instances.length - 1) : 4; },
          height: function (ctx) { var a = ctx.chart.chartArea; return a ? Math.max(1, a.height / g.cells.length - 2) : 10; }
        }] },
        options: {
          responsive: false, animation: false,
          plugins: { legend: { display: false }, tooltip: { callbacks: { title: function () { return ''; }, label: function (ctx) { var d = ctx.raw; return d.x + ' · ' + d.y + ': ' + d.v; } } } },
          scales: {
            x: { type: 'category', labels: g.instances, offset: true, ticks: { display: g.instances.length <= 60 }, grid: { display: false } },
            y: { type: 'category', labels: g.cells, offset: true, grid: { display: false } }
          }
        }
      });
      drawn(gcanvas);
    }
  } catch (e) { empty(document.getElementById('chart-grid'), 'outcome grid failed: ' + e.message); }
})();
`
