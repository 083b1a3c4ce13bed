import type { Comparison } from '../records/comparison.js'
import { REQUEST_ROLES } from '../records/ledger.js'
import type { RequestProfile, RequestProfileMetric } from '../records/request-profile.js'
import { fmtCi, fmtInt, fmtNum, fmtRatio } from '../util/format.js'
import { codeSpan, escapeHtml as e, escapeMarkdown } from './escape.js'

/** The figures of the request profile, in the order both reports show them. */
const FIGURES: { metric: RequestProfileMetric; label: string; part: keyof PerRequest | null }[] = [
  { metric: 'primary_requests', label: 'Primary requests', part: null },
  { metric: 'other_requests', label: 'Other requests', part: null },
  { metric: 'request_bytes', label: 'Request bytes', part: 'request_bytes' },
  { metric: 'tool_schema_bytes', label: 'Tool-schema bytes', part: 'tool_schema_bytes' },
  { metric: 'system_bytes', label: 'System-prompt bytes', part: 'system_bytes' },
  { metric: 'history_bytes', label: 'History bytes', part: 'history_bytes' },
  { metric: 'latest_message_bytes', label: 'Latest-message bytes', part: 'latest_message_bytes' },
  { metric: 'cache_prefix_bytes', label: 'Cache-eligible prefix bytes', part: 'cache_prefix_bytes' },
]

type Cell = RequestProfile['cells'][number]
type PerRequest = NonNullable<Cell['parts']>['per_request']

const ROLE_LABELS = REQUEST_ROLES.map((r) => r[0]?.toUpperCase() + r.slice(1))

const roleCount = (c: Cell, role: string): number => c.roles.find((r) => r.role === role)?.requests ?? 0
const roleSpend = (c: Cell, role: string): string => {
  const r = c.roles.find((x) => x.role === role)
  if (!r) return '0'
  return r.spend_usd === null ? '— (unpriced)' : `$${fmtNum(r.spend_usd, 3)}`
}

/** A cell's shown value of one figure: total requests, or bytes per request. */
function cellValue(cell: Cell, f: (typeof FIGURES)[number]): string {
  if (f.part === null) {
    if (cell.trials === 0) return '—'
    const primary = roleCount(cell, 'primary')
    const all = cell.roles.reduce((n, r) => n + r.requests, 0)
    return fmtInt(f.metric === 'primary_requests' ? primary : all - primary)
  }
  const v = cell.parts?.per_request[f.part] ?? null
  return v === null ? '—' : fmtInt(Math.round(v))
}

/** A ratio with its interval; the reason (when there is no figure) through `esc`. */
function ratioText(
  r: RequestProfile['comparisons'][number]['ratios'][number] | undefined,
  esc: (s: string) => string,
): string {
  if (!r || r.estimate === null) return `— (${esc(r?.reason ?? 'not measured')})`
  const ci = r.ci ? ` ${fmtCi(r.ci, (x) => fmtNum(x, 3))}` : ` (${esc(r.reason ?? 'no interval')})`
  return `${fmtRatio(r.estimate)}${ci}`
}

const paramsText = (c: Cell): string =>
  Object.entries(c.params)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, vs]) => `${k} ${vs.join('/')}`)
    .join('; ') || 'none sent'

