import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { LedgerRow } from '../records/ledger.js'

/**
 * Appends ledger rows to a JSONL file (one file per leg), one line per row, written through to the
 * OS as each row completes so a killed run keeps every finished row. Synchronous writes keep lines
 * whole and in completion order.
 */
export class LedgerWriter {
  private fd: number | null

  constructor(readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true })
    this.fd = openSync(file, 'a')
  }

  append(row: LedgerRow): void {
    if (this.fd === null) throw new Error(`ledger ${this.file} is closed`)
    writeSync(this.fd, `${JSON.stringify(row, finiteOnly)}\n`)
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
