import { HwError } from './errors.js'

/**
 * POSIX shell quoting for one word: the result, pasted into a `bash -c` script, is read back as exactly
 * `s` (no expansion, no word splitting). Plain words stay bare for readable logs.
 */
export function shellQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/** A whole argv as one shell line (for logs and command.txt). */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ')
}

type Piece = { text: string } | { name: string }

/**
 * Split a command template into text and `{name}` placeholders. `{{` and `}}` stand for literal braces;
 * `${NAME}` is the shell's own expansion and JSON such as `{"a":1}` is plain text. Throws HwError
 * `template_invalid` (where = `field`) for a placeholder not in `allowed`, and for one written inside
 * shell quotes (values are quoted on expansion; quoting them again would keep the quote marks).
 */
function parseTemplate(template: string, allowed: readonly string[], field: string): Piece[] {
  const pieces: Piece[] = []
  let text = ''
  let quote: "'" | '"' | null = null
  for (let i = 0; i < template.length; i++) {
    const c = template[i] as string
    if (quote !== "'" && c === '\\' && i + 1 < template.length) {
      text += c + template[++i]
      continue
    }
    if ((c === '{' || c === '}') && template[i + 1] === c) {
      text += c
      i++
      continue
    }
    if (c === '{' && template[i - 1] !== '$') {
      const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(template.slice(i))
      if (m) {
        const ph = m[1] as string
        if (!allowed.includes(ph)) {
          throw new HwError('template_invalid', `unknown placeholder {${ph}} in template "${template}"`, {
            where: field,
            help: `supported placeholders: ${allowed.map((p) => `{${p}}`).join(' ')}; write {{ and }} for literal braces`,
          })
        }
        if (quote) {
          throw new HwError(
            'template_invalid',
            `placeholder {${ph}} is inside ${quote} quotes in template "${template}"`,
            {
              where: field,
              help: 'remove the quotes around it: every value is shell-quoted when the template is expanded',
            },
          )
        }
        if (text) pieces.push({ text })
        text = ''
        pieces.push({ name: ph })
        i += m[0].length - 1
        continue
      }
    }
    if (c === "'" || c === '"') {
      if (quote === null) quote = c
      else if (quote === c) quote = null
    }
    text += c
  }
  if (text) pieces.push({ text })
  return pieces
}

/** The placeholders a template uses, in order of first use. Throws like `expandTemplate`. */
export function templatePlaceholders<P extends string>(
  template: string,
  allowed: readonly P[],
  field = 'template',
): P[] {
  const out: P[] = []
  for (const p of parseTemplate(template, allowed, field)) {
    if ('name' in p && !out.includes(p.name as P)) out.push(p.name as P)
  }
  return out
}

/**
 * Expand a command template for `bash -c`: each `{placeholder}` becomes its value as one shell word
 * (shellQuote), so an instance id, prompt or path holding `;`, `$()`, spaces or quotes cannot inject
 * commands. `field` (e.g. "benchmark.verifier.command") is where errors point. Throws HwError
 * `template_invalid` for an unknown or quoted placeholder, or one whose value is not given in `vars`.
 */
export function expandTemplate<P extends string>(
  template: string,
  vars: Partial<Record<P, string>>,
  allowed: readonly P[],
  field = 'template',
): string {
  return parseTemplate(template, allowed, field)
    .map((p) => {
      if ('text' in p) return p.text
      const v = vars[p.name as P]
      if (v === undefined) {
        throw new HwError(
          'template_invalid',
          `placeholder {${p.name}} has no value here in template "${template}"`,
          {
            where: field,
            help: `this template can use: ${Object.keys(vars)
              .map((k) => `{${k}}`)
              .join(' ')}`,
          },
        )
      }
      return shellQuote(v)
    })
    .join('')
}
