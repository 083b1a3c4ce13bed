import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { z } from 'zod'
import {
  type AttemptRecord,
  AttemptRecordSchema,
  type LegRecord,
  LegRecordSchema,
} from '../records/attempt.js'
import { type LedgerRow, LedgerRowSchema } from '../records/ledger.js'
import { HwError } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { jsonErrorPosition, jsonErrorReason, parseJsonText } from '../util/json-text.js'
import { quotePath, safeSegment } from '../util/paths.js'
import { issuesSummary } from '../util/zod-message.js'

export const ATTEMPTS_FILE = 'attempts.jsonl'
export const LEDGER_FILE = 'ledger.jsonl'
export const LEG_FILE = 'leg.json'

/**
 * The leg's artifact folder: attempts.jsonl, ledger.jsonl, leg.json and logs/<instance>/<trial>-<attempt>/.
 * Every record is validated with its zod schema before it is written (a record that does not validate
 * is a defect and throws). Lines are appended as attempts finish, so a crash loses at most the attempt
 * in flight. Nothing in the folder is hidden (upload-artifact v4.4+ skips dot-files).
 */
export class LegArtifact {
  readonly dir: string

  constructor(dir: string) {
    this.dir = path.resolve(dir)
  }

  get attemptsFile(): string {
    return path.join(this.dir, ATTEMPTS_FILE)
  }

  get ledgerFile(): string {
    return path.join(this.dir, LEDGER_FILE)
  }

  get legFile(): string {
    return path.join(this.dir, LEG_FILE)
  }

  async init(): Promise<void> {
    await mkdir(path.join(this.dir, 'logs'), { recursive: true })
    await appendFile(this.attemptsFile, '')
    await appendFile(this.ledgerFile, '')
  }

  /** `logs/<instance>/<trial>-<attempt>`, relative to the leg folder (instance sanitised for paths). */
  logsRel(instance: string, trial: number, attempt: number): string {
    return `logs/${safeSegment(instance)}/${trial}-${attempt}`
  }

  /** A fresh, empty logs folder for one attempt (a folder left by an attempt lost in a crash is cleared). */
  async freshLogsDir(
    instance: string,
    trial: number,
    attempt: number,
  ): Promise<{ rel: string; abs: string }> {
    const rel = this.logsRel(instance, trial, attempt)
    const abs = path.join(this.dir, rel)
    await rm(abs, { recursive: true, force: true })
    await mkdir(abs, { recursive: true })
    return { rel, abs }
  }

  async appendAttempt(record: AttemptRecord): Promise<void> {
    const valid = AttemptRecordSchema.parse(record)
    await appendFile(this.attemptsFile, strictJson(valid, 0))
  }

  async appendLedger(rows: readonly LedgerRow[]): Promise<void> {
    if (rows.length === 0) return
    const text = rows.map((r) => strictJson(LedgerRowSchema.parse(r), 0)).join('')
    await appendFile(this.ledgerFile, text)
  }

  /** Write leg.json atomically (temporary file + rename). */
  async writeLeg(record: LegRecord): Promise<void> {
    const valid = LegRecordSchema.parse(record)
    const tmp = `${this.legFile}.partial`
    await writeFile(tmp, strictJson(valid))
    await rename(tmp, this.legFile)
  }

  /**
   * leg.json of an earlier run, or null when there is none. HwError `artifact_corrupt` (located) when it
   * is not JSON or not a leg record: resuming would overwrite it.
   */
  async readLeg(): Promise<LegRecord | null> {
    const text = await readFile(this.legFile, 'utf8').catch(() => null)
    if (text === null) return null
    const json = parseJsonText(text, this.legFile, 'artifact_corrupt')
    const parsed = LegRecordSchema.safeParse(json)
    if (parsed.success) return parsed.data
    throw new HwError('artifact_corrupt', `not a leg record: ${issuesSummary(parsed.error, json)}`, {
      where: quotePath(this.legFile),
      help: RESUME_HELP,
    })
  }

