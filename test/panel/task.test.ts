import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadTask, parseTaskToml } from '../../src/panel/task.js'
import { HwError } from '../../src/util/errors.js'
import { GOOD_TOML, removeDir, taskFiles, writePanel } from './fixture.js'

const FILE = '/panels/x/task.toml'

function tomlError(text: string): { message: string; where: string | undefined; details: string[] } {
  try {
    parseTaskToml(text, FILE)
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    const h = e as HwError
    expect(h.code).toBe('task_invalid')
    return { message: h.message, where: h.where, details: h.details }
  }
  throw new Error('expected parseTaskToml to throw')
}

const meta = (extra = '') =>
  `[metadata]\ndifficulty = "easy"\nlanguage = "python"\ncategory = "bugfix"\n${extra}`

describe('parseTaskToml', () => {
  it('reads a full task.toml with defaults for the optional tables', () => {
    const t = parseTaskToml(GOOD_TOML, FILE)
    expect(t.metadata).toEqual({
      difficulty: 'easy',
      language: 'python',
      category: 'bugfix',
      tags: ['fixture'],
    })
    expect(t.verifier.timeout_sec).toBe(20)
    expect(t.hw.test_command).toBe('python3 -m unittest -q')
    const minimal = parseTaskToml(meta(), FILE)
    expect(minimal.verifier.timeout_sec).toBe(60)
    expect(minimal.agent.timeout_sec).toBe(300)
    expect(minimal.metadata.tags).toEqual([])
    expect(minimal.hw.test_command).toBeUndefined()
  })

  it('accepts Harbor keys it does not use', () => {
    const t = parseTaskToml(
      `version = "1.0"\n${meta('author_name = "A"\n')}[environment]\nbuild_timeout_sec = 600.0\n[verifier]\ntimeout_sec = 12.5\nenv = { K = "v" }\n`,
      FILE,
    )
    expect(t.verifier).toEqual({ timeout_sec: 12.5, env: { K: 'v' } })
  })

  it("accepts Harbor's free-form [metadata] as Harbor's tasks write it, or none at all", () => {
    // As Harbor's SWE-bench Verified and Terminal-Bench tasks write it: their own categories, extra keys.
    const harbor = parseTaskToml(
      'version = "1.0"\n[metadata]\nauthor_name = "SWE-bench"\nauthor_email = "x@example.org"\ndifficulty = "15 min - 1 hour"\ncategory = "debugging"\ntags = ["debugging", "swe-bench"]\nrepo = "astropy/astropy"\nexpert_time_estimate_min = 20\n[verifier]\ntimeout_sec = 3000.0\n[agent]\ntimeout_sec = 3000.0\n[environment]\nbuild_timeout_sec = 1800.0\ncpus = 1\nmemory_mb = 4096\nstorage_mb = 10240\n',
      FILE,
    )
    expect(harbor.metadata).toEqual({
      author_name: 'SWE-bench',
      author_email: 'x@example.org',
      difficulty: '15 min - 1 hour',
      category: 'debugging',
      tags: ['debugging', 'swe-bench'],
      repo: 'astropy/astropy',
      expert_time_estimate_min: 20,
    })
    const bare = parseTaskToml('[verifier]\ntimeout_sec = 5\n', FILE)
    expect(bare.metadata).toEqual({ tags: [] })
    expect(bare.verifier.timeout_sec).toBe(5)
  })

  it('lists every problem: the first in the message, the rest in details', () => {
    const e = tomlError(`${meta()}[verifier]\ntimeout_sec = -1\nwhen = 3\n`)
    expect(e.message).toBe('verifier.timeout_sec: expected a number > 0, got -1')
    expect(e.details).toEqual(['verifier: unknown field "when"'])
    expect(e.where).toBe(FILE)
  })

  it('rejects a misspelt table, a wrong type and an empty test command', () => {
    expect(tomlError(`${meta()}[verifer]\ntimeout_sec = 5\n`).message).toBe(
      '(top level): unknown field "verifer"',
    )
    expect(tomlError(`${meta()}[verifier]\ntimeout_sec = "60"\n`).message).toBe(
      'verifier.timeout_sec: expected number, got "60"',
    )
    expect(tomlError(`${meta()}[hw]\ntest_command = ""\n`).message).toBe('hw.test_command: must not be empty')
    expect(tomlError(meta('tags = "x"\n')).message).toBe('metadata.tags: expected array, got "x"')
  })

  it('points at the line and column of a TOML syntax error', () => {
    const e = tomlError('[metadata\ndifficulty = "easy"\n')
    expect(e.where).toBe(`${FILE}:1:10`)
    expect(e.message).toMatch(/^not valid TOML: /)
  })
})

