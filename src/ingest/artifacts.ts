import { isAscii } from 'node:buffer'
import { lstat, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { planIdentity } from '../plan/identity.js'
import { type Leg, type Plan, PlanSchema } from '../plan/schema.js'
import {
  type AttemptRecord,
  AttemptRecordSchema,
  type LegRecord,
  LegRecordSchema,
} from '../records/attempt.js'
import { type LedgerRow, LedgerRowSchema } from '../records/ledger.js'
import { duplicateLegs } from '../run/plan-file.js'
import { isContained } from '../util/contained.js'
import { HwError } from '../util/errors.js'
import { sha256, sha256OffThread } from '../util/json.js'
import { checkInside, type InsideRead, readInside } from '../util/safe-read.js'
import { fastCheckSource } from './fast-check.js'
import { forEachJsonl, type InputError, type Numbered, parseJsonFile, parseJsonl } from './jsonl.js'
import { type Reupload, runAttemptOf, uploadCandidates, workflowRunOf } from './reupload.js'
import { type LedgerFileResult, ledgerOffThread } from './worker.js'

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
  invalidRows: Array<{
    line: number
    cell: string | null
    instance: string | null
    trial: number | null
    /** Why the row is set aside, when not the schema (e.g. another run's row). */
    detail?: string
  }>
}

export interface ReadArtifacts {
  legs: LegArtifact[]
  missingLegs: Array<{ leg: string; cell: string; shard: number; artifact: string; reason: string }>
  inputErrors: InputError[]
  inputs: Array<{ path: string; sha256: string }>
  /** Legs read from a re-uploaded artifact (`<artifact>-a<N>`) in place of an earlier upload. */
  replaced?: string[]
  /** The same re-uploads, for the evaluation-health section. */
  reuploads?: Reupload[]
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
  const dups = duplicateLegs(value)
  if (dups.length > 0) {
    throw new HwError('plan_invalid', 'not a valid plan.json', {
      where: file,
      details: dups,
      help: 'regenerate it with `harness-watch plan <manifest>`',
    })
  }
  return { plan: value, sha256: sha256(text) }
}

/** How to read the artifacts. */
export interface ReadOptions {
  /**
   * Where ledger files are read: by default on a second thread while attempts are parsed on this one
   * when the ledgers hold at least 4 MB, this thread taking any the worker has not reached when it
   * needs them; true: every ledger on the worker; false: all on this thread. The result is the same.
   */
  threads?: boolean
  /**
   * The workflow's current run attempt (GITHUB_RUN_ATTEMPT): an upload named for a later attempt is
   * refused. Null or absent: no upper bound (outside Actions).
   */
  runAttempt?: number | null
  /**
   * The workflow run (GITHUB_RUN_ID): a leg whose leg.json states another run (`<run id>-<attempt>`)
   * is refused. Null or absent: not checked (outside Actions).
   */
  workflowRun?: string | null
}

/** Ledger bytes from which a second thread pays for its start-up. */
const THREADED_LEDGER_BYTES = 4 * 1024 * 1024

/**
 * Read every leg the plan names from `dir`, laid out as actions/download-artifact writes a pattern
 * download: one folder per artifact, named as `plan.legs[].artifact` (the files at its root, or inside
 * a single sub-folder). Never throws for a missing or broken leg: a missing folder or attempts.jsonl
 * lists the leg in `missingLegs`; unparsable files and rows become `inputErrors` with file:line.
 * Every ledger row is checked against the ledger schema; rows are counted per attempt, not kept.
 * Throws HwError `artifacts_unreadable` only when `dir` itself is not a folder.
 */
