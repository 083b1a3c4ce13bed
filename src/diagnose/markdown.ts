import { codeSpan, escapeMarkdown } from '../report/escape.js'
import { matchesFile } from './behaviour/context.js'
import type { MilestoneName } from './behaviour/milestones.js'
import type { AttemptView, Dossier, ProposalFile } from './schema.js'

/** Heading anchor GitHub derives for the attempt's timeline section ("timeline-<slug>"). */
export function timelineAnchor(attemptId: string): string {
  return `timeline-${slug(attemptId)}`
}

/** Lower-case letters and digits joined by single dashes. */
export function slug(id: string): string {
  return id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}

const MS: Record<MilestoneName, string> = {
  first_relevant_read: 'first relevant read',
  first_material_edit: 'first material edit',
  first_test: 'first test run',
  first_passing_test: 'first passing test',
  final_edit: 'final edit',
  final_verification: 'final verification',
}

const n = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined ? '—' : digits > 0 ? v.toFixed(digits) : String(v)

/**
 * diagnosis/dossier.md: per comparison, its driving instances with both cells' measures side by side,
 * then one timeline section per attempt (anchor `timeline-<attempt id>`). Text from runs goes through
 * report/escape.ts.
 */
export function renderDossierMarkdown(d: Dossier): string {
  const out: string[] = [`# Diagnosis dossier: ${escapeMarkdown(d.experiment_id)}`, '']
  out.push(
    `Run ${codeSpan(d.run_id ?? 'unknown')}, round ${d.round}, decision ${codeSpan(d.decision_status ?? 'none')}. ` +
      `Up to ${d.max_instances} driving instances per comparison: outcome-discordant first, then the largest paired resource residuals. ` +
      'Every item has an id; measures are counted from trajectories and the ledger, never estimated.',
    '',
  )
  for (const note of d.notes) out.push(`- note: ${escapeMarkdown(note)}`)
  for (const c of d.comparisons) {
    out.push(`## ${escapeMarkdown(c.treatment)} vs ${escapeMarkdown(c.baseline)} (${codeSpan(c.id)})`, '')
    out.push(`Status: ${codeSpan(c.status ?? 'unknown')}.`)
    for (const s of c.confirmed) out.push(`- confirmed: ${escapeMarkdown(s)}`)
    if (c.capped > 0) out.push(`- ${c.capped} more driving instance(s) left out by the cap`)
    out.push('')
    for (const inst of c.instances) {
      out.push(
        `### ${escapeMarkdown(inst.instance)} — ${inst.reason.replace('_', ' ')} (${codeSpan(inst.id)})`,
        '',
      )
      if (inst.metric)
        out.push(
          `${inst.metric}: baseline ${n(inst.baseline_value, 6)}, treatment ${n(inst.treatment_value, 6)}`,
          '',
        )
      for (const note of inst.notes) out.push(`- ${escapeMarkdown(note)}`)
      const cols = [...inst.baseline, ...inst.treatment]
        .map((id) => d.attempts[id])
        .filter((a): a is AttemptView => !!a)
      // The files the milestones call relevant: either cell's final patch (diagnose/dossier.ts).
      const relevant = [...new Set(cols.flatMap((a) => a.patch.files))]
      if (cols.length > 0) {
        out.push(
          `| measure | ${cols.map((a) => `[${escapeMarkdown(a.id)}](#${timelineAnchor(a.id)})`).join(' | ')} |`,
        )
        out.push(`|---|${cols.map(() => '---').join('|')}|`)
        const row = (label: string, f: (a: AttemptView) => string) =>
          out.push(`| ${label} | ${cols.map((a) => f(a)).join(' | ')} |`)
        row('outcome', (a) => `${escapeMarkdown(a.outcome)} (${escapeMarkdown(a.exit_class)})`)
        row('proxy requests', (a) => n(a.measures.requests.count))
        row('input tokens', (a) => n(a.measures.requests.input_tokens))
        row('cache-read share', (a) => n(a.measures.requests.cache_read_share, 3))
        row('tools per request (max)', (a) => n(a.measures.requests.max_tools))
        for (const [k, label] of Object.entries(MS) as [MilestoneName, string][]) {
          row(`${label}: s / requests`, (a) => {
            const m = a.measures.milestones[k]
            if (m) return `${n(m.t_ms === null ? null : m.t_ms / 1000, 1)} / ${n(m.requests)}`
            // An edit milestone is reached only by an edit to a file of the diff that did not fail;
            // beside edits that happened, say which kind they were, counted from the same timeline.
            if (
              (k === 'first_material_edit' || k === 'final_edit') &&
              a.trajectory.events.some((e) => e.kind === 'edit')
            )
              return unmaterialEdits(a, relevant)
            return 'never'
          })
        }
        row('repeated reads', (a) => n(a.measures.repeats.repeated_reads))
        row('unchanged commands', (a) => n(a.measures.repeats.unchanged_commands))
        row(
          'edits / re-edits / reversions',
          (a) => `${a.measures.churn.edits} / ${a.measures.churn.re_edits} / ${a.measures.churn.reversions}`,
        )
        row(
          'failing-tool loops (longest)',
          (a) => `${a.measures.failing_loops.loops} (${a.measures.failing_loops.longest})`,
        )
        row('tested after final edit', (a) =>
          a.measures.verification.tested_after_final_edit ? 'yes' : 'no',
        )
        row('stopped with known failures', (a) =>
          a.measures.verification.stopped_with_known_failures ? 'yes' : 'no',
        )
        row('patch files', (a) => a.patch.files.map(codeSpan).join(' ') || '—')
        out.push('')
      }
    }
  }
  out.push('## Timelines', '')
  for (const a of Object.values(d.attempts)) {
    out.push(`### Timeline ${escapeMarkdown(a.id)}`, '')
    out.push(`<a id="${timelineAnchor(a.id)}"></a>`, '')
    out.push(
      `${escapeMarkdown(a.harness)}, outcome ${escapeMarkdown(a.outcome)}, verifier ${escapeMarkdown(a.verifier.status)}; logs ${codeSpan(a.logs_dir)}`,
      '',
    )
    for (const i of a.trajectory.issues)
      out.push(`- trajectory ${i.code}${i.line ? ` at line ${i.line}` : ''}: ${escapeMarkdown(i.detail)}`)
    out.push('| event | s | kind | tool | detail | ok |', '|---|---|---|---|---|---|')
    for (const e of a.trajectory.events.slice(0, 300)) {
      const detail = e.command ?? (e.paths.length > 0 ? e.paths.join(' ') : (e.text ?? ''))
      out.push(
        `| ${codeSpan(e.event_id)} | ${e.t_ms === null ? '—' : (e.t_ms / 1000).toFixed(1)} | ${e.kind} | ${e.tool ? codeSpan(e.tool) : '—'} | ${detail ? codeSpan(detail.slice(0, 160)) : ''} | ${e.ok === null ? '' : e.ok ? 'ok' : 'failed'} |`,
      )
    }
    if (a.trajectory.events.length > 300)
      out.push(`| … ${a.trajectory.events.length - 300} more in dossier.json | | | | | |`)
    out.push('')
  }
  return `${out.join('\n')}\n`
}

/**
 * Why an attempt whose timeline holds edits reached no material edit, counted from that timeline:
 * edits that succeeded to files outside the diff (the count the "edits" row shows) and edits that
 * failed (which that row leaves out): "none material: 1 edit to other files, 2 failed edits".
 */
function unmaterialEdits(a: AttemptView, relevant: string[]): string {
  const edits = a.trajectory.events.filter((e) => e.kind === 'edit')
  const failed = edits.filter((e) => e.ok === false).length
  const elsewhere = edits.filter(
    (e) => e.ok !== false && !e.paths.some((p) => matchesFile(p, relevant)),
  ).length
  const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`
  const parts = [
    ...(elsewhere > 0 ? [`${plural(elsewhere, 'edit')} to other files`] : []),
    ...(failed > 0 ? [plural(failed, 'failed edit')] : []),
  ]
  return `none material: ${parts.join(', ')}`
}

/**
 * The analyst section appended to dossier.md once proposal.json exists: how the analyst ran (route,
 * harness, sandbox, fallback), its own requests and spend — apart from the comparison's — and the
 * grounding status. Text from the analyst goes through report/escape.ts.
 */
export function renderAnalystMarkdown(p: ProposalFile): string {
  const a = p.analyst
  const out = ['', '## Analyst', '']
  out.push(
    `Route ${codeSpan(a.route)}${a.harness ? `, harness ${codeSpan(a.harness)}` : ''}${a.isolation ? `, sandbox ${codeSpan(a.isolation)}` : ''}. ` +
      `Its own spend, apart from the comparison: ${n(a.requests)} proxy request(s), ${a.spend_usd === null ? 'unknown' : `$${a.spend_usd}`}` +
      `${a.ledger ? ` (ledger ${codeSpan(a.ledger)})` : ''}.`,
  )
  if (a.fallback)
    out.push('', `The in-process scripted analyst answered instead: ${escapeMarkdown(a.fallback)}`)
  out.push(
    '',
    `Proposal (${codeSpan('proposal.json')}): ${codeSpan(p.grounding.status)} after ${p.grounding.attempts} answer(s).`,
  )
  if (p.answer) out.push('', `Hypothesis: ${escapeMarkdown(p.answer.hypothesis)}`)
  for (const pr of p.grounding.problems) out.push(`- ${escapeMarkdown(pr)}`)
  return `${out.join('\n')}\n`
}
