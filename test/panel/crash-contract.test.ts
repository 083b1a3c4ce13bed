// A task-tests verifier that declares no contract still tells a crash from a failure: exit 1 is
// "tests failed" unless its error output ends in an uncaught exception raised outside the workspace;
// any other exit or a signal is a grader error. Real bash, Python and Node processes, no stubs.
import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { describeContract, verifierContract } from '../../src/panel/contract.js'
import { uncaughtException } from '../../src/panel/crash.js'
import { loadTask } from '../../src/panel/task.js'
import { runTaskVerifier } from '../../src/panel/verifier.js'
import { removeDir, taskFiles, writePanel } from './fixture.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeDir(d)
})

/** A task whose tests/ holds `files` (test.sh among them), graded in a fresh workspace holding `ws`. */
async function grade(files: Record<string, string>, ws: Record<string, string | Buffer> = {}) {
  const extra = Object.fromEntries(Object.entries(files).map(([k, v]) => [`tests/${k}`, v]))
  const root = await writePanel({ t: taskFiles(extra) })
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'hw-crash-ws-'))
  dirs.push(root, workspace)
  for (const [f, data] of Object.entries(ws)) await writeFile(path.join(workspace, f), data)
  return runTaskVerifier(await loadTask(path.join(root, 't')), workspace)
}

const sh = (body: string) => `#!/usr/bin/env bash\n${body}\n`
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]) // "café" in Latin-1