describe('loadTask', () => {
  let root = ''
  afterEach(async () => {
    if (root) await removeDir(root)
    root = ''
  })

  async function loadError(files: ReturnType<typeof taskFiles>, id = 'demo-task'): Promise<HwError> {
    root = await writePanel({ [id]: files })
    try {
      await loadTask(path.join(root, id))
    } catch (e) {
      expect(e).toBeInstanceOf(HwError)
      return e as HwError
    }
    throw new Error('expected loadTask to throw')
  }

  it('loads a valid task folder', async () => {
    root = await writePanel({ 'demo-task': taskFiles() })
    const t = await loadTask(path.join(root, 'demo-task'))
    expect(t).toMatchObject({
      id: 'demo-task',
      dir: path.join(root, 'demo-task'),
      instruction: 'Make answer.txt say "right". Check with `cat answer.txt`.\n',
      meta: { difficulty: 'easy', language: 'python', category: 'bugfix', tags: ['fixture'] },
      verifierTimeoutS: 20,
      agentTimeoutS: 20,
      testCommand: 'python3 -m unittest -q',
      hasSolution: true,
    })
    expect(t.paths).toEqual({
      environment: path.join(root, 'demo-task', 'environment'),
      tests: path.join(root, 'demo-task', 'tests'),
      testScript: path.join(root, 'demo-task', 'tests', 'test.sh'),
      solveScript: path.join(root, 'demo-task', 'solution', 'solve.sh'),
    })
  })

  it('a task without solution/solve.sh loads with hasSolution false', async () => {
    root = await writePanel({ t1: taskFiles({ 'solution/solve.sh': null }) })
    const t = await loadTask(path.join(root, 't1'))
    expect(t.hasSolution).toBe(false)
    expect(t.paths.solveScript).toBeNull()
  })

  it('names the task.toml file and field', async () => {
    const e = await loadError(
      taskFiles({ 'task.toml': GOOD_TOML.replace('[verifier]', '[verifier]\ntimeout = 5') }),
    )
    expect(e.where).toBe(path.join(root, 'demo-task', 'task.toml'))
    expect(e.message).toBe('verifier: unknown field "timeout"')
  })

  it('rejects missing or empty parts with the folder named', async () => {
    let e = await loadError(taskFiles({ 'instruction.md': '  \n' }))
    expect([e.message, e.where]).toEqual([
      'instruction.md is empty',
      path.join(root, 'demo-task', 'instruction.md'),
    ])
    await removeDir(root)
    e = await loadError(taskFiles({ 'task.toml': null }))
    expect([e.message, e.where]).toEqual([
      'missing task.toml (the task metadata)',
      path.join(root, 'demo-task'),
    ])
    await removeDir(root)
    e = await loadError(taskFiles({ 'tests/test.sh': null, 'tests/helper.py': 'x = 1\n' }))
    expect(e.message).toBe('missing tests/test.sh (the hidden verifier)')
    await removeDir(root)
    e = await loadError(taskFiles({ 'environment/answer.txt': null }))
    expect(e.message).toBe('missing environment/ folder (the repo copied into the workspace)')
  })

  it('refuses harness instruction files anywhere in the environment', async () => {
    const e = await loadError(
      taskFiles({
        'environment/AGENTS.md': 'Always run the tests.\n',
        'environment/pkg/CLAUDE.md': 'x\n',
        'environment/.github/copilot-instructions.md': 'x\n',
        'environment/docs/copilot-instructions.md': 'not read by any harness\n',
      }),
    )
    expect(e.message).toBe(
      'environment/ holds harness instruction files: .github/copilot-instructions.md, AGENTS.md, pkg/CLAUDE.md',
    )
    expect(e.where).toBe(path.join(root, 'demo-task', 'environment'))
  })

  it('refuses a folder name that is not an instance id', async () => {
    const e = await loadError(taskFiles(), 'bad name')
    expect(e.message).toMatch(/^task folder name is not a valid instance id: /)
  })
})
