import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { renderTable } from '../../src/cli/commands/panel.js'
import { main } from '../../src/cli/index.js'
import { badTasks, verifyPanel } from '../../src/panel/verify.js'
import { removeDir, taskFiles, writePanel } from './fixture.js'

/** Run the CLI in-process; returns the exit code and what it wrote. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const out = process.stdout.write.bind(process.stdout)
  const err = process.stderr.write.bind(process.stderr)
  process.stdout.write = ((s: string) => {
    stdout += s
    return true
  }) as typeof process.stdout.write
  process.stderr.write = ((s: string) => {
    stderr += s
    return true
  }) as typeof process.stderr.write
  try {
    const code = await main(args)
    return { code, stdout, stderr }
  } finally {
    process.stdout.write = out
    process.stderr.write = err
    process.exitCode = undefined
  }
}

const NOT_IDEMPOTENT =
  '#!/usr/bin/env bash\nset -e\ntest ! -e .applied\ntouch .applied\necho right > answer.txt\n'

describe('panel verify', () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const d of dirs.splice(0)) await removeDir(d)
  })

  it('reports each task as start/solution and exits 1 naming the bad ones', async () => {
    const dir = await writePanel({
      'a-good': taskFiles(),
      'b-start-passes': taskFiles({ 'environment/answer.txt': 'right\n' }),
      'c-solution-fails': taskFiles({
        'solution/solve.sh': '#!/usr/bin/env bash\necho still-wrong > answer.txt\n',
      }),
      'd-not-idempotent': taskFiles({ 'solution/solve.sh': NOT_IDEMPOTENT }),
      'e-no-solution': taskFiles({ 'solution/solve.sh': null }),
    })
    dirs.push(dir)
    const r = await cli(['panel', 'verify', dir, '--json'])
    expect(r.code).toBe(1)
    expect(JSON.parse(r.stdout)).toEqual({
      tasks: [
        { id: 'a-good', start: 'fail', solution: 'pass' },
        {
          id: 'b-start-passes',
          start: 'pass',
          solution: 'pass',
          note: 'the verifier already passes before any change',
        },
        { id: 'c-solution-fails', start: 'fail', solution: 'fail', note: 'the solution gives fail' },
        {
          id: 'd-not-idempotent',
          start: 'fail',
          solution: 'error',
          note: 'solve.sh exited 1 on its second run (it must be idempotent)',
        },
        { id: 'e-no-solution', start: 'fail', solution: 'missing', note: 'no solution/solve.sh' },
      ],
    })
    expect(r.stderr).toContain(
      '4 bad task(s): b-start-passes, c-solution-fails, d-not-idempotent, e-no-solution\n',
    )
    expect(r.stderr).toMatch(/^\[\d\/5\] a-good: start fail, solution pass \(\d+\.\d s\) ok$/m)
  })

  it('exits 0 with a readable table when every task is fail → pass; --only selects tasks', async () => {
    const dir = await writePanel({
      good: taskFiles(),
      other: taskFiles(),
      broken: taskFiles({ 'solution/solve.sh': null }),
    })
    dirs.push(dir)
    const r = await cli(['panel', 'verify', dir, '--only', 'other, good'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(
      'task   start    solution  verdict\n' +
        'good   fail     pass      ok\n' +
        'other  fail     pass      ok\n' +
        '2 task(s): 2 ok, 0 bad\n',
    )
  })

  it('--repeat marks a solution whose grading disagrees with itself as flaky', async () => {
    // passes on the 1st, 3rd… grading of a solved workspace and fails on the others
    const flakyTest =
      '#!/usr/bin/env bash\ngrep -qx right answer.txt || exit 1\nf="$HW_TESTS_DIR/../count"\n' +
      'n=$(cat "$f" 2>/dev/null || echo 0)\necho $((n + 1)) > "$f"\n[ $((n % 2)) -eq 0 ]\n'
    const dir = await writePanel({ flaky: taskFiles({ 'tests/test.sh': flakyTest }) })
    dirs.push(dir)
    const once = await verifyPanel(dir)
    expect(once.tasks).toEqual([{ id: 'flaky', start: 'fail', solution: 'pass' }])
    const twice = await verifyPanel(dir, { repeat: 2 })
    expect(twice.tasks).toEqual([
      { id: 'flaky', start: 'fail', solution: 'flaky', note: 'solution results differ: fail, pass' },
    ])
    expect(badTasks(twice)).toEqual(['flaky'])
  })

  it('keeps logs with --logs', async () => {
    const dir = await writePanel({
      t: taskFiles({
        'tests/test.sh': '#!/usr/bin/env bash\necho "graded $(cat answer.txt)"\ngrep -qx right answer.txt\n',
      }),
    })
    dirs.push(dir)
    const logs = path.join(dir, '..', `${path.basename(dir)}-logs`)
    dirs.push(logs)
    expect((await cli(['panel', 'verify', dir, '--logs', logs])).code).toBe(0)
    expect(await readFile(path.join(logs, 't', 'start.log'), 'utf8')).toBe('graded wrong\n')
    expect(await readFile(path.join(logs, 't', 'solution.log'), 'utf8')).toBe('graded right\n')
  })

  it('user mistakes exit 2 with the file and field named', async () => {
    const dir = await writePanel({
      ok: taskFiles(),
      bad: taskFiles({
        'task.toml': taskFiles()['task.toml']?.replace('[agent]', '[agent]\nnetwork = "on"') ?? '',
      }),
    })
    dirs.push(dir)
    let r = await cli(['panel', 'verify', dir])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`error: ${path.join(dir, 'bad', 'task.toml')} agent: unknown field "network"`)
    r = await cli(['panel', 'verify', dir, '--only', 'ok,nope'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--only names tasks not in the panel: nope')
    r = await cli(['panel', 'verify', path.join(dir, 'no-such-folder')])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('no such panel folder or built-in panel')
    r = await cli(['panel', 'verify', path.join(dir, 'ok', 'task.toml')])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('the panel path is not a folder')
    r = await cli(['panel', 'verify', dir, '--repeat', '0'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('expected a positive integer, got "0"')
  })

  it('renderTable marks bad tasks with their note', () => {
    expect(
      renderTable({
        tasks: [
          { id: 'x', start: 'fail', solution: 'pass' },
          {
            id: 'longer-id',
            start: 'timeout',
            solution: 'pass',
            note: 'the verifier gives timeout before any change',
          },
        ],
      }),
    ).toBe(
      'task       start    solution  verdict\n' +
        'x          fail     pass      ok\n' +
        'longer-id  timeout  pass      BAD (the verifier gives timeout before any change)\n' +
        '2 task(s): 1 ok, 1 bad\n',
    )
  })
})
