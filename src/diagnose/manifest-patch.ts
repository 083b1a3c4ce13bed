import { isDeepStrictEqual } from 'node:util'
import { Document, isMap, isSeq, parse, parseDocument, type YAMLMap, type YAMLSeq } from 'yaml'

/**
 * The proposed experiment as a real patch: the analyst's `manifest_patch` (YAML naming the candidate
 * cell or cells, e.g. `cells: [{ id: pi-candidate, harness: pi, … }]`) inserted after the last cell of
 * the manifest file, as a unified diff that `git apply` and `patch -p1` apply from the repository root.
 * A candidate cell takes every field it does not set from the cell it derives from (the cell whose id
 * it extends, `<id>-…`, else the one cell with its harness), so a fragment naming only what changes is
 * a whole cell. Nothing else in the file changes: the new lines are added, none rewritten. Pure.
 */
export type ManifestPatch = { ok: true; diff: string; cells: string[] } | { ok: false; reason: string }

export function manifestPatch(input: {
  /** The manifest file's text, exactly as committed. */
  text: string
  /** Its path relative to the repository root, with forward slashes (a/<file>, b/<file>). */
  file: string
  /** The analyst's YAML fragment. */
  fragment: string
}): ManifestPatch {
  const { text, file } = input
  if (pathUnsafe(file)) return { ok: false, reason: `the manifest path ${file} is not inside the repository` }
  let fragment: unknown
  try {
    fragment = parse(input.fragment)
  } catch (e) {
    return { ok: false, reason: `the proposed fragment is not YAML (${(e as Error).message.split('\n')[0]})` }
  }
  const proposed = candidateList(fragment)
  if (!proposed)
    return { ok: false, reason: 'the proposed fragment names no cell (expected `cells:` with a list)' }
  const doc = parseDocument(text)
  if (doc.errors.length > 0) return { ok: false, reason: 'the manifest file does not parse' }
  const cellsNode = doc.get('cells', true)
  if (!isSeq(cellsNode) || cellsNode.flow || cellsNode.items.length === 0)
    return { ok: false, reason: 'the manifest has no block list of cells to add to' }
  const existing = (doc.toJS() as { cells?: Record<string, unknown>[] }).cells ?? []
  const ids = new Set(existing.map((c) => String(c.id)))
  const cells: Record<string, unknown>[] = []
  for (const p of proposed) {
    const id = typeof p.id === 'string' ? p.id : null
    if (!id) return { ok: false, reason: 'a proposed cell has no id' }
    if (ids.has(id))
      return { ok: false, reason: `the proposed cell id ${id} is already a cell of the manifest` }
    const from = parentCell(id, p, existing)
    if (!from) {
      return {
        ok: false,
        reason: `the proposed cell ${id} derives from no cell of the manifest (name it <cell id>-…, or use a harness one cell has)`,
      }
    }
    ids.add(id)
    const cell = { ...structuredClone(from), ...p }
    // A candidate equal to its parent but for the id would compare the same configuration with itself
    // (a change stated only in a YAML comment is no change): no experiment, so no patch.
    if (isDeepStrictEqual({ ...cell, id: from.id }, from))
      return {
        ok: false,
        reason: `the proposed cell ${id} is ${String(from.id)} again: it changes no field (its version, model or config args, env or files), so it would compare ${String(from.id)} with itself; a change stated only in a comment is none`,
      }
    cells.push(cell)
  }
  const added = renderItems(cells, cellsNode, text)
  if (!added) return { ok: false, reason: 'the manifest’s cells list could not be located in the file' }
  return {
    ok: true,
    diff: insertionDiff(file, text, added.afterLine, added.lines),
    cells: cells.map((c) => String(c.id)),
  }
}

function pathUnsafe(file: string): boolean {
  return (
    file === '' || file.startsWith('/') || file.split('/').some((s) => s === '..') || /[\s\t\n]/.test(file)
  )
}

