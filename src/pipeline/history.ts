import { access, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
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
import { linkTarget } from '../report/escape.js'
import { renderHistoryHtml } from '../report/history.js'
import type { HistorySource } from '../report/write.js'
import { HwError } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { DECISION_FILE } from './detect.js'

export const HISTORY_HTML = 'history.html'
export const HISTORY_JSON = 'history.json'

/** Longest history address linked from the reports (each report's header carries it). */
const MAX_HISTORY_URL = 2048

/**
 * `--history-url` (CLI) or the action's `history-url` input for the commands that write reports: an
 * http(s) URL of plain characters, or a path to history.html (or to the folder holding it) that the
 * reports link relative to their own folder. `artifact`: the workflow's history artifact the page is
 * uploaded in, when `value` is the run's page. Empty: null (the reports name no history). A scheme
 * other than http(s) (`javascript:`, `data:`, `file:`) or a URL with quotes, spaces, brackets or
 * parentheses is a usage error, never a link.
 */
export async function historySource(
  value: string | undefined,
  artifact?: string,
): Promise<HistorySource | null> {
  const v = value?.trim() ?? ''
  const name = artifact?.trim() ?? ''
  if (name !== '' && !/^[A-Za-z0-9._-]{1,255}$/.test(name))
    throw new HwError(
      'usage',
      `the history artifact name must be letters, digits, ".", "_" or "-", got "${name}"`,
    )
  if (v === '') return null
  const help =
    'give an http(s) URL (percent-encode spaces, quotes, brackets and parentheses) or the path of history.html written by `harness-watch history`'
  if (v.length > MAX_HISTORY_URL)
    throw new HwError(
      'usage',
      `the history address is ${v.length} characters long; at most ${MAX_HISTORY_URL} are linked`,
      { help },
    )
  if (/^https?:\/\//i.test(v)) {
    if (linkTarget(v) === null)
      throw new HwError('usage', `the history URL "${v}" cannot be linked safely`, { help })
    return { target: v, artifact: name || null }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(v) && !/^[A-Za-z]:[/]/.test(v))
    throw new HwError('usage', `the history address "${v}" is neither an http(s) URL nor a path`, { help })
  if (name !== '')
    throw new HwError(
      'usage',
      'a history artifact names where an http(s) history URL points; a path needs none',
      {
        help,
      },
    )
  const isDir = await stat(v).then(
    (s) => s.isDirectory(),
    () => false,
  )
  return { target: path.resolve(isDir ? path.join(v, HISTORY_HTML) : v) }
}

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