describe('the default contract of a task-tests verifier tells a crash from a failure', () => {
  it('validate says what it is', () => {
    const c = verifierContract({ kind: 'task-tests', timeout_s: 60 } as never)
    expect(c).toEqual({ kind: 'default' })
    expect(describeContract(c, 'task-tests')).toBe(
      "default (none declared): a reward file or a report naming the instance decides; else exit 0 pass, exit 1 tests failed (unless the error output ends in an uncaught exception raised outside the workspace: grader_error); any other exit (2–255, e.g. pytest's 2–5, 126/127 not runnable) or a signal is grader_error",
    )
  })

  it('a Python grader dying of a decode error on the agent’s bytes is a grader error, not a failure', async () => {
    const r = await grade(
      {
        'test.sh': sh('python3 "$HW_TESTS_DIR/grade.py"'),
        'grade.py': "text = open('menu.txt', encoding='utf-8').read()\nassert 'café' in text\n",
      },
      { 'menu.txt': LATIN1 },
    )
    expect(r.status).toBe('error')
    expect(r.exitCode).toBe(1)
    expect(r.reason).toMatch(
      /^the test\.sh exited 1 on an uncaught exception outside the workspace \(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 3: .*\): grader error, not a verdict$/,
    )
  })

  it('a Python grader dying of an exception in its own code (a missing config key) is a grader error', async () => {
    const r = await grade({
      'test.sh': sh('echo "grading"\npython3 "$HW_TESTS_DIR/grade.py"'),
      'grade.py': "import json\nconfig = json.loads('{}')\nprint(config['FAIL_TO_PASS'])\n",
    })
    expect(r.status).toBe('error')
    expect(r.reason).toContain("(KeyError: 'FAIL_TO_PASS')")
  })

  it('a Node.js grader dying of an uncaught exception is a grader error', async () => {
    const r = await grade({
      'test.sh': sh('node "$HW_TESTS_DIR/grade.mjs"'),
      'grade.mjs':
        "import { readFileSync } from 'node:fs'\nJSON.parse(readFileSync(process.env.HW_TESTS_DIR + '/grade.mjs', 'utf8'))\n",
    })
    expect(r.status).toBe('error')
    expect(r.reason).toMatch(/on an uncaught exception outside the workspace \(SyntaxError: /)
  })

  it('a grader killed by a signal, directly or as a child of test.sh (exit 128+n), is a grader error', async () => {
    const direct = await grade({ 'test.sh': sh('kill -SEGV $$') })
    expect(direct).toMatchObject({ status: 'error', exitCode: null })
    expect(direct.reason).toBe('test.sh ended by SIGSEGV: grader error')
    const child = await grade({
      'test.sh': sh('python3 -c "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"'),
    })
    expect(child).toMatchObject({ status: 'error', exitCode: 137 })
    expect(child.reason).toBe(
      'test.sh exited 137: not 0 (passed) or 1 (tests failed), so the grader itself failed (no contract declared): grader error, not a verdict',
    )
  })

  it('exit codes outside 0 and 1 (pytest 2 interrupted, 3 internal error, 4 usage, 5 no tests) are grader errors', async () => {
    for (const code of [2, 3, 4, 5]) {
      const r = await grade({ 'test.sh': sh(`exit ${code}`) })
      expect([code, r.status]).toEqual([code, 'error'])
    }
  })

  it('failed tests stay failures: unittest, a failed assertion, an exception raised in the agent’s code, a plain exit 1', async () => {
    // unittest reports the failing test (a traceback inside its report) and exits 1.
    const unit = await grade(
      {
        'test.sh': sh('python3 -m unittest discover -s "$HW_TESTS_DIR" -p "hidden_*.py" -q'),
        'hidden_add.py':
          'import sys, unittest, os\nsys.path.insert(0, os.getcwd())\nfrom add import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n',
      },
      { 'add.py': 'def add(a, b):\n    return a - b\n' },
    )
    expect(unit).toMatchObject({ status: 'fail', exitCode: 1, reason: null })
    // An assertion that is the whole test: its AssertionError is how it says "failed".
    const assertion = await grade(
      {
        'test.sh': sh('python3 "$HW_TESTS_DIR/check.py"'),
        'check.py': "assert open('answer.txt').read().strip() == 'right', 'wrong answer'\n",
      },
      { 'answer.txt': 'wrong\n' },
    )
    expect(assertion).toMatchObject({ status: 'fail', exitCode: 1, reason: null })
    // The agent's own module raises: the traceback runs through the workspace, so it is the agent's failure.
    const agent = await grade(
      {
        'test.sh': sh('python3 "$HW_TESTS_DIR/check.py"'),
        'check.py': 'import sys, os\nsys.path.insert(0, os.getcwd())\nimport solution\nsolution.run()\n',
      },
      { 'solution.py': 'def run():\n    return {}["missing"]\n' },
    )
    expect(agent).toMatchObject({ status: 'fail', exitCode: 1, reason: null })
    const plain = await grade({ 'test.sh': sh('grep -qx right answer.txt') }, { 'answer.txt': 'wrong\n' })
    expect(plain).toMatchObject({ status: 'fail', exitCode: 1, reason: null })
  })
})

describe('uncaughtException: the evidence read from the end of the error output', () => {
  const py = (exception: string, file = '/tests/grade.py', after = '') =>
    `Traceback (most recent call last):\n  File "${file}", line 3, in <module>\n    main()\n${exception}\n${after}`

  it('a traceback at the end, outside the workspace and not an assertion, is a crash', () => {
    expect(uncaughtException(py('ValueError: bad config'), '/testbed')).toBe('ValueError: bad config')
    expect(uncaughtException(py('json.decoder.JSONDecodeError: Expecting value'), '/testbed')).toBe(
      'json.decoder.JSONDecodeError: Expecting value',
    )
  })

  it('followed by a runner’s summary, through the workspace, or an assertion: not a crash', () => {
    const summary =
      '\n----------------------------------------------------------------------\nRan 1 test in 0.001s\n\nFAILED (errors=1)\n'
    expect(uncaughtException(py('TypeError: x', '/tests/t.py', summary), '/testbed')).toBeNull()
    expect(uncaughtException(py('TypeError: x', '/testbed/src/m.py'), '/testbed')).toBeNull()
    expect(uncaughtException(py('AssertionError: wrong'), '/testbed')).toBeNull()
    expect(uncaughtException('FAILED (failures=1)\n', '/testbed')).toBeNull()
    expect(uncaughtException('', '/testbed')).toBeNull()
  })

  it('a Node.js stack ending in its version line; an AssertionError or a frame in the workspace is not', () => {
    const node = (first: string, frame: string) =>
      `/tests/g.mjs:2\n  throw x\n  ^\n\n${first}\n    at ${frame}\n    at node:internal/modules/run_main:1:1 {\n  code: 'X'\n}\n\nNode.js v20.19.0\n`
    expect(uncaughtException(node('TypeError: nope', 'file:///tests/g.mjs:2:3'), '/testbed')).toBe(
      'TypeError: nope',
    )
    expect(
      uncaughtException(node('AssertionError [ERR_ASSERTION]: 1 == 2', 'file:///tests/g.mjs:2:3'), '/w'),
    ).toBeNull()
    expect(uncaughtException(node('TypeError: nope', 'f (/testbed/lib.js:4:1)'), '/testbed')).toBeNull()
  })
})
