import { access, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { z } from 'zod'
import {
  buildHistory,
  DEFAULT_CADENCE_DAYS,
  type History,
  type HistoryInput,
  HistoryInputError,
} from '../detect/history.js'
import { type Decision, DecisionSchema } from '../detect/schema.js'
import { parseJsonFile } from '../ingest/jsonl.js'
import { type Comparison, ComparisonSchema } from '../records/comparison.js'
import { renderHistoryHtml } from '../report/history.js'
import { HwError } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { DECISION_FILE } from './detect.js'

export const HISTORY_HTML = 'history.html'
export const HISTORY_JSON = 'history.json'

export interface HistoryOptions {
  comparisons: string[]
  out: string
  cadenceDays?: number
}

/**
 * `harness-watch history`: read each comparison.json (and the decision.json beside it, when there is
 * one), build the series and write history.json and history.html into `out`. Offline, files only.
 * A file that cannot be read or does not match its schema is an HwError naming the file and line.
 */
export async function historyStep(
  opts: HistoryOptions,
): Promise<{ history: History; jsonPath: string; htmlPath: string }> {
  if (opts.comparisons.length === 0)
    throw new HwError('usage', 'history needs at least one comparison.json', {
      help: 'harness-watch history runs/*/comparison.json --out history',
    })
  const cadence = opts.cadenceDays ?? DEFAULT_CADENCE_DAYS
  if (!Number.isFinite(cadence) || cadence <= 0)
    throw new HwError('usage', `--cadence-days must be a positive number of days, got ${cadence}`)
  const inputs: HistoryInput[] = []
  for (const file of opts.comparisons) {
    const comparison = await readValidated(file, ComparisonSchema, 'comparison.json')
    const beside = path.join(path.dirname(file), DECISION_FILE)
    const decision = (await exists(beside))
      ? await readValidated(beside, DecisionSchema, DECISION_FILE)
      : null
    if (decision && !sameRun(comparison, decision))
      throw new HwError(
        'history_input_invalid',
        `decision.json is of run ${decision.experiment_id}/${decision.run_id ?? '?'} round ${decision.round}, its comparison.json of ${comparison.experiment_id}/${comparison.run_id ?? '?'} round ${comparison.round}`,
        { where: beside, help: 'keep each run’s comparison.json and decision.json together in one folder' },
      )
    inputs.push({ file, comparison, decision })
  }
  let history: History
  try {
    history = buildHistory(inputs, cadence)
  } catch (e) {
    if (e instanceof HistoryInputError)
      throw new HwError('history_input_invalid', e.message, { ...(e.file ? { where: e.file } : {}) })
    throw e
  }
  const jsonPath = path.join(opts.out, HISTORY_JSON)
  const htmlPath = path.join(opts.out, HISTORY_HTML)
  try {
    await mkdir(opts.out, { recursive: true })
    await writeFile(jsonPath, strictJson(history))
    await writeFile(htmlPath, renderHistoryHtml(history))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (typeof code !== 'string') throw e
    throw new HwError('usage', `cannot write the history into --out ${opts.out}: ${code}`, {
      where: opts.out,
      help: '--out names a folder (created when absent) for history.html and history.json',
    })
  }
  return { history, jsonPath, htmlPath }
}

function sameRun(c: Comparison, d: Decision): boolean {
  return c.experiment_id === d.experiment_id && c.run_id === d.run_id
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file)
    return true
  } catch {
    return false
  }
}

async function readValidated<S extends z.ZodType>(
  file: string,
  schema: S,
  what: string,
): Promise<z.output<S>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError(
      'history_input_invalid',
      `cannot read ${what}: ${(e as NodeJS.ErrnoException).code ?? e}`,
      {
        where: file,
      },
    )
  }
  const { value, errors } = parseJsonFile(text, file, schema)
  if (value === null || errors.length > 0) {
    const first = errors[0]
    throw new HwError('history_input_invalid', `${what}: ${first?.message ?? 'unreadable'}`, {
      where: first?.line ? `${file}:${first.line}` : file,
      help: `pass each run's ${what} as written by harness-watch (aggregate, detect)`,
    })
  }
  return value
}