export async function readLegArtifacts(
  plan: Plan,
  dir: string,
  opts: ReadOptions = {},
): Promise<ReadArtifacts> {
  const st = await stat(dir).catch(() => null)
  if (!st?.isDirectory()) {
    const what = st ? 'the artifacts path is not a folder' : 'the artifacts folder does not exist'
    throw new HwError('artifacts_unreadable', what, {
      where: dir,
      help: 'pass the folder the leg artifacts were downloaded into (one sub-folder per artifact)',
    })
  }
  const out: ReadArtifacts = { legs: [], missingLegs: [], inputErrors: [], inputs: [] }
  const planSha = planIdentity(plan)
  // A re-uploaded leg replaces an earlier one only by an explicit run attempt: `<artifact>-a<N>`,
  // the highest N not above the current attempt whose leg.json states the same attempt; any other
  // folder name is not read.
  const entries = await readdir(dir).catch(() => [] as string[])
  const picks = await Promise.all(
    plan.legs.map((leg) =>
      chooseUpload(dir, entries, leg.artifact, opts.runAttempt ?? null, opts.workflowRun ?? null),
    ),
  )
  const chosen = picks.map((p, i) => p.name ?? plan.legs[i]!.artifact)
  out.reuploads = []
  for (const [i, p] of picks.entries()) {
    out.inputErrors.push(...p.refused)
    if (p.name !== null && p.replaces.length > 0)
      out.reuploads.push({
        leg: plan.legs[i]!.leg,
        read: p.name,
        run_attempt: p.attempt,
        replaces: p.replaces,
      })
  }
  out.replaced = out.reuploads.map(
    (r) =>
      `leg ${r.leg}: read ${r.read} (re-upload of run attempt ${r.run_attempt}) in place of ${r.replaces.join(', ')}`,
  )
  const found = await Promise.all(chosen.map((name) => legFolder(dir, name)))
  const folders = found.map((f) => (typeof f === 'string' ? f : null))
  const relOf = (folder: string) => path.relative(dir, folder).split(path.sep).join('/')
  // Every file is opened only as a regular file inside the folder, reached through no symbolic link.
  const ledgerRefused = folders.map((f) => {
    const why = f ? checkInside(dir, `${relOf(f)}/ledger.jsonl`) : null
    return why === 'missing' ? null : why
  })
  const ledgerPaths = folders.map((f, i) =>
    f && ledgerRefused[i] === null ? path.join(f, 'ledger.jsonl') : null,
  )
  const checkSource = fastCheckSource(LedgerRowSchema)
  // File sizes measure the work left on each thread (parsing takes about the same time per byte).
  const [ledgerSizes, attemptSizes] = await Promise.all([
    fileSizes(ledgerPaths),
    fileSizes(folders.map((f) => (f ? path.join(f, 'attempts.jsonl') : null))),
  ])
  const threads =
    checkSource !== null && (opts.threads ?? ledgerSizes.reduce((a, b) => a + b, 0) >= THREADED_LEDGER_BYTES)
  // Started now, so the worker reads ledgers while this thread parses attempts. When this thread
  // needs a ledger the worker has not started yet, it takes it (claims) and reads it itself.
  const claims = new Int32Array(new SharedArrayBuffer(4 * Math.max(1, ledgerPaths.length)))
  const offThread = ledgerPaths.map((file, index) =>
    threads && file
      ? ledgerOffThread(file, checkSource!, { claims, index }).catch((): typeof FALLBACK => FALLBACK)
      : null,
  )
  const ledgerNames = folders.map((f) => (f ? `${relOf(f)}/ledger.jsonl` : ''))
  const arrived: boolean[] = []
  for (const [j, p] of offThread.entries()) {
    p?.then(() => {
      arrived[j] = true
    })
  }
  const takenHere = new Map<number, Promise<LedgerRead | null>>()
  const here = (j: number, text: LoadedFile | null) => readLedger(dir, ledgerNames[j]!, text, null)
  /**
   * Whether this thread, needing ledger i while the worker reads it, should take ledger j: when the
   * worker's unstarted ledgers (and about half of ledger i) exceed the attempts files this thread
   * has left to parse by more than ledger j, taking it brings the two threads' ends closer.
   */
  const worthTaking = (i: number, j: number): boolean => {
    let mine = 0
    for (let k = i + 1; k < attemptSizes.length; k++) mine += attemptSizes[k]!
    let theirs = ledgerSizes[i]! / 2
    for (let k = i + 1; k < ledgerSizes.length; k++)
      if (offThread[k] && Atomics.load(claims, k) === 0) theirs += ledgerSizes[k]!
    return theirs - mine > ledgerSizes[j]!
  }
  /**
   * Leg i's ledger: read here when the worker has not started it; while the worker reads it, this
   * thread reads the last ledgers the worker has not reached yet when that balances the two
   * threads' work, or when the worker is late with ledger i (a busy machine), rather than wait idle.
   */
  const ledgerOf = async (i: number, text: LoadedFile | null): Promise<LedgerRead | null> => {
    const early = takenHere.get(i)
    if (early) return early
    if (!offThread[i]) return here(i, text)
    if (opts.threads !== true) {
      if (Atomics.compareExchange(claims, i, 0, 1) === 0) return here(i, text)
      for (let j = ledgerPaths.length - 1; j > i && !arrived[i]; j--) {
        if (!offThread[j] || Atomics.load(claims, j) !== 0) continue
        // Balanced: wait for the worker about as long as a whole ledger i takes to read.
        if (!worthTaking(i, j) && (await arrivesWithin(offThread[i]!, ledgerSizes[i]! / LEDGER_BYTES_PER_MS)))
          break
        if (Atomics.compareExchange(claims, j, 0, 1) === 0) {
          const r = here(j, null)
          takenHere.set(j, r)
          await r
        }
      }
    }
    return readLedger(dir, ledgerNames[i]!, null, offThread[i]!)
  }
  // Each leg's other files are read (and hashed) on libuv's threads two legs ahead of the one parsed
  // here, so this thread does not wait for them on a busy machine.
  const loads: Array<Promise<LoadedLeg> | undefined> = []
  const load = (i: number) => {
    const folder = folders[i]
    if (folder && !loads[i]) loads[i] = loadLeg(dir, relOf(folder), !threads)
    return loads[i]
  }
  for (let i = 0; i < plan.legs.length; i++) {
    const leg = plan.legs[i]!
    const folder = folders[i]
    const missing = (reason: string) =>
      out.missingLegs.push({ leg: leg.leg, cell: leg.cell, shard: leg.shard, artifact: leg.artifact, reason })
    const f = found[i]
    if (f !== null && typeof f === 'object') {
      out.inputErrors.push({ file: chosen[i]!, line: null, message: f.refused })
      missing(f.refused)
      continue
    }
    if (!folder) {
      missing('artifact folder not found')
      continue
    }
    const loading = load(i)!
    load(i + 1)
    const loaded = await loading
    load(i + 2)
    loads[i] = undefined
    const rel = relOf(folder)
    for (const why of loaded.refused) out.inputErrors.push({ file: rel, line: null, message: why })
    const attemptsFile = `${rel}/attempts.jsonl`
    if (loaded.attempts === null) {
      missing('attempts.jsonl not found in the artifact')
      continue
    }
    const attempts = parseJsonl(loaded.attempts.text, attemptsFile, AttemptRecordSchema)
    out.inputs.push({ path: attemptsFile, sha256: loaded.attempts.sha256 })
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
    if (loaded.leg === null) {
      out.inputErrors.push({ file: legFile, line: null, message: 'leg.json not found' })
    } else {
      out.inputs.push({ path: legFile, sha256: loaded.leg.sha256 })
      const parsed = parseJsonFile(loaded.leg.text, legFile, LegRecordSchema)
      for (const { json: _json, ...e } of parsed.errors) out.inputErrors.push(e)
      record = parsed.value
      if (record && (record.cell_id !== leg.cell || record.leg !== leg.leg)) {
        out.inputErrors.push({
          file: legFile,
          line: null,
          message: `leg.json is for leg ${record.leg} (cell ${record.cell_id}), the plan expects ${leg.leg} (cell ${leg.cell})`,
        })
      }
      const rows = attempts.rows.length + attempts.errors.length
      if (record && record.attempts > rows) {
        // An emptied or cut attempts.jsonl: the leg recorded attempts that are not there.
        out.inputErrors.push({
          file: attemptsFile,
          line: null,
          message: `holds ${rows} attempt row(s), but leg.json records ${record.attempts}: ${record.attempts - rows} row(s) are missing`,
        })
      }
    }

    const ledgerFile = ledgerNames[i]!
    const refusedLedger = ledgerRefused[i]
    const ledger = refusedLedger ? null : await ledgerOf(i, loaded.ledger)
    if (refusedLedger) {
      out.inputErrors.push({ file: ledgerFile, line: null, message: refusedLedger })
    } else if (ledger === null) {
      if (attempts.rows.length > 0) {
        out.inputErrors.push({ file: ledgerFile, line: null, message: 'ledger.jsonl not found' })
      }
    } else {
      out.inputs.push({ path: ledgerFile, sha256: ledger.sha256 })
      out.inputErrors.push(...ledger.errors)
    }
    // One run per leg artifact: rows of another run (or plan) are input errors, their blocks incomplete.
    const mixed = mixedRuns(
      record,
      legFile,
      attempts.rows,
      attemptsFile,
      ledger?.identities ?? null,
      ledgerFile,
      planSha,
    )
    out.inputErrors.push(...mixed.errors)
    invalidRows.push(...mixed.invalid)
    out.legs.push({
      leg,
      folder: rel,
      record,
      attempts:
        mixed.dropped.size === 0 ? attempts.rows : attempts.rows.filter((r) => !mixed.dropped.has(r.line)),
      attemptsFile,
      ledgerRows: ledger?.rows ?? new Map(),
      invalidRows,
    })
  }
  out.inputs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return out
}

