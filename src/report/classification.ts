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

/**
 * Each harness's evaluated share, the first figures a reader sees: "opencode: 4 of 5 evaluated ⚠ ·
 * pi: 5 of 5 evaluated" (a cell's id when two cells share a harness; ⚠ marks a cell with a gap).
 * One list for every report (report.md, report.html, the job summary, the PR comment and the tracking
 * issue); each renders it through its own escaping. Null without a classification (published results).
 */
export function evaluatedShares(
  c: Comparison,
): Array<{ name: string; evaluated: number; scheduled: number; gap: boolean }> | null {
  const cells = c.classification?.cells
  if (!cells || cells.length === 0) return null
  const harnessOf = new Map(c.cells.map((x) => [x.id, x.harness]))
  const counts = new Map<string, number>()
  for (const x of c.cells) counts.set(x.harness, (counts.get(x.harness) ?? 0) + 1)
  return cells.map((x) => {
    const h = harnessOf.get(x.cell) ?? x.cell
    return {
      name: (counts.get(h) ?? 0) > 1 ? x.cell : h,
      evaluated: x.evaluated,
      scheduled: x.scheduled,
      gap: x.evaluated < x.scheduled,
    }
  })
}

/** The share in words, each name through `name` (a code span, or plain text for HTML). */
function shareText(c: Comparison, name: (s: string) => string): string | null {
  const shares = evaluatedShares(c)
  if (!shares) return null
  return shares
    .map((x) => `${name(x.name)}: ${x.evaluated} of ${x.scheduled} evaluated${x.gap ? ' ⚠' : ''}`)
    .join(' · ')
}

/** `**Evaluated:** opencode: 4 of 5 evaluated ⚠ · pi: 5 of 5 evaluated` for Markdown, or null. */
export function evaluatedShareMarkdown(c: Comparison): string | null {
  // A plain name reads as itself, escaped (so `www.…`, `GH-1` or a hex run never becomes a link or a
  // reference on GitHub); anything else is shown verbatim in a code span.
  const text = shareText(c, (n) => (/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(n) ? escapeMarkdown(n) : codeSpan(n)))
  return text === null ? null : `**Evaluated:** ${text}`
}

/** The same line for report.html, every name escaped, or ''. */
export function evaluatedShareHtml(c: Comparison): string {
  const text = shareText(c, (n) => n)
  return text === null ? '' : `<p class="evaluated"><strong>Evaluated:</strong> ${escapeHtml(text)}</p>`
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
    '_Every attempt is classified before the comparison: only agent outcomes (resolved, unresolved) enter the outcome statistics; infrastructure, grading and input classes never count as harness losses; attempts with anomalous or suspect telemetry, or usage cut off mid-answer, enter no resource figure; bytes of a diff that are not UTF-8 are decoded with U+FFFD for the grader and counted, never dropped._',
    '',
  )
  lines.push(
    '| Cell | Scheduled | Evaluated | Metered | Trials by class | Telemetry anomalies | Anomalous spend raw / de-duplicated | Partial usage | Bytes not UTF-8 |',
    '|---|---:|---:|---:|---|---|---|---|---|',
  )
  for (const x of k.cells) {
    const tel = fmtCounts(x.telemetry) || '—'
    const { spend, partial } = spendCells(x)
    const name = `${codeSpan(x.cell)}${x.not_evaluated ? ' — **not evaluated**' : ''}`
    lines.push(
      `| ${name} | ${x.scheduled} | ${x.evaluated} | ${x.metered} | ${escapeMarkdown(fmtCounts(x.classes))} | ${escapeMarkdown(tel)} | ${spend} | ${partial} | ${nonUtf8Cell(x)} |`,
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
    return `<tr><td><code>${e(x.cell)}</code>${x.not_evaluated ? ' — <strong>not evaluated</strong>' : ''}</td><td>${x.scheduled}</td><td>${x.evaluated}</td><td>${x.metered}</td><td>${e(fmtCounts(x.classes))}</td><td>${e(fmtCounts(x.telemetry) || '—')}</td><td>${e(spend)}</td><td>${e(partial)}</td><td>${e(nonUtf8Cell(x))}</td></tr>`
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
    '<p class="note">Every attempt is classified before the comparison: only agent outcomes (resolved, unresolved) enter the outcome statistics; infrastructure, grading and input classes never count as harness losses; attempts with anomalous or suspect telemetry, or usage cut off mid-answer, enter no resource figure; bytes of a diff that are not UTF-8 are decoded with U+FFFD for the grader and counted, never dropped.</p>',
    '<table><tr><th>Cell</th><th>Scheduled</th><th>Evaluated</th><th>Metered</th><th>Trials by class</th><th>Telemetry anomalies</th><th>Anomalous spend raw / de-duplicated</th><th>Partial usage</th><th>Bytes not UTF-8</th></tr>',
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

/**
 * A cell's diffs with bytes that are not UTF-8, as both reports print them: "2 attempt(s), 4
 * sequence(s) replaced with U+FFFD" (decoded with replacement for the grader, never dropped), or —.
 */
function nonUtf8Cell(x: ClassifiedCell): string {
  const n = x.non_utf8_attempts ?? 0
  if (n === 0) return '—'
  return `${n} attempt(s), ${x.non_utf8_sequences ?? 0} sequence(s) replaced with U+FFFD`
}
