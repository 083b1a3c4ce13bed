import type { Comparison } from '../records/comparison.js'
import { fmtP, fmtPointsCi, fmtPp, fmtRate } from '../util/format.js'
import { adjustedP } from './adjusted.js'
import type { Section } from './budget.js'
import { escapeHtml, escapeMarkdown } from './escape.js'

/**
 * The report section for several models (each harness comparison within each model, the harness ×
 * model interactions) and the one sentence on the adjustment across every test the report states.
 * Built once as plain text (cell ids and labels come from the manifest and are escaped only at the
 * rendering boundary), then rendered for report.md and report.html with the same heading.
 */
interface Table {
  head: string[]
  rows: string[][]
}

interface ModelsView {
  title: string
  /** Lines before the tables. */
  intro: string[]
  tables: Array<{ caption: string; table: Table }>
  notes: string[]
  statement: string | null
}

const ALPHA = 0.05

function view(c: Comparison): ModelsView | null {
  const statement = c.multiplicity?.statement ?? null
  if (!c.models) {
    return statement ? { title: 'Multiple tests', intro: [], tables: [], notes: [], statement } : null
  }
  const adjusted = new Map<string, number>()
  for (const t of c.multiplicity?.tests ?? []) adjusted.set(`${t.comparison}|${t.id}`, t.p_adjusted)
  const within: Table = {
    head: ['Model', 'Comparison', 'Baseline', 'Treatment', 'Difference [CI]', 'McNemar p', 'Adjusted p'],
    rows: c.comparisons.map((e) => [
      e.model ?? c.stamp.model.declared ?? '',
      `${e.baseline} → ${e.treatment}`,
      fmtRate(e.outcome.baseline_rate),
      fmtRate(e.outcome.treatment_rate),
      e.not_evaluated ? 'not evaluated' : `${fmtPp(e.outcome.diff_pp)} ${fmtPointsCi(e.outcome.diff_ci)}`,
      e.not_evaluated ? '—' : fmtP(e.outcome.mcnemar.p_two_sided),
      fmtP(adjustedP(c, e, 'mcnemar').p),
    ]),
  }
  const inter: Table = {
    head: [
      'Harnesses',
      'Models A / B',
      'Shared',
      'Gap on A',
      'Gap on B',
      'Interaction [CI]',
      'p',
      'Adjusted p',
      'Reading',
    ],
    rows: c.models.interactions.map((i) => {
      const key = `interaction ${i.treatment_harness} vs ${i.baseline_harness}, ${i.model_a}/${i.model_b}|interaction`
      const adj = adjusted.get(key) ?? null
      return [
        `${i.treatment_harness} vs ${i.baseline_harness}`,
        `${i.model_a} / ${i.model_b}`,
        String(i.n),
        fmtPp(i.gap_a_pp),
        fmtPp(i.gap_b_pp),
        i.not_evaluated ? 'not evaluated' : `${fmtPp(i.estimate_pp)} ${fmtPointsCi(i.interval_pp)}`,
        fmtP(i.p),
        fmtP(adj),
        reading(i, adj),
      ]
    }),
  }
  return {
    title: 'Harness × model',
    intro: [
      `Blocks pair only cells on the same model: each harness comparison below is within one model. The interaction is the gap on model A minus the gap on model B, over the instances both models ran.`,
    ],
    tables: [
      { caption: 'Each harness comparison within each model', table: within },
      ...(inter.rows.length > 0 ? [{ caption: 'Harness × model interaction', table: inter }] : []),
    ],
    notes: c.models.notes,
    statement,
  }
}

/** What an interaction row says, at the family-adjusted p. */
function reading(
  i: NonNullable<Comparison['models']>['interactions'][number],
  adjusted: number | null,
): string {
  if (i.not_evaluated) return i.not_evaluated
  const significant = adjusted !== null && adjusted <= ALPHA
  if (significant)
    return i.reverses ? 'the ranking reverses between the models' : 'the gap changes between the models'
  return i.reverses
    ? 'the gap has opposite signs, not significant after adjustment'
    : 'no evidence the gap differs between the models'
}

/** report.md's section, or none. */
export function modelsMarkdownSection(c: Comparison): Section | null {
  const v = view(c)
  if (!v) return null
  const md = (s: string) => escapeMarkdown(s)
  const lines = [`## ${v.title}`, '']
  for (const p of v.intro) lines.push(md(p), '')
  for (const { caption, table } of v.tables) {
    lines.push(`**${md(caption)}**`, '')
    lines.push(`| ${table.head.map(md).join(' | ')} |`, `|${table.head.map(() => '---').join('|')}|`)
    for (const r of table.rows) lines.push(`| ${r.map(md).join(' | ')} |`)
    lines.push('')
  }
  for (const n of v.notes) lines.push(`- ${md(n)}`)
  if (v.notes.length > 0) lines.push('')
  if (v.statement) lines.push(`_${md(v.statement)}_`, '')
  return { id: 'models', text: `${lines.join('\n')}\n` }
}

/** report.html's section, or an empty string. */
export function modelsHtmlSection(c: Comparison): string {
  const v = view(c)
  if (!v) return ''
  const e = escapeHtml
  const parts = [`<section><h2>${e(v.title)}</h2>`]
  for (const p of v.intro) parts.push(`<p>${e(p)}</p>`)
  for (const { caption, table } of v.tables) {
    parts.push(
      `<table><caption>${e(caption)}</caption><thead><tr>${table.head.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>`,
      ...table.rows.map((r) => `<tr>${r.map((x) => `<td>${e(x)}</td>`).join('')}</tr>`),
      '</tbody></table>',
    )
  }
  if (v.notes.length > 0) parts.push(`<ul>${v.notes.map((n) => `<li>${e(n)}</li>`).join('')}</ul>`)
  if (v.statement) parts.push(`<p class="rule">${e(v.statement)}</p>`)
  parts.push('</section>')
  return parts.join('\n')
}

/** The header's model line with several models: each route and its model id; null with one model. */
export function modelRoutesText(c: Comparison): string | null {
  if (!c.models) return null
  return `${c.models.groups.length} models: ${c.models.groups
    .map((g) =>
      g.route && g.route !== g.model_id ? `${g.route} (${g.model_id ?? '?'})` : (g.model_id ?? '?'),
    )
    .join(', ')}`
}
