import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml'
import type { z } from 'zod'
import { HwError } from '../util/errors.js'
import { canonicalJson, sha256 } from '../util/json.js'
import { quotePath } from '../util/paths.js'
import { locateInDocument } from '../util/source-locate.js'
import { clip, oneLine } from '../util/text.js'
import { fieldPath } from '../util/zod-message.js'
import { type Cell, cellApi, cellRoute, type Manifest, ManifestSchema, runnableProblems } from './schema.js'

/** A manifest read from disk and validated: the text, its sha256, the typed value, and cell config hashes. */
export interface LoadedManifest {
  /** Path as given by the user (used in messages). */
  file: string
  /** Absolute folder of the manifest; relative paths in it resolve against this. */
  dir: string
  /** sha256 hex of the file's bytes. */
  sha256: string
  manifest: Manifest
  /** cell id → sha256 hex of the cell's canonical {harness, version, api, config}. */
  configHashes: Record<string, string>
  /**
   * `file:line:column` of the field at `path` (of the deepest part of it present in the file), for
   * messages about a field found wrong after loading. Absent when the manifest was not read from a file.
   */
  locate?: (path: readonly PropertyKey[]) => string
}

/** Options of {@link loadManifest} and {@link parseManifestText}. */
export interface LoadOptions {
  /**
   * Also refuse pairings a leg cannot run (see `runnableProblems`: task-tests grading on an id list,
   * an id list without benchmark.setup). Set by the commands that plan or run legs.
   */
  runnable?: boolean
}

/**
 * Read and validate a manifest (YAML or JSON). Throws HwError `manifest_invalid` whose details are one
 * line per problem, each `file:line:column field.path: message`; `manifest_unreadable` when the file
 * cannot be read.
 */
export async function loadManifest(file: string, opts: LoadOptions = {}): Promise<LoadedManifest> {
  let text: string
  try {
    const bytes = await readFile(file)
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      const at = firstInvalidUtf8(bytes)
      let line = 1
      let col = 1
      for (let i = 0; i < at; i++) {
        if (bytes[i] === 10) {
          line++
          col = 1
        } else if (((bytes[i] as number) & 0xc0) !== 0x80) col++
      }
      const hex = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0')
      throw new HwError('manifest_invalid', `not UTF-8 text: byte 0x${hex} is not valid UTF-8`, {
        where: quotePath(`${file}:${line}:${col}`),
        help: 'save the manifest as UTF-8 (YAML and JSON manifests must be UTF-8)',
      })
    }
  } catch (e) {
    if (e instanceof HwError) throw e
    throw new HwError(
      'manifest_unreadable',
      `cannot read manifest: ${(e as NodeJS.ErrnoException).code ?? e}`,
      {
        where: quotePath(file),
        help: 'pass the path of a manifest file (YAML or JSON)',
      },
    )
  }
  const { manifest, locate } = parseManifest(text, file, opts)
  return {
    file,
    dir: path.resolve(path.dirname(file)),
    sha256: sha256(text),
    manifest,
    configHashes: Object.fromEntries(manifest.cells.map((c) => [c.id, configHash(c, manifest)])),
    locate,
  }
}

/** Parse and validate manifest text; `file` is only used in messages. Throws HwError `manifest_invalid`. */
export function parseManifestText(text: string, file: string, opts: LoadOptions = {}): Manifest {
  return parseManifest(text, file, opts).manifest
}

