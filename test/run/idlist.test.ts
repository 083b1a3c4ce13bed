import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { sweBenchVerdict } from '../../src/run/instances.js'
import { runLeg } from '../../src/run/leg.js'
import { manifestAndPlan, readAttempts, useRunFixture } from './fixture.js'

// An id-list panel (SWE-bench style): `benchmark.setup` prepares each workspace and writes the prompt
// to {out}/instruction.md; `benchmark.verifier.command` grades the patch (here: a SWE-bench-shaped
// report for one instance, the exit code for the other).

const fx = useRunFixture()
let bin: string
beforeAll(() => {
  bin = path.join(fx.root, 'bin')
  mkdirSync(bin, { recursive: true })
  const sh = (name: string, body: string): void => {
    writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\nset -eu\n${body}\n`)
    chmodSync(path.join(bin, name), 0o755)
  }
  // setup.sh <instance> <workspace> <out>
  sh(
    'setup.sh',
    `printf 'value = 1\\n' > "$2/calc.txt"\nmkdir -p "$3"\nprintf 'Make calc.txt say value = 2 (%s)\\n' "$1" > "$3/instruction.md"`,
  )
  // grade.sh <instance> <patch> <predictions> <out>: report JSON for rep-*, exit code otherwise.
  sh(
    'grade.sh',
    `grep -q '"instance_id":"'"$1"'"' "$3"\nok=0; grep -q '^+value = 2' "$2" && ok=1\nif [ "\${1#rep-}" != "$1" ]; then\n  if [ $ok = 1 ]; then r='"resolved_ids":["'"$1"'"],"unresolved_ids":[]'; else r='"resolved_ids":[],"unresolved_ids":["'"$1"'"]'; fi\n  echo "{$r}" > "$4/model.run.json"\n  exit 0\nfi\n[ $ok = 1 ]`,
  )
  sh('fix.sh', `printf 'value = 2\\n' > calc.txt`)
})

describe('id-list panels', () => {
  it('prepares with the setup template, runs the harness, grades the patch with the verifier template', async () => {
    const cells = [
      { id: 'fixer', harness: 'command', version: '1', config: { command: `bash ${bin}/fix.sh` } },
      { id: 'idle', harness: 'command', version: '1', config: { command: 'true' } },
    ]
    const { loaded, plan } = await manifestAndPlan(
      fx,
      cells,
      {
        panel: { source: 'inline', instances: ['rep-1', 'code-1'] },
        benchmark: {
          family: 'fixture-ids',
          revision: 'r1',
          setup: `bash ${bin}/setup.sh {instance} {workspace} {out}`,
          verifier: {
            kind: 'command',
            command: `bash ${bin}/grade.sh {instance} {patch} {predictions} {out}`,
            timeout_s: 30,
            contract: 'exit_codes',
            exit_codes: { pass: [0], fail: [1] },
          },
        },
      },
      'idlist.yml',
    )
    for (const cell of ['fixer', 'idle']) {
      const dir = path.join(fx.root, 'out', `ids-${cell}`)
      const leg = await runLeg({
        loaded,
        plan,
        leg: `${cell}-s0`,
        outDir: dir,
        runId: 'r',
        workRoot: fx.work,
      })
      expect(leg.status).toBe('complete')
      const attempts = readAttempts(dir)
      expect(attempts.map((a) => a.instance_id).sort()).toEqual(['code-1', 'rep-1'])
      for (const a of attempts) {
        expect(a.exit.class).toBe('clean')
        expect(a.outcome).toBe(cell === 'fixer' ? 'resolved' : 'unresolved')
        expect(a.verifier.status).toBe(cell === 'fixer' ? 'pass' : 'fail')
        const logs = path.join(dir, a.logs_dir)
        expect(readFileSync(path.join(logs, 'setup.log'), 'utf8')).toBe('')
        if (cell === 'fixer')
          expect(readFileSync(path.join(logs, 'patch.diff'), 'utf8')).toContain('+value = 2')
      }
    }
  })

  it('verifier.reports: an instance the report does not name is ungraded, never read from the exit code', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [{ id: 'fixer', harness: 'command', version: '1', config: { command: `bash ${bin}/fix.sh` } }],
      {
        panel: { source: 'inline', instances: ['rep-1', 'code-1'] },
        benchmark: {
          family: 'fixture-ids',
          revision: 'r1',
          setup: `bash ${bin}/setup.sh {instance} {workspace} {out}`,
          verifier: {
            kind: 'command',
            command: `bash ${bin}/grade.sh {instance} {patch} {predictions} {out}`,
            timeout_s: 30,
            reports: true,
          },
        },
        retries: { max: 0, on: ['infra'], backoff_s: 0 },
      },
      'idlist-reports.yml',
    )
    const dir = path.join(fx.root, 'out', 'ids-reports')
    await runLeg({ loaded, plan, leg: 'fixer-s0', outDir: dir, runId: 'r', workRoot: fx.work })
    const byId = Object.fromEntries(readAttempts(dir).map((a) => [a.instance_id, a]))
    expect(byId['rep-1']).toMatchObject({ outcome: 'resolved', verifier: { status: 'pass' } })
    // grade.sh exits 0 for code-1 (the fix is right) but writes no report: exit 0 is not a verdict.
    expect(byId['code-1']).toMatchObject({ outcome: 'ungraded', verifier: { status: 'error', exit_code: 0 } })
    expect(byId['code-1']!.exit.reason).toMatch(/the grader wrote no report naming code-1 \(exit 0\)/)
  })

  it('the default contract (reward_file): a grader that dies is grader_error, retried, never a loss', async () => {
    // grade-crash.sh: a Python-style grader — crashes on the agent's bytes (exit 1, a traceback) for
    // crash-*, writes a reward otherwise. Exit 1 is what a failing test run also gives.
    writeFileSync(
      path.join(bin, 'grade-crash.sh'),
      `#!/usr/bin/env bash\nif [ "\${1#crash-}" != "$1" ]; then echo 'UnicodeDecodeError: invalid start byte' >&2; exit 1; fi\ngrep -q '^+value = 2' "$2" && echo 1 > "$HW_REWARD_FILE" || echo 0 > "$HW_REWARD_FILE"\n`,
    )
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [{ id: 'fixer', harness: 'command', version: '1', config: { command: `bash ${bin}/fix.sh` } }],
      {
        panel: { source: 'inline', instances: ['crash-1', 'ok-1'] },
        benchmark: {
          family: 'fixture-ids',
          revision: 'r1',
          setup: `bash ${bin}/setup.sh {instance} {workspace} {out}`,
          verifier: {
            kind: 'command',
            command: `bash ${bin}/grade-crash.sh {instance} {patch}`,
            timeout_s: 30,
          },
        },
        retries: { max: 1, on: ['infra'], backoff_s: 0 },
      },
      'idlist-crash.yml',
    )
    const dir = path.join(fx.root, 'out', 'ids-crash')
    await runLeg({ loaded, plan, leg: 'fixer-s0', outDir: dir, runId: 'r', workRoot: fx.work })
    const attempts = readAttempts(dir)
    const crash = attempts.filter((a) => a.instance_id === 'crash-1')
    // Retried once (a verifier crash counts as infra), both ungraded: never an unresolved attempt.
    expect(crash.map((a) => [a.attempt, a.outcome, a.verifier.status, a.verifier.exit_code])).toEqual([
      [1, 'ungraded', 'error', 1],
      [2, 'ungraded', 'error', 1],
    ])
    expect(crash[0]!.exit.reason).toMatch(
      /wrote no reward \(exited 1\): grader error, never read as a failure/,
    )
    const ok = attempts.filter((a) => a.instance_id === 'ok-1')
    expect(ok.map((a) => [a.outcome, a.verifier.reward])).toEqual([['resolved', 1]])
  })

  it('is an infra error (retried per the manifest) when setup fails or writes no prompt', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [{ id: 'fixer', harness: 'command', version: '1', config: { command: `bash ${bin}/fix.sh` } }],
      {
        panel: { source: 'inline', instances: ['x-1'] },
        benchmark: {
          family: 'fixture-ids',
          revision: 'r1',
          setup: 'echo preparing {instance}',
          verifier: { kind: 'command', command: 'true', timeout_s: 30 },
        },
        retries: { max: 1, on: ['infra'], backoff_s: 0 },
      },
      'idlist-bad.yml',
    )
    const dir = path.join(fx.root, 'out', 'ids-bad')
    await runLeg({ loaded, plan, leg: 'fixer-s0', outDir: dir, runId: 'r', workRoot: fx.work })
    const attempts = readAttempts(dir)
    expect(attempts.map((a) => [a.attempt, a.final, a.exit.class, a.outcome])).toEqual([
      [1, false, 'infra', 'infra_error'],
      [2, true, 'infra', 'infra_error'],
    ])
    expect(attempts[0]?.exit.reason).toMatch(/setup wrote no prompt/)
    expect(readFileSync(path.join(dir, attempts[0]?.logs_dir ?? '', 'setup.log'), 'utf8')).toBe(
      'preparing x-1\n',
    )
  })

  it('reads a SWE-bench run report', async () => {
    const dir = path.join(fx.root, 'report')
    mkdirSync(path.join(dir, 'sub'), { recursive: true })
    writeFileSync(
      path.join(dir, 'sub', 'm.r.json'),
      JSON.stringify({
        resolved_ids: ['a'],
        unresolved_ids: ['b'],
        error_ids: ['c'],
        empty_patch_ids: ['d'],
      }),
    )
    expect(await sweBenchVerdict(dir, 'a')).toEqual({ status: 'pass', reason: null })
    expect(await sweBenchVerdict(dir, 'b')).toEqual({ status: 'fail', reason: null })
    expect(await sweBenchVerdict(dir, 'd')).toEqual({ status: 'fail', reason: null })
    expect((await sweBenchVerdict(dir, 'c'))?.status).toBe('error')
    // a report that leaves the instance out: the grader dropped it — ungraded, never a verdict
    expect(await sweBenchVerdict(dir, 'zzz')).toEqual({
      status: 'error',
      reason: 'the grader report sub/m.r.json does not list the instance (dropped)',
    })
    expect(await sweBenchVerdict(path.join(fx.root, 'no-report'), 'a')).toBeNull()
  })
})
