import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../errors.js'
import { type LedgerRow, LedgerRowSchema } from '../telemetry/ledger.js'
import { strictJson } from '../util/json.js'
import { quotePath, safeSegment } from '../util/paths.js'
import { type AttemptRecord, AttemptRecordSchema, type LegRecord, LegRecordSchema } from './records.js'

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

  async readLeg(): Promise<LegRecord | null> {
    const text = await readFile(this.legFile, 'utf8').catch(() => null)
    if (text === null) return null
    const parsed = LegRecordSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  }

  /** Attempts already written; a torn last line (crash mid-write) is dropped and the file repaired. */
  async readAttempts(): Promise<AttemptRecord[]> {
    const { values, torn } = await readJsonl(this.attemptsFile, (v) => AttemptRecordSchema.parse(v))
    if (torn) await writeFile(this.attemptsFile, values.map((r) => strictJson(r, 0)).join(''))
    return values
  }

  /**
   * Keep only ledger rows that belong to a recorded attempt (rows of an attempt lost in a crash would
   * otherwise be attributed twice when its number is reused). Returns how many rows were dropped.
   */
  async pruneLedger(keep: (row: LedgerRow) => boolean): Promise<number> {
    const { values } = await readJsonl(this.ledgerFile, (v) => LedgerRowSchema.parse(v))
    const kept = values.filter(keep)
    await writeFile(this.ledgerFile, kept.map((r) => strictJson(r, 0)).join(''))
    return values.length - kept.length
  }
}

/**
 * Read a JSON-lines file through `parse`. A last line that does not parse is a torn write (`torn`); a
 * bad line elsewhere is corruption and throws.
 */
async function readJsonl<T>(file: string, parse: (v: unknown) => T): Promise<{ values: T[]; torn: boolean }> {
  const text = await readFile(file, 'utf8').catch(() => '')
  const lines = text.split('\n')
  const values: T[] = []
  let torn = false
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    try {
      values.push(parse(JSON.parse(line)))
    } catch (e) {
      const isLast = lines.slice(i + 1).every((l) => l.trim() === '')
      if (!isLast) {
        throw new HwError('artifact_corrupt', `not a valid record: ${(e as Error).message.split('\n')[0]}`, {
          where: quotePath(`${file}:${i + 1}`),
          help: 'rerun the leg with --fresh (the old folder is moved aside, not deleted)',
        })
      }
      torn = true
    }
  })
  return { values, torn }
}
