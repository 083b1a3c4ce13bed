import type { ComparisonDiff } from '../compare/diff.js'
import { fmtP, fmtPp, fmtRate, fmtRatio, fmtValue } from '../util/format.js'
import { fitSections, type Section } from './budget.js'
import { codeSpan, escapeMarkdown } from './escape.js'

/**
 * The Markdown of `harness-watch diff`: one table of per-cell changes between two runs, then each
 * cell's regressions and fixes by instance; within GitHub's body limit (lists cut, never mid-row).
 */
export function renderDiffMarkdown(d: ComparisonDiff, fullReport = 'the --json output'): string {
  const head = [
    '# Harness Watch — run over run',
    '',
    `Old: ${codeSpan(d.old.experiment_id)} run ${d.old.run_id ? codeSpan(d.old.run_id) : '—'} (round ${d.old.round}${d.old.started_at ? `, ${codeSpan(d.old.started_at)}` : ''}) · New: ${codeSpan(d.new.experiment_id)} run ${d.new.run_id ? codeSpan(d.new.run_id) : '—'} (round ${d.new.round}${d.new.started_at ? `, ${codeSpan(d.new.started_at)}` : ''})`,
    '',
    `${d.instances.common} instances in both runs; ${d.instances.only_old.length} only in the old, ${d.instances.only_new.length} only in the new.`,
    '',
    '| Cell | n | Regressions | Fixes | Resolve rate old → new | Δ | McNemar p (two-sided · regression) | Spend per instance old → new | Requests per instance old → new |',
    '|---|---:|---:|---:|---|---:|---|---|---|',
    ...d.cells.map((c) => {
      const flag = c.identity.changed
        ? ' ⚠ version/config changed'
        : !c.in_old
          ? ' (new cell)'
          : !c.in_new
            ? ' (gone)'
            : ''
      return `| ${codeSpan(c.cell)}${flag} | ${c.n} | ${c.regressions.length} | ${c.fixes.length} | ${fmtRate(c.old_rate)} → ${fmtRate(c.new_rate)} | ${fmtPp(c.delta_pp)} | ${fmtP(c.mcnemar.p_two_sided)} · ${fmtP(c.mcnemar.p_one_sided)} | ${fmtValue(c.spend_usd.old_mean, 'usd')} → ${fmtValue(c.spend_usd.new_mean, 'usd')} (${fmtRatio(c.spend_usd.ratio_of_means)}, n ${c.spend_usd.n}) | ${fmtValue(c.proxy_requests.old_mean, 'requests')} → ${fmtValue(c.proxy_requests.new_mean, 'requests')} (${fmtRatio(c.proxy_requests.ratio_of_means)}) |`
    }),
    '',
    ...(d.capabilities ?? []).map((l) => `> **Capabilities:** ${escapeMarkdown(l)}  `),
    ...d.notes.map((n) => `> ${escapeMarkdown(n)}`),
    '',
  ].join('\n')
  const sections: Section[] = [{ id: 'summary', text: head, keep: true }]
  if (d.scorecards && d.scorecards.length > 0)
    sections.push({ id: 'scorecard', text: scorecardDiffMarkdown(d.scorecards), keep: true })
  for (const c of d.cells) {
    if (c.regressions.length + c.fixes.length === 0) continue
    const rows = [
      ...c.regressions.map((i) => `| ${codeSpan(i)} | regression (resolved → unresolved) |\n`),
      ...c.fixes.map((i) => `| ${codeSpan(i)} | fix (unresolved → resolved) |\n`),
    ]
    sections.push({
      id: `cell ${c.cell}`,
      head: `## ${codeSpan(c.cell)}\n\n| Instance | Change |\n|---|---|\n`,
      rows,
      tail: '\n',
    })
  }
  return fitSections(sections, {
    pointer: (omitted) =>
      `> Shortened to fit GitHub's limit (${omitted.join(', ')}); the full list is in ${fullReport}.\n`,
  }).text
}

/** The scorecard part of a diff: headline metrics old → new and per-task pass-rate changes. */
function scorecardDiffMarkdown(rows: NonNullable<ComparisonDiff['scorecards']>): string {
  const rate = (v: number | null): string => (v === null ? '—' : `${(v * 100).toFixed(1)}%`)
  const usd = (v: number | null): string => (v === null ? '—' : `$${v.toFixed(4)}`)
  return [
    '## Scorecard',
    '',
    '| Cell | pass@1 old → new | Tool-call error rate old → new | Cost per solved task old → new | Tasks regressed | Tasks fixed |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${codeSpan(r.cell)} | ${rate(r.pass_at_1.old)} → ${rate(r.pass_at_1.new)} | ${rate(r.tool_call_error_rate.old)} → ${rate(r.tool_call_error_rate.new)} | ${usd(r.cost_per_solved_usd.old)} → ${usd(r.cost_per_solved_usd.new)} | ${r.regressions.map(codeSpan).join(', ') || '—'} | ${r.fixes.map(codeSpan).join(', ') || '—'} |`,
    ),
    '',
  ].join('\n')
}
