/**
 * Escaping for text quoted from runs (instance ids, harness and model names, messages) into the
 * Markdown we publish (report.md, job summary, issue and PR bodies) and into report.html.
 *
 * Markdown rules (GitHub Flavored Markdown as rendered on github.com):
 * - no raw HTML: `<`, `>` and `&` become entities, so `<img onerror=…>` or `<details>` is shown as text;
 * - no formatting, links or images: ASCII punctuation that Markdown interprets is backslash-escaped;
 * - no pings or cross-references: `@name` gets a zero-width joiner after the `@` (GitHub does not
 *   match the mention); likewise `#123`, `owner/repo#123` and `GH-123` (GitHub links references in
 *   the rendered text, after Markdown escapes are gone, so `\#` alone is not enough);
 * - no autolinks: `scheme://`, `www.` and commit SHAs (hex runs of 7 or more) get zero-width joiners
 *   that break GitHub's autolink and SHA matching while rendering as the same text;
 * - one line: newlines and tabs become spaces, other control characters are dropped;
 * - `|` is escaped, so the text is safe inside table cells (also inside code spans, where GFM needs it).
 */

/** U+200D ZERO WIDTH JOINER: placed after `@` so GitHub does not turn `@user` into a mention. */
export const ZWJ = '\u200d'

// Punctuation with an inline Markdown meaning (escape, code, emphasis, strikethrough, links and images,
// tables, issue references). Line-start syntax (`-`, `+`, `1.`, headings) needs no escape because the
// text is always placed after other text on its line.
const MD_SPECIAL = /[\\`*_[\]|~#]/g

/** Control characters except tab and newline (which become spaces). */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

function oneLine(text: string): string {
  return text.replace(CONTROL, '').replace(/[\t\r\n]+/g, ' ')
}

/** `@` followed by a name character gets a ZWJ, so no user or team is pinged. */
export function neutralizeMentions(text: string): string {
  return text.replace(/@(?=[A-Za-z0-9_-])/g, `@${ZWJ}`)
}

/**
 * Zero-width joiners where GitHub would otherwise make a link or a reference of text: after the `:`
 * of `scheme://`, inside `www.`, after `#` before a name character, inside `GH-<n>`, and every six
 * characters of a hex run of seven or more (a commit SHA or its prefix). The text reads the same.
 */
export function neutralizeLinks(text: string): string {
  return text
    .replace(/([A-Za-z][A-Za-z0-9+.-]*):(?=\/)/g, `$1:${ZWJ}`)
    .replace(/\b(www)(\.)/gi, `$1${ZWJ}$2`)
    .replace(/#(?=[A-Za-z0-9_])/g, `#${ZWJ}`)
    .replace(/\b(GH)-(?=\d)/gi, `$1${ZWJ}-`)
    .replace(/[0-9A-Fa-f]{7,}/g, (run) => run.replace(/.{6}(?=.)/g, (six) => `${six}${ZWJ}`))
}

/**
 * Plain text from a run → inline Markdown that renders as the same text: no HTML, no formatting, no
 * links, no autolinks or references, no mentions, safe in a table cell. For text placed after something else on its line (a table
 * cell, after a label); at the very start of a line wrap it in `codeSpan` instead. Example: `<b>@team</b> | x` → `&lt;b&gt;@‍team&lt;/b&gt; \| x`.
 */
export function escapeMarkdown(text: string): string {
  const s = oneLine(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(MD_SPECIAL, (ch) => `\\${ch}`)
  return neutralizeLinks(neutralizeMentions(s))
}

/**
 * Text from a run as an inline code span (monospace, shown verbatim: no HTML, no links, no mentions).
 * The fence is longer than any backtick run inside; `|` is escaped for table cells (GFM reads `\|` in a
 * code span inside a table as `|`). Empty text gives an empty code span's visible form `` ` ` ``.
 */
export function codeSpan(text: string): string {
  const s = oneLine(text).replace(/\|/g, '\\|')
  let longest = 0
  for (const m of s.matchAll(/`+/g)) longest = Math.max(longest, m[0].length)
  const fence = '`'.repeat(longest + 1)
  const pad = s.startsWith('`') || s.endsWith('`') || s === '' ? ' ' : ''
  return `${fence}${pad}${s}${pad}${fence}`
}

/**
 * Multi-line text from a run as a fenced code block (shown verbatim): the fence is longer than any
 * backtick or tilde run inside, control characters are dropped, mentions neutralised, and `<!--` /
 * `-->` are split so the block can never open or close an HTML comment (our markers are comments).
 */
export function codeBlock(text: string, lang = ''): string {
  const s = text
    .replace(/\r\n?/g, '\n')
    .replace(CONTROL, '')
    .replace(/<!--/g, '<!\u200b--')
    .replace(/--(?=>)/g, '-\u200b-')
  let longest = 2
  for (const m of s.matchAll(/`+|~+/g)) longest = Math.max(longest, m[0].length)
  const fence = '`'.repeat(longest + 1)
  return `${fence}${/^[a-z]+$/.test(lang) ? lang : ''}\n${neutralizeMentions(s)}\n${fence}`
}

/** Text for HTML element content or a double-quoted attribute value. */
export function escapeHtml(text: string): string {
  // Most texts (ids, numbers) hold none of the five: one test instead of five replacements.
  if (!HTML_SPECIAL.test(text)) return text
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

const HTML_SPECIAL = /[&<>"']/

/**
 * JSON for embedding inside `<script type="application/json">`: `<`, `>`, `&` and the line separators
 * U+2028/2029 as \u escapes, so no `</script>` or `<!--` can end or alter the script element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}

/**
 * A link target we may place in a report as given, or null: an http(s) URL, or a relative path, made
 * only of characters that need no escaping inside a Markdown link destination or a double-quoted
 * HTML attribute (no spaces, quotes, backslashes, backticks, brackets, parentheses or angle
 * brackets; percent-encode others), and no character reference (`&colon;`). A relative path
 * starts with neither `/` nor a scheme, so `javascript:`, `data:` and protocol-relative `//host`
 * are refused. The HTML still goes through
 * escapeHtml (for `&`).
 */
export function linkTarget(target: string): string | null {
  const plain = /^[A-Za-z0-9._~%!$&*+,;=:@/?#-]+$/
  if (!plain.test(target)) return null
  // Markdown decodes character references in a link destination (`javascript&colon;` is `javascript:`).
  if (/&#?[A-Za-z0-9]+;/.test(target)) return null
  if (/^https?:\/\/[A-Za-z0-9.-]+(:\d+)?([/?#]|$)/i.test(target)) return target
  if (target.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(target)) return null
  // A colon before the first slash would read as a scheme to some renderers.
  if (/^[^/?#]*:/.test(target)) return null
  return target
}

/**
 * A path's segments percent-encoded for a link destination: encodeURIComponent, and the characters it
 * leaves that end or open a Markdown link (`(`, `)`, `!`, `'`, `*`) as well.
 */
export function encodePathSegments(segments: readonly string[]): string {
  return segments
    .map((s) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/')
}
