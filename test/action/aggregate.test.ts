// The action's aggregate step from source, through the real @actions/core: inputs from INPUT_*,
// outputs and the job summary in the files the runner names (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../src/action/main.js'
import type { Plan } from '../../src/plan/schema.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { captureOutput } from '../support/capture.js'

const io = captureOutput()
const KEYS = [
  'INPUT_COMMAND',
  'INPUT_PLAN',
  'INPUT_ARTIFACTS',
  'INPUT_OUT',
  'GITHUB_OUTPUT',
  'GITHUB_STEP_SUMMARY',
]
const saved: Record<string, string | undefined> = {}
// @actions/core remembers the summary file of its first write: one pair of files, emptied per test.
const dir = mkdtempSync(path.join(tmpdir(), 'hw-action-agg-'))
const files = { output: path.join(dir, 'output'), summary: path.join(dir, 'summary.md') }

beforeEach(() => {
  for (const k of KEYS) saved[k] = process.env[k]
  writeFileSync(files.output, '')
  writeFileSync(files.summary, '')
})
afterEach(() => {
  for (const k of KEYS) {
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  }
})

async function aggregateStep(plan: Plan, artifacts: string) {
  const out = mkdtempSync(path.join(tmpdir(), 'hw-action-agg-out-'))
  Object.assign(process.env, {
    INPUT_COMMAND: 'aggregate',
    INPUT_PLAN: writePlan(plan),
    INPUT_ARTIFACTS: artifacts,
    INPUT_OUT: out,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
  })
  await run()
  return {
    failed: process.exitCode === 1,
    summary: readFileSync(files.summary, 'utf8'),
    outputs: readFileSync(files.output, 'utf8'),
    out,
  }
}

describe('action: the aggregate step', () => {
  it('the job summary is the report with its decision', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(10) } })
    const r = await aggregateStep(
      plan,
      writeArtifacts(plan, pairedOutcomes(plan, { both: 8, bOnly: 0, cOnly: 0, neither: 2 })),
    )
    expect(r.failed).toBe(false)
    expect(r.summary).toContain('# Harness Watch — `exp-a`')
    expect(r.summary).toContain('**Decision: ok** — no threshold crossed on complete blocks.')
    expect(r.summary).toBe(`${readFileSync(path.join(r.out, 'report.md'), 'utf8')}\n`)
    expect(r.outputs).toMatch(/status<<.*\nok\n/)
  })

  it('F09: duplicate result rows fail the step with a message naming the files and lines', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 })
    const legA = plan.legs.find((l) => l.cell === 'a')!
    const dup = JSON.stringify(atts.find((a) => a.cell_id === 'a' && a.instance_id === 't-003')!)
    const r = await aggregateStep(
      plan,
      writeArtifacts(plan, atts, { extraLines: { [legA.leg]: [dup, dup] } }),
    )
    expect(r.failed).toBe(true)
    expect(io.out).toContain(
      `::error::aggregation failed: 2 duplicate result row(s) in ${legA.artifact}/attempts.jsonl:5, ${legA.artifact}/attempts.jsonl:6:`,
    )
    // The outputs and the report are still written, with the duplicates listed.
    expect(r.outputs).toMatch(/comparison-path<</)
    expect(r.summary).toContain('## Unreadable input')
    expect(r.summary).toContain('**Decision:')
  })
})