/** One input file's text and the SHA-256 (hex) of its bytes on disk. */
interface LoadedFile {
  text: string
  sha256: string
}

interface LoadedLeg {
  attempts: LoadedFile | null
  leg: LoadedFile | null
  /** Null when missing, and when the worker reads it. */
  ledger: LoadedFile | null
  /** Files not read (a symbolic link, not a regular file), each with its reason. */
  refused: string[]
}

/** The leg's files at `<dir>/<rel>`, each read only as a regular file inside `dir` (no link followed). */
async function loadLeg(dir: string, rel: string, withLedger: boolean): Promise<LoadedLeg> {
  const refused: string[] = []
  const bytesOf = (r: InsideRead | null): Buffer | null => {
    if (r === null || r === 'missing') return null
    if ('refused' in r) {
      refused.push(r.refused)
      return null
    }
    return r.bytes
  }
  const read = (f: string) => readInside(dir, `${rel}/${f}`)
  const [attempts, legJson, ledger] = await Promise.all([
    read('attempts.jsonl'),
    read('leg.json'),
    // A refused ledger is reported where the ledger is read (once).
    withLedger ? read('ledger.jsonl').then((r) => (r !== 'missing' && 'refused' in r ? null : r)) : null,
  ])
  const [a, l, g] = await Promise.all([
    loaded(bytesOf(attempts)),
    loaded(bytesOf(legJson)),
    loaded(bytesOf(ledger)),
  ])
  return { attempts: a, leg: l, ledger: g, refused }
}