/** The fragment's cells: `cells: [...]`, a bare list of cells, or one cell mapping. */
function candidateList(v: unknown): Record<string, unknown>[] | null {
  const list = Array.isArray(v)
    ? v
    : v && typeof v === 'object' && Array.isArray((v as { cells?: unknown }).cells)
      ? (v as { cells: unknown[] }).cells
      : v && typeof v === 'object' && 'id' in v
        ? [v]
        : null
  if (!list || list.length === 0) return null
  return list.every((c) => c && typeof c === 'object' && !Array.isArray(c))
    ? (list as Record<string, unknown>[])
    : null
}

function parentCell(
  id: string,
  p: Record<string, unknown>,
  cells: Record<string, unknown>[],
): Record<string, unknown> | null {
  const byId = cells
    .filter((c) => id.startsWith(`${String(c.id)}-`))
    .sort((a, b) => String(b.id).length - String(a.id).length)[0]
  if (byId) return byId
  const sameHarness = cells.filter((c) => p.harness !== undefined && c.harness === p.harness)
  return sameHarness.length === 1 ? (sameHarness[0] as Record<string, unknown>) : null
}

/**
 * The new cells as lines of the manifest's cells list (its own indentation), and the 1-based line of
 * the file after which they go: the last line of the last cell (trailing comments stay where they are).
 */
function renderItems(
  cells: Record<string, unknown>[],
  seq: YAMLSeq,
  text: string,
): { afterLine: number; lines: string[] } | null {
  const last = seq.items.at(-1)
  const first = seq.items[0]
  if (!isMap(last) || !isMap(first) || !last.range || !first.range) return null
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length
  const firstLine = text.split('\n')[lineOf(first.range[0]) - 1] ?? ''
  const dash = /^(\s*)-\s/.exec(firstLine)
  if (!dash) return null
  const indent = dash[1] as string
  // The last cell ends at its value's end (range[1]); comments after it belong to what follows.
  const end = (last as YAMLMap).range?.[1] ?? text.length
  let afterLine = lineOf(end)
  if (text[end - 1] === '\n') afterLine -= 1
  const rendered = new Document(cells).toString({ lineWidth: 0 }).replace(/\n$/, '')
  return { afterLine, lines: rendered.split('\n').map((l) => (l === '' ? l : `${indent}${l}`)) }
}

/**
 * A unified diff of one insertion: `lines` after line `after` of `text` (1-based; 0 = at the top),
 * with three lines of context either side, as diff -u writes it.
 */
export function insertionDiff(file: string, text: string, after: number, lines: string[]): string {
  const noNewline = text.length > 0 && !text.endsWith('\n')
  const old = text.split('\n')
  if (!noNewline) old.pop()
  const ctx = 3
  const before = old.slice(Math.max(0, after - ctx), after)
  const rest = old.slice(after, after + ctx)
  const oldStart = after - before.length + 1
  const oldCount = before.length + rest.length
  const newCount = oldCount + lines.length
  const range = (start: number, count: number) => (count === 0 ? `${start - 1},0` : `${start},${count}`)
  const head = [
    `diff --git a/${file} b/${file}`,
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -${range(oldStart, oldCount)} +${range(oldStart, newCount)} @@`,
  ]
  const eof = '\\ No newline at end of file'
  if (noNewline && rest.length === 0 && before.length > 0) {
    // Inserting after a last line that has no newline: that line gains one, the new last line has none.
    const lastOld = before.at(-1) as string
    return `${[
      ...head,
      ...before.slice(0, -1).map((l) => ` ${l}`),
      `-${lastOld}`,
      eof,
      `+${lastOld}`,
      ...lines.map((l) => `+${l}`),
      eof,
    ].join('\n')}\n`
  }
  const out = [
    ...head,
    ...before.map((l) => ` ${l}`),
    ...lines.map((l) => `+${l}`),
    ...rest.map((l) => ` ${l}`),
  ]
  // The file's last line without a newline, shown as context: say so, as diff does.
  if (noNewline && after + rest.length === old.length && rest.length > 0) out.push(eof)
  return `${out.join('\n')}\n`
}
