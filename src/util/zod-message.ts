import type { z } from 'zod'
import { clip, excerpt, oneLine } from './text.js'

/** `cells[1].harness` style path of a field; `(top level)` for the empty path. */
export function fieldPath(p: readonly PropertyKey[]): string {
  let out = ''
  for (const k of p) {
    if (typeof k === 'number') out += `[${k}]`
    else out += out ? `.${String(k)}` : String(k)
  }
  return out || '(top level)'
}

/** The value at `p` inside `root`, or undefined when the path does not exist. */
export function valueAt(root: unknown, p: readonly PropertyKey[]): unknown {
  let node = root
  for (const k of p) {
    if (node === null || typeof node !== 'object') return undefined
    node = (node as Record<PropertyKey, unknown>)[k as string]
  }
  return node
}

/**
 * One schema problem as `field.path: rule (got <excerpt>)`: the field, the rule it breaks (zod's
 * message) and a short excerpt of the value found (`root` is the value that was validated).
 */
export function issueLine(issue: z.core.$ZodIssue, root: unknown): string {
  const found = valueAt(root, issue.path)
  const got = issue.code === 'unrecognized_keys' || found === undefined ? '' : ` (got ${excerpt(found)})`
  // zod's message can quote input (an unknown key): printable and short like any excerpt.
  return `${clip(oneLine(fieldPath(issue.path)), 120)}: ${clip(oneLine(issue.message), 200)}${got}`
}

/** The first `max` issues of a zod error as `issueLine`s, joined by `; `, with `(+N more)`. */
export function issuesSummary(error: z.ZodError, root: unknown, max = 3): string {
  const lines = error.issues.slice(0, max).map((i) => issueLine(i, root))
  const more = error.issues.length > max ? ` (+${error.issues.length - max} more)` : ''
  return `${lines.join('; ')}${more}`
}