/** The file's text and hash, or null when it could not be read (missing). */
async function loaded(bytes: Buffer | null): Promise<LoadedFile | null> {
  if (bytes === null) return null
  const digest = sha256OffThread(bytes)
  // ASCII (the usual JSONL) is copied as one-byte text, cheaper than decoding UTF-8.
  const text = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8')
  return { text, sha256: await digest }
}

/** Marks a ledger the worker could not read: this thread reads it. */
const FALLBACK: unique symbol = Symbol('fallback')

/** A ledger's hash, valid rows per attempt key (attemptKey), and its errors (file:line). */
interface LedgerRead {
  sha256: string
  rows: Map<string, number>
  /** Run identities the rows' attribution states (ledgerIdentity), with the first line stating each. */
  identities: Map<string, number>
  errors: InputError[]
}

/**
 * The run identity a ledger row's attribution states, as one key: run id, plan sha256 and leg attempt
 * (empty when the row does not carry them). The off-thread reader (worker.ts) builds the same key.
 */
export function ledgerIdentity(a: { run_id: string; plan_sha256?: string; leg_attempt?: number }): string {
  return `${a.run_id}\u0000${a.plan_sha256 ?? ''}\u0000${a.leg_attempt ?? ''}`
}

/**
 * Leg's ledger from the worker's answer, or read here (from `text` when already loaded); null when
 * the file is missing.
 */
