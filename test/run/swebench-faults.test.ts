import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { attemptRunId } from '../../src/run/instances.js'
import { runLeg } from '../../src/run/leg.js'
import { manifestAndPlan, readAttempts, useRunFixture } from './fixture.js'

// A stand-in for `python -m swebench.harness.run_evaluation` that behaves as the harness does where it
// hurts: it skips an instance whose report already exists under logs/run_evaluation/<run_id>/<model>/
// <instance>/report.json (reusing that verdict), and with --fault ignore-report-dir it writes its run
// report into its own working folder instead of --report_dir (as make_run_report does in some versions).
// It resolves an instance when the predicted patch sets value = 2.
const STAND_IN = `import argparse, json, os, sys
p = argparse.ArgumentParser()
for a in ("--dataset_name", "--instance_ids", "--predictions_path", "--run_id", "--report_dir", "--state"):
    p.add_argument(a)
p.add_argument("--fault", default="")
a = p.parse_args()
pred = json.loads(open(a.predictions_path).readline())
model, inst = pred["model_name_or_path"], a.instance_ids
cache = os.path.join(a.state, "logs", "run_evaluation", a.run_id, model, inst)
log = open(os.path.join(a.state, "calls.log"), "a")
if os.path.exists(os.path.join(cache, "report.json")):
    resolved = json.load(open(os.path.join(cache, "report.json")))[inst]["resolved"]
    log.write("reused %s\\n" % a.run_id)
else:
    resolved = "+value = 2" in pred["model_patch"]
    os.makedirs(cache, exist_ok=True)
    json.dump({inst: {"resolved": resolved}}, open(os.path.join(cache, "report.json"), "w"))
    log.write("evaluated %s\\n" % a.run_id)
report = {"total_instances": 1, "submitted_ids": [inst], "completed_ids": [inst],
          "resolved_ids": [inst] if resolved else [], "unresolved_ids": [] if resolved else [inst],
          "empty_patch_ids": [], "error_ids": []}
dest = a.state if a.fault == "ignore-report-dir" else a.report_dir
json.dump(report, open(os.path.join(dest, "%s.%s.json" % (model, a.run_id)), "w"))
sys.exit(0)
`

const fx = useRunFixture()
let bin: string
let state: string
beforeAll(() => {
  bin = path.join(fx.root, 'swebench-bin')
  state = path.join(fx.root, 'swebench-state')
  mkdirSync(bin, { recursive: true })
  mkdirSync(state, { recursive: true })
  writeFileSync(path.join(bin, 'run_evaluation.py'), STAND_IN)
  const sh = (name: string, body: string): void => {
    writeFileSync(path.join(bin, name), `#!/usr/bin/env bash\nset -eu\n${body}\n`)
    chmodSync(path.join(bin, name), 0o755)
  }
  sh(
    'setup.sh',
    `printf 'value = 1\\n' > "$2/calc.txt"\nmkdir -p "$3"\nprintf 'Make calc.txt say value = 2\\n' > "$3/instruction.md"`,
  )
})

async function run(name: string, fault: string, trials = 1) {
  const { loaded, plan } = await manifestAndPlan(
    fx,
    [{ id: 'idle', harness: 'command', version: '1', config: { command: 'true' } }],
    {
      panel: { source: 'inline', instances: ['astropy__astropy-12907'] },
      trials,
      benchmark: {
        family: 'swe-bench-verified',
        revision: 'r1',
        setup: `bash ${bin}/setup.sh {instance} {workspace} {out}`,
        verifier: {
          kind: 'command',
          command: `python3 ${bin}/run_evaluation.py --dataset_name d --instance_ids {instance} --predictions_path {predictions} --run_id {run_id} --report_dir {out} --state ${state} --fault ${fault}`,
          timeout_s: 60,
          reports: true,
        },
      },
      sandbox: { host_commands: true },
      retries: { max: 0, on: ['infra'], backoff_s: 0 },
    },
    `${name}.yml`,
  )
  const dir = path.join(fx.root, 'out', name)
  await runLeg({ loaded, plan, leg: 'idle-s0', outDir: dir, runId: 'r', workRoot: fx.work })
  return { dir, attempts: readAttempts(dir) }
}

