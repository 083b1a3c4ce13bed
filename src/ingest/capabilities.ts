import path from 'node:path'
import { betweenCells } from '../capability/diff.js'
import { summarizeCell } from '../capability/summarize.js'
import {
  CAPABILITIES_FILE,
  type CapabilitiesSection,
  type CapabilityManifest,
  CapabilityManifestSchema,
} from '../records/capabilities.js'
import { describeJsonError } from '../util/json-text.js'
import { readInside } from '../util/safe-read.js'
import { sourceLocator } from '../util/source-locate.js'
import { issueLine } from '../util/zod-message.js'
import type { ReadArtifacts } from './artifacts.js'

/** Largest capabilities.json read, bytes (a real one is a few kilobytes). */
const MAX_BYTES = 4 * 1024 * 1024
/** Notes listed one by one before the rest are counted. */
const MAX_NOTES = 10

/**
 * One attempt's capabilities.json, validated: the manifest, `missing`, or why it is ignored, located
 * at file, line and field (a forged or malformed file is a note, never a crash or a guess).
 */
export async function readCapabilityFile(
  root: string,
  rel: string,
  cellId: string,
  folders?: Set<string>,
  absent?: Set<string>,
): Promise<CapabilityManifest | 'missing' | { ignored: string }> {
  const read = await readInside(root, rel, folders, absent)
  if (read === 'missing') return 'missing'
  if ('refused' in read) return { ignored: read.refused }
  if (read.bytes.length > MAX_BYTES) return { ignored: `${rel}: over ${MAX_BYTES} bytes, not read` }
  const text = read.bytes.toString('utf8')
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (e) {
    const { position, reason } = describeJsonError(text, e)
    return { ignored: `${rel}:${position.line}:${position.col}: not valid JSON: ${reason}` }
  }
  const parsed = CapabilityManifestSchema.safeParse(doc)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const at = issue ? sourceLocator(text)?.(issue.path) : null
    const where = at ? `${rel}:${at.line}:${at.col}` : rel
    return { ignored: `${where}: ${issue ? issueLine(issue, doc) : 'does not validate'}` }
  }
  if (parsed.data.cell_id !== cellId)
    return { ignored: `${rel}: cell_id names another cell than its attempt record (${cellId})` }
  return parsed.data
}

/** Runs `tasks` with at most `width` in flight; the results in the tasks' order. */
async function inOrder<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++
      out[i] = await (tasks[i] as () => Promise<T>)()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane))
  return out
}

/** A record's logs folder joined with the leg's folder, or null when it would leave the artifact. */
function attemptFile(folder: string, logsDir: string): string | null {
  const rel = path.posix.join(folder.split(path.sep).join('/'), logsDir, CAPABILITIES_FILE)
  if (path.posix.isAbsolute(logsDir) || rel.startsWith('../') || rel.split('/').includes('..')) return null
  return rel
}

/**
 * The comparison's capability section from the leg artifacts under `root`: each cell's capabilities
 * over its attempts' capabilities.json files (in `cellOrder`), the differences of each cell from
 * `reference` (the baseline) in one line each, and notes for files that are absent or ignored;
 * null when no attempt has one (artifacts written before capability manifests).
 */
export async function readCapabilities(
  read: ReadArtifacts,
  root: string,
  cellOrder: string[],
  reference: string | null,
): Promise<CapabilitiesSection | null> {
  const byCell = new Map<string, CapabilityManifest[]>()
  const missing = new Map<string, number>()
  const ignored: string[] = []
  // The leg, logs and instance folders are shared by many attempts: each is checked once, whether
  // it is there or not.
  const folders = new Set<string>()
  const absent = new Set<string>()
  const jobs: { cell: string; read: () => Promise<CapabilityManifest | 'missing' | { ignored: string }> }[] =
    []
  for (const leg of read.legs) {
    for (const { value: a } of leg.attempts) {
      const rel = attemptFile(leg.folder, a.logs_dir)
      const where = `${path.basename(leg.folder)} ${a.cell_id} ${a.instance_id} trial ${a.trial} attempt ${a.attempt}`
      jobs.push({
        cell: a.cell_id,
        read: () =>
          rel === null
            ? Promise.resolve({ ignored: `${where}: its logs folder leaves the artifact, not read` })
            : readCapabilityFile(root, rel, a.cell_id, folders, absent),
      })
    }
  }
  // Read a few files at a time (a large run has tens of thousands), results kept in attempt order.
  const results = await inOrder(
    jobs.map((j) => j.read),
    16,
  )
  results.forEach((got, i) => {
    const cell = (jobs[i] as (typeof jobs)[number]).cell
    if (got === 'missing') missing.set(cell, (missing.get(cell) ?? 0) + 1)
    else if ('ignored' in got) ignored.push(got.ignored)
    else {
      const list = byCell.get(cell)
      if (list) list.push(got)
      else byCell.set(cell, [got])
    }
  })
  // Artifacts of an earlier version hold no capabilities.json at all: nothing to say, no section.
  if (byCell.size === 0 && ignored.length === 0) return null
  const cells = cellOrder
    .map((id) => summarizeCell(id, byCell.get(id) ?? []))
    .filter((c): c is NonNullable<typeof c> => c !== null)
  const notes: string[] = []
  for (const [cell, n] of missing)
    notes.push(
      `cell ${cell}: ${n} attempt(s) without ${CAPABILITIES_FILE} (written by an earlier version, or lost): their capabilities are unknown`,
    )
  for (const why of ignored.slice(0, MAX_NOTES)) notes.push(`ignored ${why}`)
  if (ignored.length > MAX_NOTES)
    notes.push(`… ${ignored.length - MAX_NOTES} more ${CAPABILITIES_FILE} file(s) ignored`)
  return { cells, differences: betweenCells(cells, reference), notes }
}
