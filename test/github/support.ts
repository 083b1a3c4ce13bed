// Shared helpers for the GitHub tests: decisions built from small comparison fixtures, and a client
// pointed at the fake GitHub without throttling delays (one test keeps them on).
import { confirm } from '../../src/detect/confirm.js'
import { selectConfirmation } from '../../src/detect/confirm-plan.js'
import { detect } from '../../src/detect/decide.js'
import type { Decision } from '../../src/detect/schema.js'
import { makeOctokit } from '../../src/github/octokit.js'
import type { RenderContext } from '../../src/github/render.js'
import { type CellSpec, makeComparison, policy, ref, rows } from '../detect/fixtures.js'

export const repo = { owner: 'acme', repo: 'widgets' }

export function client(url: string, token = 'test-token') {
  return makeOctokit({ token, baseUrl: url, throttle: false, retries: 0 })
}

const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })

export const breachingComparison = makeComparison({
  cells: ['a', 'b'],
  runId: 'run-7',
  rows: rows(30, (i) => (i < 6 ? { a: r(), b: u() } : { a: r(), b: r() })),
})
export const cleanComparison = makeComparison({
  cells: ['a', 'b'],
  runId: 'run-8',
  rows: rows(30, () => ({ a: r(), b: r() })),
})

/** A first-run decision: `breach` (unconfirmed) for the breaching fixture, `ok` for the clean one. */
export function firstRun(c = breachingComparison): Decision {
  const d = detect({ current: ref(c), policy, quarantine: [] })
  const sel = selectConfirmation(d, 50)
  d.affected_blocks = sel.instances
  d.confirmation = {
    round: 1,
    plan: 'confirm-1/plan.json',
    seed: 3,
    cells: sel.cells,
    instances: sel.instances,
    legs: 2,
    capped: false,
  }
  return d
}

/** A confirmed (or, with `holds = false`, cleared) decision for the breaching fixture. */
export function confirmedRun(holds = true, runId = 'run-7'): Decision {
  const original = firstRun()
  const rerun = makeComparison({
    cells: ['a', 'b'],
    runId,
    round: 1,
    rows: Object.fromEntries(original.affected_blocks.map((id) => [id, { a: r(), b: holds ? u() : r() }])),
  })
  return confirm({
    original,
    originalComparison: breachingComparison,
    rerun: ref(rerun, 'confirm-1/comparison.json'),
    originalRef: ref(breachingComparison, '../comparison.json'),
  })
}

export function ctx(
  decision: Decision,
  reportUrl = 'https://github.com/acme/widgets/actions/runs/7',
): RenderContext {
  return { decision, comparison: breachingComparison, reportUrl }
}