describe('SWE-bench through the official harness: its faults cannot change a verdict', () => {
  it('a stale report for the run id is never reused: each attempt has a run id of its own', async () => {
    // A report left by an earlier grading under the leg's shared run id says "resolved".
    const stale = path.join(state, 'logs/run_evaluation/r/idle/astropy__astropy-12907')
    mkdirSync(stale, { recursive: true })
    writeFileSync(
      path.join(stale, 'report.json'),
      JSON.stringify({ 'astropy__astropy-12907': { resolved: true } }),
    )
    const { dir, attempts } = await run('stale', 'none', 2)
    expect(attempts).toHaveLength(2)
    // The harness changed nothing: unresolved on both trials, each graded by its own evaluation.
    for (const a of attempts) expect(a).toMatchObject({ outcome: 'unresolved', verifier: { status: 'fail' } })
    const calls = readFileSync(path.join(state, 'calls.log'), 'utf8').trim().split('\n')
    expect(calls.filter((l) => l.startsWith('reused'))).toEqual([])
    const ids = calls.map((l) => l.split(' ')[1])
    expect(new Set(ids).size).toBe(2)
    for (const a of attempts) expect(ids).toContain(attemptRunId('r', path.join(dir, a.logs_dir)))
  })

  it('a report written outside --report_dir leaves the attempt ungraded, never graded by the exit code', async () => {
    const { attempts } = await run('ignored-dir', 'ignore-report-dir')
    const [a] = attempts
    expect(a).toMatchObject({ outcome: 'ungraded', verifier: { status: 'error', exit_code: 0 } })
    expect(a!.exit.reason).toMatch(
      /wrote no report naming astropy__astropy-12907 \(exit 0\).*no exit-code fallback/,
    )
    // The report exists, just not where it was asked for.
    const written = readdirSync(state).filter((f) => /^idle\.r-[0-9a-f]{10}\.json$/.test(f))
    expect(written).toHaveLength(1)
    expect(JSON.parse(readFileSync(path.join(state, written[0]!), 'utf8')).unresolved_ids).toEqual([
      'astropy__astropy-12907',
    ])
  })

  it('preparation refuses a dataset not at the pinned revision; grading refuses another swebench version', () => {
    const rows = path.join(state, 'verified.jsonl')
    writeFileSync(
      rows,
      `${JSON.stringify({ instance_id: 'x__y-1', repo: 'x/y', base_commit: 'abc', problem_statement: 'p' })}\n`,
    )
    const prepare = (extra: string[]) =>
      spawnSync(
        'python3',
        [
          'examples/swebench/prepare_instance.py',
          ...['--instance', 'x__y-1', '--workspace', path.join(state, 'ws'), '--out', path.join(state, 'o')],
          ...['--dataset-file', rows],
          ...extra,
        ],
        { encoding: 'utf8' },
      )
    const none = prepare([])
    expect(none.status).toBe(2)
    expect(none.stderr).toMatch(/refusing: no --revision/)
    const other = prepare(['--revision', 'c104f840', '--dataset-file-revision', 'deadbeef'])
    expect(other.status).toBe(2)
    expect(other.stderr).toMatch(/from revision deadbeef, the manifest pins c104f840/)
    const grade = spawnSync(
      'python3',
      [
        'examples/swebench/grade.py',
        ...['--swebench-version', '0.0.0-pinned', '--dataset', rows, '--instance', 'x__y-1'],
        ...['--predictions', rows, '--run-id', 'r-1', '--report-dir', path.join(state, 'rep')],
      ],
      { encoding: 'utf8' },
    )
    expect(grade.status).toBe(3)
    expect(grade.stderr).toMatch(/refusing: swebench .* the manifest pins 0\.0\.0-pinned/)
  })
})