async function readLedger(
  dir: string,
  name: string,
  text: LoadedFile | null,
  offThread: Promise<LedgerFileResult | null | 'taken' | typeof FALLBACK> | null,
): Promise<LedgerRead | null> {
  const answer = offThread ? await offThread : FALLBACK
  const r = answer === 'taken' ? FALLBACK : answer
  if (r === null) return null
  const rows = new Map<string, number>()
  const identities = new Map<string, number>()
  const count = (row: LedgerRow, line = 0) => {
    const a = row.attribution
    if (a) {
      const id = ledgerIdentity(a)
      if (!identities.has(id)) identities.set(id, line)
    }
    // The simulated user's rows are not the harness's: never counted against its attempt.
    if (!a || a.role === 'user_simulation') return
    const key = attemptKey(a.cell_id, a.instance_id, a.trial, a.attempt)
    rows.set(key, (rows.get(key) ?? 0) + 1)
  }
  if (r !== FALLBACK) {
    // The worker counted the rows its check accepted; zod judges the others here, as forEachJsonl does.
    const errors: InputError[] = []
    for (const item of r.items) {
      if (item.raw === undefined) {
        errors.push({ file: name, line: item.line, message: item.message ?? 'not valid JSON' })
        continue
      }
      // The same wording as forEachJsonl: one line through the same reader.
      for (const e of forEachJsonl(item.raw, name, LedgerRowSchema, count))
        errors.push({ file: name, line: item.line, message: e.message })
    }
    for (const [key, n] of r.counts) rows.set(key, (rows.get(key) ?? 0) + n)
    for (const [id, line] of r.identities ?? [])
      if (!identities.has(id) || (identities.get(id) ?? 0) > line) identities.set(id, line)
    return { sha256: r.sha256, rows, identities, errors }
  }
  const inside = text ? null : await readInside(dir, name)
  const own =
    text ?? (inside !== null && inside !== 'missing' && 'bytes' in inside ? await loaded(inside.bytes) : null)
  if (own === null) return null
  const errors = forEachJsonl(own.text, name, LedgerRowSchema, count).map(({ json: _json, ...e }) => e)
  return { sha256: own.sha256, rows, identities, errors }
}

/** Size in bytes of each file; 0 for one that does not exist (or null). */
function fileSizes(files: Array<string | null>): Promise<number[]> {
  return Promise.all(
    files.map((f) =>
      f
        ? stat(f).then(
            (s) => s.size,
            () => 0,
          )
        : 0,
    ),
  )
}

/** About how many ledger bytes a thread reads and checks per millisecond (an unloaded machine's pace). */
const LEDGER_BYTES_PER_MS = 150_000

/** Whether `p` settles within `ms` milliseconds. */
function arrivesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    p.then(
      () => {
        clearTimeout(timer)
        resolve(true)
      },
      () => {
        clearTimeout(timer)
        resolve(true)
      },
    )
  })
}

/**
 * The upload of `artifact` to read: the highest run attempt not above `current` whose leg.json states
 * that attempt (`run_id` `<id>-<N>`; the plain name, attempt 0, is not checked). Uploads from a later
 * attempt, or whose name and leg.json disagree, are refused (located input errors) and the next one
 * down is taken; `replaces` names the earlier uploads the chosen one stands in for.
 */
