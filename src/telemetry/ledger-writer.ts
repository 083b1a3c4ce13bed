import { closeSync, fstatSync, mkdirSync, openSync, statfsSync, statSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { LedgerRow } from '../records/ledger.js'

/** Free space a ledger's file system must keep for the next rows (a row is a few KB at most). */
export const LEDGER_MIN_FREE_BYTES = 1024 * 1024

/**
 * Appends ledger rows to a JSONL file (one file per leg), one line per row, written through to the
 * OS as each row completes so a killed run keeps every finished row. Synchronous writes keep lines
 * whole and in completion order.
 */
export class LedgerWriter {
  private fd: number | null
  private readonly id: { dev: number; ino: number }

  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true })
    this.fd = openSync(file, 'a')
    const st = fstatSync(this.fd)
    this.id = { dev: st.dev, ino: st.ino }
  }

  append(row: LedgerRow): void {
    if (this.fd === null) throw new Error(`ledger ${this.file} is closed`)
    writeSync(this.fd, `${JSON.stringify(row, finiteOnly)}\n`)
  }

  /**
   * Why a row could not be written now, or null: the file is closed, is no longer the file opened
   * (removed, or something else in its place), or its file system has less than
   * {@link LEDGER_MIN_FREE_BYTES} free. Checked before a request is forwarded, so a request whose row
   * cannot be kept is refused rather than sent unrecorded. A few system calls; never throws.
   */
  unwritable(): string | null {
    if (this.fd === null) return `ledger ${this.file} is closed`
    try {
      const st = statSync(this.file)
      if (!st.isFile() || st.dev !== this.id.dev || st.ino !== this.id.ino)
        return `ledger ${this.file} was replaced (${st.isDirectory() ? 'a folder' : 'another file'} is in its place)`
      fstatSync(this.fd)
      const fs = statfsSync(this.file)
      const free = Number(fs.bavail) * Number(fs.bsize)
      if (free < LEDGER_MIN_FREE_BYTES)
        return `ledger ${this.file}: its file system has ${free} bytes free (fewer than ${LEDGER_MIN_FREE_BYTES})`
      return null
    } catch (e) {
      return `ledger ${this.file} cannot be written: ${(e as Error).message.split('\n')[0]}`
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd)
    this.fd = null
  }
}

/** Rows never hold NaN/Infinity (JSON has no form for them): fail loudly rather than write `null`. */
function finiteOnly(_key: string, v: unknown): unknown {
  if (typeof v === 'number' && !Number.isFinite(v)) throw new Error('non-finite number in a ledger row')
  return v
}
