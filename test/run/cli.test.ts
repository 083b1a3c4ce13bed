import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'
import { manifestAndPlan, readAttempts, readLegJson, scriptCell, useRunFixture } from './fixture.js'

const fx = useRunFixture()

const io = captureOutput()

/** `harness-watch run <manifest> --plan <plan> --leg solver-s0 --out <dir> [extra…]`; the exit code. */
function runSolverLeg(file: string, planFile: string, dir: string, ...extra: string[]): Promise<number> {
  return main(['run', file, '--plan', planFile, '--leg', 'solver-s0', '--out', dir, ...extra])
}

describe('harness-watch run', () => {
  it('runs one leg with the scripted model behind the proxy and prints a line per attempt and a summary', async () => {
    const { file, plan } = await manifestAndPlan(fx, [scriptCell(fx, 'solver', 'solve.sh')], {}, 'cli.yml')
    const planFile = path.join(fx.root, 'cli-plan.json')
    writeFileSync(planFile, JSON.stringify(plan))
    const dir = path.join(fx.root, 'out', 'cli')
    const code = await runSolverLeg(file, planFile, dir, '--work-root', fx.work)
    expect(code).toBe(0)
    const err = io.err
    expect(err).toMatch(/^\[1\/3\] solver \S+ trial 0 attempt 1: resolved \(clean\) /m)
    expect(err).toMatch(/^\[3\/3\] solver /m)
    // The solver sends no model request: telemetry is captured and found missing, never zero.
    expect(err).toMatch(/requests unknown, spend unknown, telemetry missing/)
    expect(err).toMatch(
      /^leg solver-s0 complete: 3\/3 resolved, 0 unresolved, 0 infra_error, 0 ungraded; 3 attempts/m,
    )
    expect(io.out).toContain(`wrote ${dir} (artifact hw-run-fixture-solver-0, leg complete)`)
    expect(readAttempts(dir)).toHaveLength(3)
    expect(readLegJson(dir).telemetry_source).toBe('ledger')
  })

  it('exits 2 with the reason when the plan is stale (the manifest changed after planning)', async () => {
    const { file, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      {},
      'cli-stale.yml',
    )
    const planFile = path.join(fx.root, 'cli-stale-plan.json')
    writeFileSync(planFile, JSON.stringify(plan))
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited\n`)
    const code = await runSolverLeg(file, planFile, path.join(fx.root, 'x'))
    expect(code).toBe(2)
    expect(io.err).toMatch(/the plan is stale: .*config drift/)
  })
})
