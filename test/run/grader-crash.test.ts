// A grader that crashes is not a verdict, end to end: a task-tests verifier with no declared contract
// dies of a decode error on the bytes the harness left; the attempt is a grader error, retried as
// infrastructure, never counted as the harness's loss — while a task whose tests simply fail stays
// unresolved. Real leg, real git workspace, real Python grader.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { runLeg } from '../../src/run/leg.js'
import { taskFiles, writePanel } from '../panel/fixture.js'
import { manifestAndPlan, readAttempts, scriptCell, useRunFixture } from './fixture.js'

const fx = useRunFixture()

describe('a verifier without a declared contract that crashes', () => {
  it('is grader_error, retried, never a loss; a plain test failure stays unresolved', async () => {
    const panel = await writePanel({
      // The grader reads the agent's menu as UTF-8 and dies (UnicodeDecodeError, exit 1).
      decode: taskFiles({
        'tests/test.sh': '#!/usr/bin/env bash\npython3 "$HW_TESTS_DIR/grade.py"\n',
        'tests/grade.py': "menu = open('menu.txt', encoding='utf-8').read()\nassert 'café' in menu\n",
      }),
      // answer.txt still says "wrong": grep exits 1, the tests failed.
      plain: taskFiles(),
    })
    const script = path.join(fx.scripts, 'menu.sh')
    writeFileSync(script, "#!/usr/bin/env bash\nprintf 'caf\\351\\n' > menu.txt\necho 'menu written'\n")
    chmodSync(script, 0o755)
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'menu', 'menu.sh')],
      { panel: { source: 'tasks', path: panel }, retries: { max: 1, on: ['infra'], backoff_s: 0 } },
      'grader-crash.yml',
    )
    const artifacts = mkdtempSync(path.join(tmpdir(), 'hw-grader-crash-'))
    const leg = plan.legs[0]!
    const out = path.join(artifacts, leg.artifact)
    const record = await runLeg({
      loaded,
      plan,
      leg: leg.leg,
      outDir: out,
      runId: 'run-1',
      workRoot: fx.work,
    })
    expect(record.status).toBe('complete')
    const rows = readAttempts(out)
    const decode = rows.filter((a) => a.instance_id === 'decode')
    // Retried as infrastructure: two attempts, each a verifier error, never an unresolved outcome.
    expect(decode.map((a) => [a.attempt, a.verifier.status, a.exit.class, a.outcome])).toEqual([
      [1, 'error', 'infra', 'ungraded'],
      [2, 'error', 'infra', 'ungraded'],
    ])
    expect(decode[0]?.exit.reason).toMatch(
      /^verifier crashed: the test\.sh exited 1 on an uncaught exception outside the workspace \(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9/,
    )
    const plain = rows.filter((a) => a.instance_id === 'plain')
    expect(plain.map((a) => [a.attempt, a.verifier.status, a.verifier.exit_code, a.outcome])).toEqual([
      [1, 'fail', 1, 'unresolved'],
    ])

    const planFile = path.join(artifacts, '..', `${path.basename(artifacts)}-plan.json`)
    writeFileSync(planFile, JSON.stringify(plan))
    const r = await aggregate({
      plan: planFile,
      artifacts,
      out: path.join(artifacts, 'report'),
      resamples: 200,
    })
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
    const cell = c.classification!.cells[0]!
    expect(cell.classes).toEqual({ grader_error: 1, unresolved: 1 })
    expect(cell.attempts).toEqual({ grader_error: 2, unresolved: 1 })
    expect([cell.scheduled, cell.evaluated]).toEqual([2, 1])
    expect(c.classification!.denominators.grading).toEqual({ grader_error: 1 })
  })
})
