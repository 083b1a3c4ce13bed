import { escapeHtml } from '../report/escape.js'
import { slug, timelineAnchor } from './markdown.js'
import type { Dossier } from './schema.js'

export const HTML_START = '<!-- diagnosis:start -->'
export const HTML_END = '<!-- diagnosis:end -->'

/**
 * The report.html section linking each driving instance to both cells' timelines in
 * diagnosis/dossier.md (relative links: the dossier sits beside the report). Escaped through
 * report/escape.ts.
 */
export function dossierHtmlSection(d: Dossier): string {
  const rows: string[] = []
  for (const c of d.comparisons) {
    for (const i of c.instances) {
      const link = (id: string) =>
        `<a href="diagnosis/dossier.md#${escapeHtml(timelineAnchor(id))}">${escapeHtml(id)}</a>`
      rows.push(
        `<tr id="${escapeHtml(`driver-${slug(i.id)}`)}"><td>${escapeHtml(`${c.treatment} vs ${c.baseline}`)}</td><td>${escapeHtml(i.instance)}</td><td>${escapeHtml(i.reason.replace('_', ' '))}</td><td>${i.baseline.map(link).join(' ') || '—'}</td><td>${i.treatment.map(link).join(' ') || '—'}</td></tr>`,
      )
    }
  }
  return [
    HTML_START,
    '<section id="diagnosis"><h2>Diagnosis: driving instances</h2>',
    '<p>Each driving instance of a confirmed difference, with both cells’ timelines in <a href="diagnosis/dossier.md">diagnosis/dossier.md</a> (data: <a href="diagnosis/dossier.json">dossier.json</a>).</p>',
    '<table><thead><tr><th>comparison</th><th>instance</th><th>why</th><th>baseline timeline</th><th>treatment timeline</th></tr></thead>',
    `<tbody>${rows.join('\n')}</tbody></table></section>`,
    HTML_END,
  ].join('\n')
}

/** report.html with the section inserted before `</body>` (or replacing an earlier one). */
export function withDossierSection(html: string, section: string): string {
  const s = html.indexOf(HTML_START)
  const e = html.indexOf(HTML_END)
  if (s >= 0 && e > s) return html.slice(0, s) + section + html.slice(e + HTML_END.length)
  const body = html.lastIndexOf('</body>')
  return body >= 0 ? `${html.slice(0, body)}${section}\n${html.slice(body)}` : `${html}\n${section}\n`
}