/** The request-roles and request-parts sections of report.md; '' when the comparison has no profile. */
export function requestProfileMarkdown(c: Comparison): string {
  const p = c.request_profile
  if (!p) return ''
  const lines = ['### Request roles', '', `_${escapeMarkdown(p.rule)}._`, '']
  const head = `| Cell | ${ROLE_LABELS.join(' | ')} |`
  const rule = `|---|${REQUEST_ROLES.map(() => '---:').join('|')}|`
  lines.push('Requests (every attempt):', '', head, rule)
  for (const cell of p.cells)
    lines.push(`| ${codeSpan(cell.id)} | ${REQUEST_ROLES.map((r) => roleCount(cell, r)).join(' | ')} |`)
  lines.push('', 'Spend (USD):', '', head, rule)
  for (const cell of p.cells)
    lines.push(`| ${codeSpan(cell.id)} | ${REQUEST_ROLES.map((r) => roleSpend(cell, r)).join(' | ')} |`)
  const unroled = p.cells.filter((x) => x.trials_without_roles > 0)
  if (unroled.length > 0) {
    lines.push(
      '',
      `_Trials without request roles (not counted above): ${unroled.map((x) => `${codeSpan(x.id)} ${x.trials_without_roles}`).join(', ')}._`,
    )
  }
  lines.push('', '### Request parts', '')
  lines.push(
    '_Requests: totals; bytes: mean per request. Ratios: Σtreatment/Σbaseline over paired blocks, with the interval._',
    '',
  )
  for (const cmp of p.comparisons) {
    const base = p.cells.find((x) => x.id === cmp.baseline)
    const treat = p.cells.find((x) => x.id === cmp.treatment)
    if (!base || !treat) continue
    lines.push(
      `| Figure | ${codeSpan(base.id)} | ${codeSpan(treat.id)} | n | ${codeSpan(treat.id)} / ${codeSpan(base.id)} |`,
      '|---|---:|---:|---:|---|',
    )
    for (const f of FIGURES) {
      const r = cmp.ratios.find((x) => x.metric === f.metric)
      lines.push(
        `| ${f.label} | ${cellValue(base, f)} | ${cellValue(treat, f)} | ${r?.n ?? 0} | ${ratioText(r, escapeMarkdown)} |`,
      )
    }
    const share = (x: Cell) =>
      x.parts?.cache_prefix_share == null ? '—' : `${fmtNum(x.parts.cache_prefix_share * 100, 3)}%`
    lines.push(`| Cache-eligible share | ${share(base)} | ${share(treat)} | | |`, '')
  }
  lines.push('Parameters sent:', '')
  for (const cell of p.cells) lines.push(`- ${codeSpan(cell.id)}: ${escapeMarkdown(paramsText(cell))}`)
  return `${lines.join('\n')}\n\n`
}

/** The request-roles and request-parts sections of report.html; '' when the comparison has no profile. */
export function requestProfileHtml(c: Comparison): string {
  const p = c.request_profile
  if (!p) return ''
  const head = `<tr><th>Cell</th>${ROLE_LABELS.map((l) => `<th>${e(l)}</th>`).join('')}</tr>`
  const rows = (f: (cell: Cell, role: string) => string) =>
    p.cells
      .map(
        (cell) =>
          `<tr><td>${e(cell.id)}</td>${REQUEST_ROLES.map((r) => `<td class="n">${e(f(cell, r))}</td>`).join('')}</tr>`,
      )
      .join('')
  const parts = p.comparisons
    .map((cmp) => {
      const base = p.cells.find((x) => x.id === cmp.baseline)
      const treat = p.cells.find((x) => x.id === cmp.treatment)
      if (!base || !treat) return ''
      const body = FIGURES.map((f) => {
        const r = cmp.ratios.find((x) => x.metric === f.metric)
        return `<tr><td>${e(f.label)}</td><td class="n">${e(cellValue(base, f))}</td><td class="n">${e(cellValue(treat, f))}</td><td class="n">${r?.n ?? 0}</td><td>${ratioText(r, e)}</td></tr>`
      }).join('')
      return `<table><tr><th>Figure</th><th>${e(base.id)}</th><th>${e(treat.id)}</th><th>n</th><th>${e(treat.id)} / ${e(base.id)}</th></tr>${body}</table>`
    })
    .join('')
  const params = p.cells.map((cell) => `<li>${e(cell.id)}: ${e(paramsText(cell))}</li>`).join('')
  return [
    '<section><h3>Request roles</h3>',
    `<p class="rule">${e(p.rule)}.</p>`,
    `<p>Requests (every attempt)</p><table>${head}${rows((cell, r) => String(roleCount(cell, r)))}</table>`,
    `<p>Spend (USD)</p><table>${head}${rows(roleSpend)}</table>`,
    '<h3>Request parts</h3>',
    '<p class="rule">Requests: totals; bytes: mean per request. Ratios: Σtreatment/Σbaseline over paired blocks, with the interval.</p>',
    parts,
    `<p>Parameters sent</p><ul>${params}</ul></section>`,
  ].join('')
}
