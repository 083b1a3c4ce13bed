import { codeBlock, codeSpan, escapeMarkdown } from '../report/escape.js'
import { timelineAnchor } from './markdown.js'
import type { ProposalFile } from './schema.js'

/** What the tracking issue and PR comment say about a confirmed breach's diagnosis. */
export interface DiagnosisSummary {
  proposal: ProposalFile | null
  /** Where the dossier is, for a person (path inside the report artifact). */
  dossierPath: string
  /**
   * The proposed experiment as a unified diff of the manifest file (diagnose/manifest-patch.ts) and
   * where it lies beside the dossier, or why there is none (the fragment is then shown as YAML).
   */
  patch?: { path: string; manifest: string; diff: string } | { unavailable: string }
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
  const head = `**Proposed experiment** (one variable: ${escapeMarkdown(x.variable)}, ${escapeMarkdown(x.current_value)} → ${escapeMarkdown(x.proposed_value)}; expect ${escapeMarkdown(x.metric)} to ${x.expected_direction}).`
  const patch = s.patch
  lines.push(
    '',
    ...(patch && 'diff' in patch
      ? [
          `${head} A patch of ${codeSpan(patch.manifest)} adding the candidate cell (${codeSpan(patch.path)} beside the dossier); apply it from the repository root with ${codeSpan('git apply')} or ${codeSpan('patch -p1')}, then ${codeSpan(`harness-watch validate ${patch.manifest}`)}:`,
          '',
          codeBlock(patch.diff, 'diff'),
        ]
      : [
          `${head} Add this cell to the manifest to run it${patch ? ` (no patch file: ${escapeMarkdown(patch.unavailable)})` : ''}:`,
          '',
          codeBlock(x.manifest_patch, 'yaml'),
        ]),
    '',
    `Dossier: ${where}. Analyst ${codeSpan(p.analyst.route)}, its spend counted apart: ${p.analyst.spend_usd === null ? 'unknown' : `$${p.analyst.spend_usd}`}.`,
  )
  return lines.join('\n')
}

/** Marks the diagnosis section of report.md, so a later diagnosis replaces it instead of adding one. */
export const REPORT_DIAGNOSIS_MARKER = '<!-- harness-watch:diagnosis -->'

/**
 * The diagnosis section of report.md (beside which diagnosis/ lies): a link to the dossier, then the
 * hypothesis and the proposed experiment quoted as the tracking issue shows them. With `summary` null
 * the section says the diagnosis is missing and why; nothing else in the report changes. Pure.
 */
export function reportDiagnosisSection(summary: DiagnosisSummary | null, missing?: string): string {
  const lines = [REPORT_DIAGNOSIS_MARKER, '## Diagnosis', '']
  if (!summary) {
    lines.push(
      `**No diagnosis is available for this run**${missing ? `: ${escapeMarkdown(missing)}` : ''}. The decision above stands on its own; \`harness-watch diagnose <run folder>\` writes one from the run's artifacts.`,
    )
    return `${lines.join('\n')}\n`
  }
  lines.push(
    `Dossier: [${summary.dossierPath}](${summary.dossierPath}) (timelines, behaviour measures, patches, request curves).`,
    '',
  )
  const body = diagnosisMarkdown(summary, null).replace(/^### Diagnosis\n\n/, '')
  lines.push(body)
  return `${lines.join('\n')}\n`
}

/** report.md with its diagnosis section set to `section` (replacing an earlier one). Pure. */
export function withReportDiagnosis(markdown: string, section: string): string {
  const at = markdown.indexOf(REPORT_DIAGNOSIS_MARKER)
  const base = at >= 0 ? markdown.slice(0, at) : markdown
  return `${base.trimEnd()}\n\n${section}`
}