function parseManifest(
  text: string,
  file: string,
  opts: LoadOptions,
): { manifest: Manifest; locate: (p: readonly PropertyKey[]) => string } {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true })
  if (doc.errors.length > 0) {
    const details = doc.errors.map((e) => {
      const pos = e.linePos?.[0]
      const where = quotePath(pos ? `${file}:${pos.line}:${pos.col}` : file)
      if (e.code === 'DUPLICATE_KEY')
        return `${where} ${duplicateKeyMessage(doc.contents, e.pos[0], lineCounter)}`
      return `${where} ${(e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`
    })
    throw new HwError('manifest_invalid', `${quotePath(file)}: not valid YAML/JSON`, {
      details,
      help: 'fix the syntax at the position shown',
    })
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: 100 })
  } catch (e) {
    // An alias bomb (aliases expanding to an exponential document) stops here, named with the file.
    throw new HwError('manifest_invalid', `${quotePath(file)}: not a usable YAML document`, {
      details: [`${quotePath(file)} ${clip(oneLine((e as Error).message), 200)}`],
      help: 'write the values out, or use fewer YAML aliases (at most 100 expansions)',
    })
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HwError('manifest_invalid', `${quotePath(file)}: expected a mapping at the top level`, {
      help: 'a manifest starts with schema_version, experiment, model, benchmark, panel, cells, baseline',
    })
  }
  const where = (p: readonly PropertyKey[]): string => {
    const { line, col } = locateInDocument(doc.contents, p, lineCounter, text)
    return quotePath(`${file}:${line}:${col}`)
  }
  const result = ManifestSchema.safeParse(value, { reportInput: true })
  if (result.success) {
    const problems = opts.runnable ? runnableProblems(result.data) : []
    if (problems.length === 0) return { manifest: result.data, locate: where }
    throw new HwError(
      'manifest_invalid',
      `${quotePath(file)}: ${problems.length} problem(s) in the manifest`,
      {
        details: problems.map((p) => `${where(p.path)} ${fieldPath(p.path)}: ${p.message}`),
        help: 'task folders (panel.source tasks or builtin) grade with their tests; id lists need benchmark.setup and a command verifier',
      },
    )
  }
  const details = result.error.issues.flatMap((issue) => {
    // An unknown key is placed at its own line, with the nearest known key of its mapping suggested.
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeys(ManifestSchema, issue.path)
      return issue.keys.map((key) => {
        const at = [...issue.path, key]
        const { line, col } = locateInDocument(doc.contents, at, lineCounter, text)
        const near = nearestKey(key, known)
        return `${quotePath(`${file}:${line}:${col}`)} ${fieldPath(at)}: unknown field "${key}"${near ? ` (did you mean "${near}"?)` : ''}`
      })
    }
    const { line, col, source } = locateInDocument(doc.contents, issue.path, lineCounter, text)
    return [
      `${quotePath(`${file}:${line}:${col}`)} ${fieldPath(issue.path)}: ${describeIssue(issue, source)}`,
    ]
  })
  throw new HwError('manifest_invalid', `${quotePath(file)}: ${details.length} problem(s) in the manifest`, {
    details,
    help: 'see manifests/schema.json or the README manifest reference',
  })
}

/**
 * `duplicate key "id" (first at line 3, column 3): …` for the repeated key starting at `offset`: the
 * mapping holding it is found in the document and its earlier key of the same value is the first use.
 */
function duplicateKeyMessage(root: unknown, offset: number, lc: LineCounter): string {
  const found = findDuplicate(root, offset)
  if (!found) return 'duplicate key: keys in one mapping must be unique'
  const first = found.first !== null ? lc.linePos(found.first) : null
  return (
    `duplicate key "${found.key}"${first ? ` (first at line ${first.line}, column ${first.col})` : ''}: ` +
    'keys in one mapping must be unique'
  )
}

/** The key whose node starts at `offset` and the offset of the same key's first use in its mapping. */
function findDuplicate(node: unknown, offset: number): { key: string; first: number | null } | null {
  if (isMap(node)) {
    const at = node.items.findIndex((it) => (it.key as Node | null)?.range?.[0] === offset)
    if (at >= 0) {
      const key = node.items[at]?.key
      const value = isScalar(key) ? String(key.value) : String(key)
      const first = node.items.find((it, i) => i < at && isScalar(it.key) && String(it.key.value) === value)
      return { key: value, first: (first?.key as Node | undefined)?.range?.[0] ?? null }
    }
    for (const it of node.items) {
      const r = findDuplicate(it.value, offset)
      if (r) return r
    }
  } else if (isSeq(node)) {
    for (const it of node.items) {
      const r = findDuplicate(it, offset)
      if (r) return r
    }
  }
  return null
}

