import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../errors.js'
import { type Leg, type Plan, PlanSchema } from '../plan/schema.js'
import { type AttemptRecord, AttemptRecordSchema, type LegRecord, LegRecordSchema } from '../run/records.js'
import { LedgerRowSchema } from '../telemetry/ledger.js'
import { sha256 } from '../util/json.js'
import { forEachJsonl, type InputError, type Numbered, parseJsonFile, parseJsonl } from './jsonl.js'

/** One planned leg as found on disk. Paths are relative to the artifacts folder (stable across machines). */
export interface LegArtifact {
  leg: Leg
  /** Folder of the leg's files, relative to the artifacts folder. */
  folder: string
  record: LegRecord | null
  attempts: Numbered<AttemptRecord>[]
  attemptsFile: string
  /** Valid ledger rows per attribution key `cell\u0000instance\u0000trial\u0000attempt`. */
  ledgerRows: Map<string, number>
  /** attempts.jsonl lines that are JSON but not valid records, with what they name (to mark their block). */
  invalidRows: Array<{ line: number; cell: string | null; instance: string | null; trial: number | null }>
}

export interface ReadArtifacts {
  legs: LegArtifact[]
  missingLegs: Array<{ leg: string; cell: string; shard: number; artifact: string; reason: string }>
  inputErrors: InputError[]
  inputs: Array<{ path: string; sha256: string }>
}

/** The key ledger rows and attempts share. */
export function attemptKey(cell: string, instance: string, trial: number, attempt: number): string {
  return `${cell}\u0000${instance}\u0000${trial}\u0000${attempt}`
}

/**
 * Read plan.json. Throws HwError `plan_unreadable` / `plan_invalid` (a user's mistake: wrong path or
 * not a plan) — without a plan nothing can be compared.
 */
export async function readPlan(file: string): Promise<{ plan: Plan; sha256: string }> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('plan_unreadable', `cannot read plan: ${(e as NodeJS.ErrnoException).code ?? e}`, {
      where: file,
      help: 'pass the plan.json written by `harness-watch plan` (or the plan job of the workflow)',
    })
  }
  const { value, errors } = parseJsonFile(text, file, PlanSchema)
  if (!value) {
    throw new HwError('plan_invalid', 'not a valid plan.json', {
      where: file,
      details: errors.map((e) => `${e.file}${e.line ? `:${e.line}` : ''} ${e.message}`),
      help: 'regenerate it with `harness-watch plan <manifest>`',
    })
  }
  return { plan: value, sha256: sha256(text) }
}

/**
 * Read every leg the plan names from `dir`, laid out as actions/download-artifact writes a pattern
 * download: one folder per artifact, named as `plan.legs[].artifact` (the files at its root, or inside
 * a single sub-folder). Never throws for a missing or broken leg: a missing folder or attempts.jsonl
 * lists the leg in `missingLegs`; unparsable files and rows become `inputErrors` with file:line.
 * Throws HwError `artifacts_unreadable` only when `dir` itself is not a folder.
 */
