import type { TrajectoryEvent } from '../../trajectory/schema.js'

export interface FailingLoops {
  /** Runs of ≥ 3 consecutive failing calls of the same tool. */
  loops: number
  /** Longest such run (0 when none failed twice in a row). */
  longest: number
  /** Every failing tool call. */
  failed_calls: number
  /** First event of each loop. */
  event_ids: string[]
}

/** Failing-tool loops: the same tool failing again and again with nothing else in between. */
export function failingLoops(events: TrajectoryEvent[]): FailingLoops {
  let loops = 0
  let longest = 0
  let failed = 0
  let run = 0
  let runTool: string | null = null
  let runStart = ''
  const ids: string[] = []
  const close = () => {
    if (run >= 3) {
      loops++
      ids.push(runStart)
    }
    longest = Math.max(longest, run >= 2 ? run : 0)
  }
  for (const e of events) {
    if (e.tool === null || e.kind === 'other' || e.kind === 'message') continue
    if (e.ok === false) {
      failed++
      if (run > 0 && e.tool === runTool) run++
      else {
        close()
        run = 1
        runTool = e.tool
        runStart = e.event_id
      }
    } else {
      close()
      run = 0
      runTool = null
    }
  }
  close()
  return { loops, longest, failed_calls: failed, event_ids: ids }
}