async function chooseUpload(
  dir: string,
  entries: readonly string[],
  artifact: string,
  current: number | null,
  workflowRun: string | null,
): Promise<{ name: string | null; attempt: number; replaces: string[]; refused: InputError[] }> {
  const refused: InputError[] = []
  const candidates = uploadCandidates(entries, artifact)
  for (const [i, c] of candidates.entries()) {
    if (current !== null && c.attempt > current) {
      refused.push({
        file: c.name,
        line: null,
        message: `uploaded for run attempt ${c.attempt}, after the current attempt ${current}: refused`,
      })
      continue
    }
    const stated = c.attempt > 0 || workflowRun !== null ? await statedRun(dir, c.name) : null
    // A leg of another workflow run (copied in, or forged) is not read; an unreadable leg.json is
    // reported where it is validated.
    if (workflowRun !== null && stated?.runId != null && stated.run !== workflowRun) {
      refused.push({
        file: `${c.name}/leg.json`,
        line: null,
        message: `its leg.json states run ${JSON.stringify(stated.runId)}, not one of this workflow run ${workflowRun}: refused`,
      })
      continue
    }
    if (c.attempt > 0) {
      const attempt = stated?.attempt ?? null
      if (attempt !== c.attempt) {
        refused.push({
          file: `${c.name}/leg.json`,
          line: null,
          message: `the artifact is named for run attempt ${c.attempt}, its leg.json states ${attempt === null ? 'no run attempt' : `run attempt ${attempt}`}: refused`,
        })
        continue
      }
    }
    return { name: c.name, attempt: c.attempt, replaces: candidates.slice(i + 1).map((o) => o.name), refused }
  }
  return { name: null, attempt: 0, replaces: [], refused }
}

/**
 * What the leg.json of upload `name` states of its run: the run id, its workflow run (the `<run id>`
 * of `<run id>-<attempt>`, else null) and its run attempt (`leg_attempt` when stated, else the run
 * id's suffix), or null when there is no readable leg.json (a missing leg is reported elsewhere).
 */
async function statedRun(
  dir: string,
  name: string,
): Promise<{ runId: string | null; run: string | null; attempt: number | null } | null> {
  const folder = await legFolder(dir, name)
  if (typeof folder !== 'string') return null
  const rel = path.relative(dir, folder).split(path.sep).join('/')
  const r = await readInside(dir, `${rel}/leg.json`)
  if (r === 'missing' || 'refused' in r) return null
  try {
    const leg = JSON.parse(r.bytes.toString('utf8')) as { run_id?: unknown; leg_attempt?: unknown }
    const runId = typeof leg.run_id === 'string' ? leg.run_id : null
    // The run identity's own field when the leg states it, else the run id's attempt suffix.
    const attempt =
      typeof leg.leg_attempt === 'number' && Number.isInteger(leg.leg_attempt) && leg.leg_attempt >= 1
        ? leg.leg_attempt
        : runId === null
          ? null
          : runAttemptOf(runId)
    return { runId, run: runId === null ? null : workflowRunOf(runId), attempt }
  } catch {
    return { runId: null, run: null, attempt: null }
  }
}

/**
 * `<dir>/<artifact>` when it holds attempts.jsonl or leg.json, else its single sub-folder that does;
 * `refused` (with the reason) when the artifact folder is a symbolic link.
 */
