import { codeSpan, escapeHtml, linkTarget } from './escape.js'

/**
 * The line of report.md and report.html that links the experiment's weekly history page
 * (`harness-watch history`). Without a link the reports say nothing about a history.
 */
export interface HistoryLink {
  /** An http(s) URL, or a path relative to the report's folder. */
  href: string
  /**
   * The page is in this artifact of the run `href` points to, uploaded after the report was written
   * (the workflow's history job); absent when the history could not be built.
   */
  artifact?: string | null
  /** A local page that did not exist yet when the report was written. */
  pending?: boolean
}

/** What follows the link: where the page is and whether it existed when the report was written. */
function note(h: HistoryLink): { md: string; html: string } {
  if (h.artifact)
    return {
      md: `: \`history.html\` in the artifact ${codeSpan(h.artifact)} of this run, built after this report (none when the history could not be built).`,
      html: `: <code>history.html</code> in the artifact <code>${escapeHtml(h.artifact)}</code> of this run, built after this report (none when the history could not be built).`,
    }
  if (h.pending) {
    const text = ' (not written yet when this report was: `harness-watch history` writes it).'
    return { md: text, html: escapeHtml(text).replace(/`([^`]*)`/g, '<code>$1</code>') }
  }
  return { md: '.', html: '.' }
}

const REFUSED = 'History: not linked (the address given is neither an http(s) URL nor a relative path).'

/** report.md's history line, or null without one. A target that is not safe is never linked or quoted. */
export function historyLinkMarkdown(h: HistoryLink | null | undefined): string | null {
  if (!h) return null
  const target = linkTarget(h.href)
  if (target === null) return REFUSED
  const n = note(h)
  return `History: [weekly history](${target})${n.md}`
}

/** report.html's history paragraph, or an empty string without one. */
export function historyLinkHtml(h: HistoryLink | null | undefined): string {
  if (!h) return ''
  const target = linkTarget(h.href)
  if (target === null) return `<p class="history">${escapeHtml(REFUSED)}</p>`
  const n = note(h)
  return `<p class="history">History: <a href="${escapeHtml(target)}">weekly history</a>${n.html}</p>`
}