export { fieldPath }

function describeIssue(issue: z.core.$ZodIssue, source: string | null): string {
  switch (issue.code) {
    case 'invalid_type': {
      const input = (issue as { input?: unknown }).input
      if (input === undefined) return `required field is missing (expected ${issue.expected})`
      if (issue.expected === 'string' && (typeof input === 'number' || typeof input === 'boolean')) {
        // YAML reads 1.0 as a number and yes as a boolean: the fix is quoting.
        return `expected a string, got ${describeValue(input)} (write it in quotes, e.g. "${source ?? String(input)}")`
      }
      return `expected ${issue.expected === 'int' ? 'an integer' : issue.expected}, got ${describeValue(input)}`
    }
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
    default:
      return issue.message
  }
}

/** The keys a mapping at `at` may hold, read from the schema (objects, lists, optional/default/nullable wrappers). */
function knownKeys(schema: z.ZodType, at: readonly PropertyKey[]): string[] {
  let node = unwrap(schema)
  for (const part of at) {
    const def = (node as unknown as { _zod: { def: Record<string, unknown> } })._zod.def
    if (def.type === 'array') node = unwrap(def.element as z.ZodType)
    else if (def.type === 'object') {
      const next = (def.shape as Record<string, z.ZodType>)[String(part)]
      if (!next) return []
      node = unwrap(next)
    } else return []
  }
  const def = (node as unknown as { _zod: { def: Record<string, unknown> } })._zod.def
  return def.type === 'object' ? Object.keys(def.shape as object) : []
}

function unwrap(t: z.ZodType): z.ZodType {
  let node = t
  for (let i = 0; i < 10; i++) {
    const def = (node as unknown as { _zod: { def: Record<string, unknown> } })._zod.def
    const inner = (def.innerType ?? (def.type === 'pipe' ? def.in : undefined)) as z.ZodType | undefined
    if (!inner) return node
    node = inner
  }
  return node
}

/** The known key nearest to `key` (edit distance ≤ a third of its length, at least 2), or null. */
export function nearestKey(key: string, known: string[]): string | null {
  let best: string | null = null
  let bestD = Math.max(2, Math.floor(key.length / 3)) + 1
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase())
    if (d < bestD) {
      best = k
      bestD = d
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      cur.push(Math.min(sub, (prev[j] as number) + 1, (cur[j - 1] as number) + 1))
    }
    prev = cur
  }
  return prev[b.length] as number
}

/** A short, quoted rendering of a bad value for messages (`"two"`, `1.5`, `a list`). */
function describeValue(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'a list'
  if (typeof v === 'object') return 'a mapping'
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v)
  const text = JSON.stringify(v) ?? String(v)
  return text.length > 60 ? `${text.slice(0, 57)}…` : text
}

/** sha256 hex of the canonical JSON of what makes a cell behave: harness, version, wire API, config. */
export function configHash(cell: Cell, m: Manifest): string {
  return sha256(
    canonicalJson({
      harness: cell.harness,
      version: cell.version,
      api: cellApi(cell, cellRoute(m, cell)),
      config: cell.config,
    }),
  )
}

/** 0-based offset of the first byte that does not start or continue a UTF-8 sequence (a locator). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0
  while (i < b.length) {
    const c = b[i] as number
    const n =
      c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1
    if (n < 0) return i
    for (let k = 1; k <= n; k++) if (i + k >= b.length || ((b[i + k] as number) & 0xc0) !== 0x80) return i
    i += n + 1
  }
  return i
}