export async function readLegArtifacts(plan: Plan, dir: string): Promise<ReadArtifacts> {
  const st = await stat(dir).catch(() => null)
  if (!st?.isDirectory()) {
    throw new HwError('artifacts_unreadable', 'the artifacts folder does not exist', {
      where: dir,
      help: 'pass the folder the leg artifacts were downloaded into (one sub-folder per artifact)',
    })
  }
  const out: ReadArtifacts = { legs: [], missingLegs: [], inputErrors: [], inputs: [] }
  for (const leg of plan.legs) {
    const found = await legFolder(dir, leg.artifact)
    const missing = (reason: string) =>
      out.missingLegs.push({ leg: leg.leg, cell: leg.cell, shard: leg.shard, artifact: leg.artifact, reason })
    if (!found) {
      missing('artifact folder not found')
      continue
    }
    const rel = path.relative(dir, found).split(path.sep).join('/')
    const attemptsFile = `${rel}/attempts.jsonl`
    const attemptsText = await readFile(path.join(found, 'attempts.jsonl'), 'utf8').catch(() => null)
    if (attemptsText === null) {
      missing('attempts.jsonl not found in the artifact')
      continue
    }
    out.inputs.push({ path: attemptsFile, sha256: sha256(attemptsText) })
    const attempts = parseJsonl(attemptsText, attemptsFile, AttemptRecordSchema)
    const invalidRows: LegArtifact['invalidRows'] = []
    for (const { json, ...e } of attempts.errors) {
      out.inputErrors.push(e)
      if (json && typeof json === 'object') {
        const o = json as Record<string, unknown>
        invalidRows.push({
          line: e.line ?? 0,
          cell: typeof o.cell_id === 'string' ? o.cell_id : null,
          instance: typeof o.instance_id === 'string' ? o.instance_id : null,
          trial: typeof o.trial === 'number' && Number.isInteger(o.trial) && o.trial >= 0 ? o.trial : null,
        })
      }
    }

    let record: LegRecord | null = null
    const legFile = `${rel}/leg.json`
    const legText = await readFile(path.join(found, 'leg.json'), 'utf8').catch(() => null)
    if (legText === null) {
      out.inputErrors.push({ file: legFile, line: null, message: 'leg.json not found' })
    } else {
      out.inputs.push({ path: legFile, sha256: sha256(legText) })
      const parsed = parseJsonFile(legText, legFile, LegRecordSchema)
      for (const { json: _json, ...e } of parsed.errors) out.inputErrors.push(e)
      record = parsed.value
      if (record && (record.cell_id !== leg.cell || record.leg !== leg.leg)) {
        out.inputErrors.push({
          file: legFile,
          line: null,
          message: `leg.json is for leg ${record.leg} (cell ${record.cell_id}), the plan expects ${leg.leg} (cell ${leg.cell})`,
        })
      }
    }

    const ledgerRows = new Map<string, number>()
    const ledgerFile = `${rel}/ledger.jsonl`
    const ledgerText = await readFile(path.join(found, 'ledger.jsonl'), 'utf8').catch(() => null)
    if (ledgerText === null) {
      if (attempts.rows.length > 0) {
        out.inputErrors.push({ file: ledgerFile, line: null, message: 'ledger.jsonl not found' })
      }
    } else {
      out.inputs.push({ path: ledgerFile, sha256: sha256(ledgerText) })
      // Rows are validated and counted per attempt, not kept: the attempt records carry the sums.
      const errors = forEachJsonl(ledgerText, ledgerFile, LedgerRowSchema, (row) => {
        const a = row.attribution
        if (!a) return
        const key = attemptKey(a.cell_id, a.instance_id, a.trial, a.attempt)
        ledgerRows.set(key, (ledgerRows.get(key) ?? 0) + 1)
      })
      for (const { json: _json, ...e } of errors) out.inputErrors.push(e)
    }
    out.legs.push({
      leg,
      folder: rel,
      record,
      attempts: attempts.rows,
      attemptsFile,
      ledgerRows,
      invalidRows,
    })
  }
  out.inputs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return out
}

/** `<dir>/<artifact>` when it holds attempts.jsonl or leg.json, else its single sub-folder that does. */
async function legFolder(dir: string, artifact: string): Promise<string | null> {
  const root = path.join(dir, artifact)
  const entries = await readdir(root, { withFileTypes: true }).catch(() => null)
  if (!entries) return null
  if (entries.some((e) => e.isFile() && (e.name === 'attempts.jsonl' || e.name === 'leg.json'))) return root
  const subs = entries.filter((e) => e.isDirectory() && e.name !== 'logs')
  if (subs.length === 1) {
    const sub = path.join(root, subs[0]!.name)
    const inner = await readdir(sub).catch(() => [] as string[])
    if (inner.includes('attempts.jsonl') || inner.includes('leg.json')) return sub
  }
  return root
}
