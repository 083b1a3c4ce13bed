import { appendFile, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { InstanceId } from '../manifest/schema.js'
import { ID_LIST_PLACEHOLDERS, type IdListPlaceholder } from '../manifest/templates.js'
import { HwError } from '../util/errors.js'
import {
  expandTemplate as expandWith,
  templatePlaceholders as templatePlaceholdersOf,
} from '../util/template.js'

export { ID_LIST_PLACEHOLDERS as TEMPLATE_PLACEHOLDERS } from '../manifest/templates.js'
export type TemplateVars = Partial<Record<IdListPlaceholder, string>>

/** The placeholders an id-list template uses, in order of first use (see src/util/template.ts). */
export function templatePlaceholders(template: string, name = 'template'): IdListPlaceholder[] {
  return templatePlaceholdersOf(template, ID_LIST_PLACEHOLDERS, name)
}

/**
 * Expand an id-list template (`benchmark.setup`, `benchmark.verifier.command`) for `bash -c`; values are
 * shell-quoted. Throws HwError `template_invalid` (where = `name`) for an unknown or quoted
 * placeholder, or one whose value is not available here.
 */
export function expandTemplate(template: string, vars: TemplateVars, name = 'template'): string {
  return expandWith(template, vars, ID_LIST_PLACEHOLDERS, name)
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
