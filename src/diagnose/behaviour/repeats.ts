import type { TrajectoryEvent } from '../../trajectory/schema.js'

/** Events that did again what an earlier event did, with the same output. */
export interface Repeats {
  /** Reads of a file set already read, whose output was unchanged (or unknown on both). */
  repeated_reads: number
  /** Commands run again with byte-identical output. */
  unchanged_commands: number
  /** The event ids of those repeats, in order (at most 50). */
  event_ids: string[]
}

/** Repeated reads and commands with unchanged output (same paths/command and same output hash). */
export function repeats(events: TrajectoryEvent[]): Repeats {
  const seen = new Set<string>()
  let reads = 0
  let commands = 0
  const ids: string[] = []
  for (const e of events) {
    let key: string | null = null
    if (e.kind === 'read' && e.paths.length > 0)
      key = `r|${[...e.paths].sort().join('\0')}|${e.output_sha256}`
    else if (e.command !== null && e.output_sha256 !== null) key = `c|${e.command.trim()}|${e.output_sha256}`
    if (key === null) continue
    if (seen.has(key)) {
      if (key.startsWith('r|')) reads++
      else commands++
      if (ids.length < 50) ids.push(e.event_id)
    } else seen.add(key)
  }
  return { repeated_reads: reads, unchanged_commands: commands, event_ids: ids }
}
