import type { Scorecard } from '../records/scorecard.js'
import { codeSpan, escapeHtml, escapeMarkdown } from './escape.js'

const pct = (v: number | null): string => (v === null ? '—' : `${(v * 100).toFixed(1)}%`)

/**
 * The scorecard section of the Markdown report: per cell pass@1, pass^k (k = max trials), cost per
 * solved task, tool-call error rate (bridge tasks) and the exit distribution. Cell ids and exit class
 * names come from artifacts: escaped.
 */
export function scorecardMarkdown(card: Scorecard, h: string): string {
  const maxK = Math.max(1, ...card.map((c) => c.pass_hat_k.length))
  const rows = card.map((c) => {
    const hat = c.pass_hat_k.find((p) => p.k === maxK)
    const exits = Object.entries(c.exits)
      .map(([k, n]) => `${escapeMarkdown(k)} ${n}`)
      .join(', ')
    const cost = c.cost_per_solved_usd === null ? '—' : `$${c.cost_per_solved_usd.toFixed(4)}`
    const tools = c.tool_calls === null ? '—' : `${pct(c.tool_call_error_rate)} of ${c.tool_calls}`
    return `| ${codeSpan(c.cell)} | ${c.resolved_trials}/${c.graded_trials} | ${pct(c.pass_at_1)} | ${pct(hat?.value ?? null)} | ${cost} | ${tools} | ${exits || '—'} |`
  })
  return [
    `${h}# Scorecard`,
    '',
    `| Cell | Resolved / graded trials | pass@1 | pass^${maxK} | Cost per solved task | Tool-call errors | Exits |`,
    '|---|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    'pass@1: mean per-instance resolve rate over graded trials; pass^k: chance k trials of an instance all pass (τ²-bench); infra errors and ungraded trials are not in the denominators.',
    '',
    ...userSimulationLines(card),
  ].join('\n')
}

/** The same scorecard section for report.html (cell ids and exit classes escaped). */
export function scorecardHtml(card: Scorecard): string {
  const e = escapeHtml
  const maxK = Math.max(1, ...card.map((c) => c.pass_hat_k.length))
  const rows = card.map((c) => {
    const hat = c.pass_hat_k.find((p) => p.k === maxK)
    const exits = Object.entries(c.exits)
      .map(([k, n]) => `${e(k)} ${n}`)
      .join(', ')
    const cost = c.cost_per_solved_usd === null ? '—' : `$${c.cost_per_solved_usd.toFixed(4)}`
    const tools = c.tool_calls === null ? '—' : `${pct(c.tool_call_error_rate)} of ${c.tool_calls}`
    return `<tr><td><code>${e(c.cell)}</code></td><td>${c.resolved_trials}/${c.graded_trials}</td><td>${pct(c.pass_at_1)}</td><td>${pct(hat?.value ?? null)}</td><td>${cost}</td><td>${tools}</td><td>${exits || '—'}</td></tr>`
  })
  return [
    '<section><h2>Scorecard</h2>',
    `<table><tr><th>Cell</th><th>Resolved / graded trials</th><th>pass@1</th><th>pass^${maxK}</th><th>Cost per solved task</th><th>Tool-call errors</th><th>Exits</th></tr>`,
    rows.join(''),
    '</table>',
    '<p class="note">pass@1: mean per-instance resolve rate over graded trials; pass^k: chance k trials of an instance all pass (τ²-bench); infra errors and ungraded trials are not in the denominators.</p>',
    ...card.flatMap((c) => {
      const u = c.user_simulation
      if (!u) return []
      const spend = u.spend_usd === null ? 'spend unknown' : `$${u.spend_usd.toFixed(4)}`
      return [
        `<p>Simulated user (not in the cell's cost) for <code>${e(c.cell)}</code>: ${u.dialogues} dialogue(s), ${u.requests} request(s), ${spend}.</p>`,
      ]
    }),
    '</section>',
  ].join('')
}

/** One line per cell whose trials held dialogues: the simulated user's spend, apart from the cell's cost. */
function userSimulationLines(card: Scorecard): string[] {
  const lines = card.flatMap((c) => {
    const u = c.user_simulation
    if (!u) return []
    const spend = u.spend_usd === null ? 'spend unknown' : `$${u.spend_usd.toFixed(4)}`
    return [
      `Simulated user (not in the cell's cost) for ${codeSpan(c.cell)}: ${u.dialogues} dialogue(s), ${u.requests} request(s), ${spend}.`,
      '',
    ]
  })
  return lines
}
