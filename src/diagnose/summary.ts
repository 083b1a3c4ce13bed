import { codeBlock, codeSpan, escapeMarkdown } from '../report/escape.js'
import { timelineAnchor } from './markdown.js'
import type { ProposalFile } from './schema.js'

/** What the tracking issue and PR comment say about a confirmed breach's diagnosis. */
export interface DiagnosisSummary {
  proposal: ProposalFile | null
  /** Where the dossier is, for a person (path inside the report artifact). */
  dossierPath: string
}

/**
 * The short diagnosis of a confirmed breach: the hypothesis, the evidence as timeline anchors in the
 * dossier, and the proposed experiment as a manifest patch to apply by hand. An ungrounded proposal
 * publishes no claims. Everything from the analyst goes through report/escape.ts. Pure.
 */
export function diagnosisMarkdown(s: DiagnosisSummary, reportUrl: string | null): string {
  const where = `${codeSpan(s.dossierPath)}${reportUrl ? ` in the [run's artifacts](${reportUrl.replace(/[()\s]/g, encodeURIComponent)})` : ''}`
  const lines = ['### Diagnosis', '']
  const p = s.proposal
  if (!p?.answer) {
    lines.push(
      p
        ? `The analysis was **${p.grounding.status}**: no claim is published. The evidence is in ${where}.`
        : `Evidence per driving instance (timelines, behaviour measures, patches, request curves): ${where}.`,
    )
    return lines.join('\n')
  }
  const a = p.answer
  lines.push(
    `**Hypothesis** (${escapeMarkdown(a.category.replace(/_/g, ' '))}; grounded: every cited event exists and every number appears in the report or a tool output): ${escapeMarkdown(a.hypothesis)}`,
    '',
    '**Evidence** (anchors in the dossier):',
  )
  for (const e of a.supporting_evidence.slice(0, 5)) {
    const anchors = e.event_ids
      .slice(0, 5)
      .map((id) => `${codeSpan(id)} (${codeSpan(`#${timelineAnchor(id.split('#')[0] ?? id)}`)})`)
      .join(', ')
    lines.push(
      `- ${escapeMarkdown(e.instance)} / ${escapeMarkdown(e.cell)}: ${escapeMarkdown(e.claim)} — ${anchors}`,
    )
  }
  const x = a.single_variable_experiment
  lines.push(
    '',
    `**Proposed experiment** (one variable: ${escapeMarkdown(x.variable)}, ${escapeMarkdown(x.current_value)} → ${escapeMarkdown(x.proposed_value)}; expect ${escapeMarkdown(x.metric)} to ${x.expected_direction}). Add this cell to the manifest to run it:`,
    '',
    codeBlock(x.manifest_patch, 'yaml'),
    '',
    `Dossier: ${where}. Analyst ${codeSpan(p.analyst.route)}, its spend counted apart: ${p.analyst.spend_usd === null ? 'unknown' : `$${p.analyst.spend_usd}`}.`,
  )
  return lines.join('\n')
}
