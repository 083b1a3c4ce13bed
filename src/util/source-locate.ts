import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml'
import type { TextPosition } from './json-text.js'

/** Where a field sits in a source text: 1-based line and column, and its scalar's source when reached. */
export interface FieldPosition extends TextPosition {
  /** The source text of the scalar the path names, or null when the path ends elsewhere. */
  source: string | null
}

/**
 * Line and column (1-based) of the deepest node of a parsed YAML document on path `p` (a zod issue
 * path), or 1:1; a bad key points at the key, a bad value at the value. `source` is the node's text
 * when it is the scalar the path names.
 */
export function locateInDocument(
  root: unknown,
  p: readonly PropertyKey[],
  lc: LineCounter,
  text: string,
): FieldPosition {
  let node = root as Node | null | undefined
  let best = node
  for (const key of p) {
    if (!node) break
    let next: Node | undefined
    if (isMap(node)) {
      const pair = node.items.find((it) => isScalar(it.key) && String(it.key.value) === String(key))
      next = (pair?.value as Node | undefined) ?? (pair?.key as Node | undefined)
    } else if (isSeq(node) && typeof key === 'number') {
      next = node.items[key] as Node | undefined
    }
    if (!next) break
    node = next
    best = next
  }
  const offset = best?.range?.[0] ?? 0
  const reached = best !== root || p.length === 0
  const source = reached && isScalar(best) && best.range ? text.slice(best.range[0], best.range[1]) : null
  return { ...lc.linePos(offset), source }
}

/**
 * A locator for fields of a JSON (or YAML) text that already parsed: path (a zod issue path) → the
 * line and column of the deepest part of it present in the text. JSON is read as the YAML 1.2 it
 * is, so a pretty-printed file's fields get their own lines. Returns null when the text does not
 * parse as one document (the caller then reports without a position).
 */
export function sourceLocator(text: string): ((p: readonly PropertyKey[]) => FieldPosition) | null {
  const lc = new LineCounter()
  let doc: ReturnType<typeof parseDocument>
  try {
    doc = parseDocument(text, { lineCounter: lc, uniqueKeys: false })
  } catch {
    return null
  }
  if (doc.errors.length > 0) return null
  return (p) => locateInDocument(doc.contents, p, lc, text)
}
