import type { TrajectoryEvent } from '../../trajectory/schema.js'

export interface Verification {
  test_runs: number
  /** A test ran after the last edit (the final state was checked). */
  tested_after_final_edit: boolean
  /** The last test run failed and nothing was edited after it: the attempt stopped knowing it fails. */
  stopped_with_known_failures: boolean
}

export function verification(events: TrajectoryEvent[]): Verification {
  const lastEdit = events.findLastIndex((e) => e.kind === 'edit' && e.ok !== false)
  const lastTest = events.findLastIndex((e) => e.kind === 'test')
  const tests = events.filter((e) => e.kind === 'test').length
  return {
    test_runs: tests,
    tested_after_final_edit: lastTest >= 0 && lastTest > lastEdit,
    stopped_with_known_failures: lastTest >= 0 && lastTest > lastEdit && events[lastTest]?.ok === false,
  }
}
