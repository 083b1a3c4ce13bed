import { fmtCounts } from '../compare/classification.js'
import type { Comparison, ComparisonEntry } from '../records/comparison.js'
import { codeSpan, escapeHtml, escapeMarkdown } from './escape.js'

/**
 * The classification as the reports show it: the separate denominators line (every report and the
 * job summary), and a section with each cell's classes, telemetry anomalies with raw and
 * de-duplicated spend, partial usage and findings. Pure; text from runs is escaped here.
 */

/** "scheduled 40 · evaluated 34 (outcome) · metered 30 (cost) · infrastructure failures: …", or null. */
export function denominatorsLine(c: Comparison): string | null {
  return c.classification?.line ?? null
}

/** Why a comparison is not evaluated (no test, no difference, no chart row), or null. */
export function notEvaluatedReason(e: ComparisonEntry): string | null {
  return e.not_evaluated ?? null
}

/** The "Classification" Markdown section, or '' when the comparison carries none. */
export function classificationMarkdown(c: Comparison): string {
  const k = c.classification
  if (!k) return ''
  const lines = ['## Classification', '']
  lines.push(`**Denominators:** ${escapeMarkdown(k.line)}`, '')
  lines.push(
    '_Every attempt is classified before the comparison: only agent outcomes (resolved, unresolved) enter the outcome statistics; infrastructure, grading and input classes never count as harness losses; attempts with anomalous or suspect telemetry, or usage cut off mid-answer, enter no resource figure._',
    '',
  )
  lines.push(
    '| Cell | Scheduled | Evaluated | Metered | Trials by class | Telemetry anomalies | Anomalous spend raw / de-duplicated | Partial usage |',
    '|---|---:|---:|---:|---|---|---|---|',
  )
  for (const x of k.cells) {
    const tel = fmtCounts(x.telemetry) || '—'
    const { spend, partial } = spendCells(x)
    const name = `${codeSpan(x.cell)}${x.not_evaluated ? ' — **not evaluated**' : ''}`
    lines.push(
      `| ${name} | ${x.scheduled} | ${x.evaluated} | ${x.metered} | ${escapeMarkdown(fmtCounts(x.classes))} | ${escapeMarkdown(tel)} | ${spend} | ${partial} |`,
    )
  }
  lines.push('')
  for (const f of k.findings) lines.push(`- **${f.code.replace(/_/g, ' ')}:** ${escapeMarkdown(f.message)}`)
  for (const x of k.cells)
    if (x.not_evaluated)
      lines.push(`- **not evaluated:** cell ${codeSpan(x.cell)}: ${escapeMarkdown(x.not_evaluated)}`)
  return `${lines.join('\n')}\n`
}

/** The same "Classification" section for report.html (every value from a run escaped), or ''. */
export function classificationHtml(c: Comparison): string {
  const k = c.classification
  if (!k) return ''
  const e = escapeHtml
  const rows = k.cells.map((x) => {
    const { spend, partial } = spendCells(x)
    return `<tr><td><code>${e(x.cell)}</code>${x.not_evaluated ? ' — <strong>not evaluated</strong>' : ''}</td><td>${x.scheduled}</td><td>${x.evaluated}</td><td>${x.metered}</td><td>${e(fmtCounts(x.classes))}</td><td>${e(fmtCounts(x.telemetry) || '—')}</td><td>${e(spend)}</td><td>${e(partial)}</td></tr>`
  })
  const items = [
    ...k.findings.map((f) => `<li><strong>${e(f.code.replace(/_/g, ' '))}:</strong> ${e(f.message)}</li>`),
    ...k.cells
      .filter((x) => x.not_evaluated)
      .map(
        (x) =>
          `<li><strong>not evaluated:</strong> cell <code>${e(x.cell)}</code>: ${e(x.not_evaluated ?? '')}</li>`,
      ),
  ]
  return [
    '<section><h2>Classification</h2>',
    `<p><strong>Denominators:</strong> ${e(k.line)}</p>`,
    '<p class="note">Every attempt is classified before the comparison: only agent outcomes (resolved, unresolved) enter the outcome statistics; infrastructure, grading and input classes never count as harness losses; attempts with anomalous or suspect telemetry, or usage cut off mid-answer, enter no resource figure.</p>',
    '<table><tr><th>Cell</th><th>Scheduled</th><th>Evaluated</th><th>Metered</th><th>Trials by class</th><th>Telemetry anomalies</th><th>Anomalous spend raw / de-duplicated</th><th>Partial usage</th></tr>',
    rows.join(''),
    '</table>',
    items.length > 0 ? `<ul>${items.join('')}</ul>` : '',
    '</section>',
  ].join('')
}

type ClassifiedCell = NonNullable<Comparison['classification']>['cells'][number]

/** A cell's anomalous spend (raw / de-duplicated) and partial usage as both reports print them. */
function spendCells(x: ClassifiedCell): { spend: string; partial: string } {
  const spend =
    x.anomalous_raw_spend_usd === null
      ? '—'
      : `$${x.anomalous_raw_spend_usd} / ${x.anomalous_dedup_spend_usd === null ? 'unknown' : `$${x.anomalous_dedup_spend_usd}`}`
  const partial =
    x.partial_usage_attempts === 0
      ? '—'
      : `${x.partial_usage_attempts} attempt(s), $${x.partial_usage_spend_usd ?? 'unknown'} (not in cost)`
  return { spend, partial }
}