async function legFolder(dir: string, artifact: string): Promise<string | null | { refused: string }> {
  const root = path.join(dir, artifact)
  // plan.json is itself an artifact: a name that leads out of the folder (`..`, a symlink) is missing.
  if (path.isAbsolute(artifact) || !isContained(dir, root) || path.resolve(root) === path.resolve(dir))
    return null
  const st = await lstat(root).catch(() => null)
  if (st?.isSymbolicLink())
    return { refused: `${artifact} is a symbolic link: not followed out of the folder` }
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

/**
 * Rows of a leg artifact that belong to another run than its leg.json (pure): an attempt row whose
 * run id the leg does not name (`runs`, else its `run_id`), whose plan differs, or whose leg attempt
 * differs from the leg's for the same run; ledger rows naming another run, another plan or another
 * leg attempt of the leg's run (`ledgerIdentities`: ledgerIdentity keys, a plain run id read as a
 * row without plan and leg attempt); a leg.json of another plan. Each is an input error at
 * file:line, and the blocks it touches are marked incomplete (a ledger mixture: every block of the
 * leg, since its telemetry cannot be trusted). Records and rows without identity fields (written
 * before them) are checked on what they carry.
 */
export function mixedRuns(
  record: LegRecord | null,
  legFile: string,
  attempts: readonly Numbered<AttemptRecord>[],
  attemptsFile: string,
  ledgerIdentities: Map<string, number> | null,
  ledgerFile: string,
  planSha: string | null,
): { errors: InputError[]; invalid: LegArtifact['invalidRows']; dropped: Set<number> } {
  const errors: InputError[] = []
  const invalid: LegArtifact['invalidRows'] = []
  const dropped = new Set<number>()
  if (!record) return { errors, invalid, dropped }
  const runs = new Set(record.runs ?? [record.run_id])
  const legIdent = `run ${record.run_id}${record.leg_attempt ? ` (leg attempt ${record.leg_attempt})` : ''}`
  if (record.plan_sha256 && planSha && record.plan_sha256 !== planSha) {
    errors.push({
      file: legFile,
      line: null,
      message: `leg.json was written under plan ${record.plan_sha256.slice(0, 12)}, the plan read is ${planSha.slice(0, 12)}: the leg's blocks are not compared`,
    })
    for (const a of attempts) {
      dropped.add(a.line)
      invalid.push(invalidOf(a, `${legFile} belongs to another plan`))
    }
    return { errors, invalid, dropped }
  }
  for (const a of attempts) {
    const r = a.value
    let why: string | null = null
    if (!runs.has(r.run_id)) why = `is from run ${r.run_id}`
    else if (r.plan_sha256 && record.plan_sha256 && r.plan_sha256 !== record.plan_sha256)
      why = `is from plan ${r.plan_sha256.slice(0, 12)}`
    else if (
      r.run_id === record.run_id &&
      r.leg_attempt !== undefined &&
      record.leg_attempt !== undefined &&
      r.leg_attempt !== record.leg_attempt
    )
      why = `is from leg attempt ${r.leg_attempt}`
    if (why === null) continue
    const message = `attempt row ${why}, but leg.json is ${legIdent}: one leg artifact mixes runs; the block is not compared`
    errors.push({ file: attemptsFile, line: a.line, message })
    dropped.add(a.line)
    invalid.push(invalidOf(a, `${attemptsFile}:${a.line} ${why} (a mixture of runs, see input errors)`))
  }
  for (const [id, line] of ledgerIdentities ?? []) {
    const [run = '', plan = '', legAttempt = ''] = id.split('\u0000')
    let why: string | null = null
    if (!runs.has(run)) why = `run ${run}`
    else if (plan && record.plan_sha256 && plan !== record.plan_sha256) why = `plan ${plan.slice(0, 12)}`
    else if (
      run === record.run_id &&
      legAttempt &&
      record.leg_attempt !== undefined &&
      Number(legAttempt) !== record.leg_attempt
    )
      why = `leg attempt ${legAttempt}`
    if (why === null) continue
    errors.push({
      file: ledgerFile,
      line: line || null,
      message: `ledger rows are from ${why}, but leg.json is ${legIdent}: one leg artifact mixes runs`,
    })
    // The leg's telemetry cannot be trusted: every block it holds is incomplete.
    for (const a of attempts) {
      if (dropped.has(a.line)) continue
      dropped.add(a.line)
      invalid.push(invalidOf(a, `${ledgerFile} holds rows of ${why} (a mixture of runs)`))
    }
  }
  return { errors, invalid, dropped }
}

function invalidOf(a: Numbered<AttemptRecord>, detail: string): LegArtifact['invalidRows'][number] {
  return { line: a.line, cell: a.value.cell_id, instance: a.value.instance_id, trial: a.value.trial, detail }
}
