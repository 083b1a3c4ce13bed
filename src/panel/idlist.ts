import { appendFile, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { HwError } from '../errors.js'
import { InstanceId } from '../manifest/schema.js'

/**
 * Placeholders of the id-list command templates (`benchmark.setup`, `benchmark.verifier.command`):
 * instance: the instance id · workspace: the attempt's workspace folder · patch: file holding the
 * attempt's diff · predictions: SWE-bench predictions JSONL holding that diff · out: a folder for the
 * grader's reports · run_id: the run's id.
 */
export const TEMPLATE_PLACEHOLDERS = [
  'instance',
  'workspace',
  'patch',
  'predictions',
  'out',
  'run_id',
] as const
export type Placeholder = (typeof TEMPLATE_PLACEHOLDERS)[number]
export type TemplateVars = Partial<Record<Placeholder, string>>

const KNOWN = new Set<string>(TEMPLATE_PLACEHOLDERS)
const supported = TEMPLATE_PLACEHOLDERS.map((p) => `{${p}}`).join(' ')

/** A string as one POSIX shell word: bare when it holds only safe characters, else single-quoted. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_./:=@+%,-]+$/.test(s)) return s
  return `'${s.replaceAll("'", `'\\''`)}'`
}

type Piece = { text: string } | { name: string }

/**
 * Split a template into text and `{name}` placeholders; `{{` and `}}` stand for literal braces.
 * Throws HwError `template_invalid` (where = `name`) for an unknown placeholder, and for a placeholder
 * written inside shell quotes (values are quoted here; quoting them again would keep the quote marks).
 */
function parseTemplate(template: string, name: string): Piece[] {
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
    // `${NAME}` is the shell's own expansion, not a placeholder
    if (c === '{' && template[i - 1] !== '$') {
      const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(template.slice(i))
      if (m) {
        const ph = m[1] as string
        if (!KNOWN.has(ph)) {
          throw new HwError('template_invalid', `unknown placeholder {${ph}} in template "${template}"`, {
            where: name,
            help: `supported placeholders: ${supported}; write {{ and }} for literal braces`,
          })
        }
        if (quote) {
          throw new HwError(
            'template_invalid',
            `placeholder {${ph}} is inside ${quote} quotes in template "${template}"`,
            {
              where: name,
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

/** The placeholders a template uses, in order of first use. Throws like `expandTemplate` for a bad template. */
export function templatePlaceholders(template: string, name = 'template'): Placeholder[] {
  const out: Placeholder[] = []
  for (const p of parseTemplate(template, name)) {
    if ('name' in p && !out.includes(p.name as Placeholder)) out.push(p.name as Placeholder)
  }
  return out
}

/**
 * Expand a command template for `bash -c`: each `{placeholder}` becomes its value as one shell word
 * (shellQuote), so an instance id or path holding `;`, `$()`, spaces or quotes cannot inject commands.
 * `name` (e.g. "benchmark.verifier.command") is where errors point. Throws HwError `template_invalid`
 * for an unknown placeholder, a quoted placeholder, or one whose value is not available here.
 */
export function expandTemplate(template: string, vars: TemplateVars, name = 'template'): string {
  return parseTemplate(template, name)
    .map((p) => {
      if ('text' in p) return p.text
      const v = vars[p.name as Placeholder]
      if (v === undefined) {
        throw new HwError(
          'template_invalid',
          `placeholder {${p.name}} has no value here in template "${template}"`,
          {
            where: name,
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

/** One line of SWE-bench's predictions JSONL (the input of swebench.harness.run_evaluation). */
export const PredictionSchema = z.strictObject({
  instance_id: InstanceId,
  model_name_or_path: z.string().min(1),
  model_patch: z.string(),
})
export type Prediction = z.infer<typeof PredictionSchema>

/**
 * Write predictions in SWE-bench's JSONL format, one `{"instance_id","model_name_or_path","model_patch"}`
 * object per line (keys in that order; an empty patch is kept and grades as unresolved). Creates the
 * folder; `append` adds to an existing file. Throws HwError `prediction_invalid` naming the field.
 */
export async function writePredictions(
  file: string,
  predictions: Prediction | Prediction[],
  opts: { append?: boolean } = {},
): Promise<void> {
  const list = Array.isArray(predictions) ? predictions : [predictions]
  const lines = list.map((p, i) => {
    const ok = PredictionSchema.safeParse(p)
    if (!ok.success) {
      const issue = ok.error.issues[0]
      throw new HwError(
        'prediction_invalid',
        `prediction ${i}: ${issue?.path.join('.')}: ${issue?.message}`,
        {
          where: file,
        },
      )
    }
    const { instance_id, model_name_or_path, model_patch } = ok.data
    return `${JSON.stringify({ instance_id, model_name_or_path, model_patch })}\n`
  })
  await mkdir(path.dirname(path.resolve(file)), { recursive: true })
  if (opts.append) await appendFile(file, lines.join(''))
  else await writeFile(file, lines.join(''))
}
