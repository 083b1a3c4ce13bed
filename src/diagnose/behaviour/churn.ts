import type { TrajectoryEvent } from '../../trajectory/schema.js'

export interface Churn {
  edits: number
  files_edited: number
  /** Edits beyond the first per file: how often the attempt went back to a file it had changed. */
  re_edits: number
  /** Commands that throw edits away (`git checkout -- f`, `git restore`, `git stash`, `git reset --hard`). */
  reversions: number
  event_ids: string[]
}

const REVERT = /\bgit\s+(checkout\s+(--\s+)?\S|restore\b|stash\b|reset\s+--hard)/

/** Edit churn and reversions over an attempt's edits. */
export function churn(events: TrajectoryEvent[]): Churn {
  const perFile = new Map<string, number>()
  let edits = 0
  let reversions = 0
  const ids: string[] = []
  for (const e of events) {
    if (e.command !== null && REVERT.test(e.command)) {
      reversions++
      if (ids.length < 50) ids.push(e.event_id)
      continue
    }
    if (e.kind !== 'edit' || e.ok === false) continue
    edits++
    for (const p of e.paths) {
      const n = (perFile.get(p) ?? 0) + 1
      perFile.set(p, n)
      if (n === 2 && ids.length < 50) ids.push(e.event_id)
    }
  }
  const reEdits = [...perFile.values()].reduce((s, n) => s + (n - 1), 0)
  return { edits, files_edited: perFile.size, re_edits: reEdits, reversions, event_ids: ids }
}