  /**
   * Attempts already written. Only a torn write — a last line with no newline that is not valid JSON,
   * left by a crash mid-append — is set aside (its bytes kept in `attempts.jsonl.torn`) and reported
   * through `log`; any other bad line is HwError `artifact_corrupt` at `file:line` naming the field.
   */
  async readAttempts(log: (line: string) => void = () => {}): Promise<AttemptRecord[]> {
    const { values, torn } = await readJsonl(this.attemptsFile, AttemptRecordSchema)
    if (torn) {
      await appendFile(`${this.attemptsFile}.torn`, `${torn.text}\n`)
      await writeFile(this.attemptsFile, values.map((r) => strictJson(r, 0)).join(''))
      log(
        `${quotePath(`${this.attemptsFile}:${torn.line}`)}: a torn last line (${torn.text.length} chars, not valid JSON, no newline) from an interrupted write was set aside in ${ATTEMPTS_FILE}.torn; that attempt runs again`,
      )
    }
    return values
  }

  /**
   * Move ledger rows that belong to no recorded attempt (rows of an attempt lost in a crash would
   * otherwise be attributed twice when its number is reused) to `ledger.pruned.jsonl`: nothing that
   * parses is deleted. A torn last line is set aside like in {@link readAttempts}. Returns how many
   * rows were moved.
   */
  async pruneLedger(
    keep: (row: LedgerRow) => boolean,
    log: (line: string) => void = () => {},
  ): Promise<number> {
    const { values, torn } = await readJsonl(this.ledgerFile, LedgerRowSchema)
    const kept = values.filter(keep)
    const moved = values.filter((r) => !keep(r))
    if (moved.length === 0 && !torn) return 0
    if (moved.length > 0) {
      await appendFile(
        path.join(this.dir, 'ledger.pruned.jsonl'),
        moved.map((r) => strictJson(r, 0)).join(''),
      )
      log(
        `${quotePath(this.ledgerFile)}: ${moved.length} proxy request row(s) of attempts that were never recorded (lost in a crash) moved to ledger.pruned.jsonl`,
      )
    }
    if (torn) {
      await appendFile(`${this.ledgerFile}.torn`, `${torn.text}\n`)
      log(
        `${quotePath(`${this.ledgerFile}:${torn.line}`)}: a torn last line (${torn.text.length} chars, not valid JSON, no newline) was set aside in ${LEDGER_FILE}.torn`,
      )
    }
    await writeFile(this.ledgerFile, kept.map((r) => strictJson(r, 0)).join(''))
    return moved.length
  }
}

const RESUME_HELP =
  'fix or remove that line, or rerun the leg with --fresh (the old folder is moved aside, not deleted)'

/**
 * Read a JSON-lines file and validate each line with `schema`. A last line with no newline that is not
 * valid JSON is a torn write (`torn`, its 1-based line and text); any other line that is not JSON or
 * does not match the schema throws HwError `artifact_corrupt` at `file:line[:column]`, naming the
 * field and the rule it breaks.
 */
async function readJsonl<S extends z.ZodType>(
  file: string,
  schema: S,
): Promise<{ values: z.output<S>[]; torn: { line: number; text: string } | null }> {
  const text = await readFile(file, 'utf8').catch(() => '')
  const lines = text.split('\n')
  const values: z.output<S>[] = []
  let torn: { line: number; text: string } | null = null
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (e) {
      // split() leaves the text after the last newline as the last element: a line with no newline.
      if (i === lines.length - 1) {
        torn = { line: i + 1, text: line }
        continue
      }
      const at = jsonErrorPosition(line, e)
      throw new HwError('artifact_corrupt', `not valid JSON: ${jsonErrorReason(e)}`, {
        where: quotePath(`${file}:${i + 1}:${at.col}`),
        help: RESUME_HELP,
      })
    }
    const parsed = schema.safeParse(json)
    if (!parsed.success) {
      throw new HwError('artifact_corrupt', `not a valid record: ${issuesSummary(parsed.error, json)}`, {
        where: quotePath(`${file}:${i + 1}`),
        help: RESUME_HELP,
      })
    }
    values.push(parsed.data)
  }
  return { values, torn }
}
