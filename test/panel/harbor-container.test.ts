import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadTask, parseTaskToml } from '../../src/panel/task.js'
import { runTaskVerifier } from '../../src/panel/verifier.js'
import { taskImage, taskRequest } from '../../src/run/container-request.js'
import { isHwError } from '../../src/util/errors.js'
import { containerEnv, testBackend, testSetting } from '../support/container.js'

const FIXTURE = path.resolve('examples/swebench/harbor-fixture/mathx__mathx-1')
const env = await containerEnv()
if (env.reason) console.warn(`Harbor container task tests skipped: ${env.reason}`)
const dir = mkdtempSync(path.join(os.tmpdir(), 'hw-harbor-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("Harbor's task.toml, read as its authors define it", () => {
  it('the SWE-bench-shaped fixture: Dockerfile image, resources, shared verifier container', async () => {
    const task = await loadTask(FIXTURE)
    expect(task.container).toEqual({
      kind: 'dockerfile',
      context: path.join(FIXTURE, 'environment'),
      buildTimeoutS: 600,
    })
    expect(task.harbor).toEqual({
      resources: { cpus: 1, memory_mb: 2048, storage_mb: 10240 },
      agentNetwork: null,
      verifierNetwork: null,
      environmentMode: 'shared',
    })
    expect(taskImage(task)).toEqual({
      build: path.join(FIXTURE, 'environment'),
      name: 'mathx__mathx-1',
      timeoutS: 600,
    })
  })

  it('network_mode follows the manifest: proxy-only keeps the verifier offline; task gives it public', () => {
    const toml = parseTaskToml(
      'version = "1.0"\n[metadata]\ndifficulty = "easy"\nlanguage = "python"\ncategory = "bugfix"\n[verifier]\nnetwork_mode = "public"\nenvironment_mode = "separate"\n[agent]\nnetwork_mode = "no-network"\n',
      'task.toml',
    )
    expect(toml.verifier.network_mode).toBe('public')
    const task = {
      harbor: { agentNetwork: 'no-network', verifierNetwork: 'public' },
      container: null,
    } as never
    expect(taskRequest(task, { ...testSetting(), network: 'proxy-only' }, 'verifier').network).toBe('none')
    expect(taskRequest(task, { ...testSetting(), network: 'task' }, 'verifier').network).toBe('public')
    expect(taskRequest(task, { ...testSetting(), network: 'task' }, 'agent').network).toBe('none')
    expect(taskRequest(task, { ...testSetting(), network: 'proxy-only' }, 'agent').network).toBe('proxy-only')
  })

  it.each([
    ['[environment]\ncpu = 2\n', 'environment: unknown field "cpu"'],
    ['[environment]\nmemory_mb = -5\n', 'environment.memory_mb'],
    ['[environment]\ncpus = "two"\n', 'environment.cpus: expected number, got "two"'],
    ['[environment]\ndocker_image = "Bad Ref"\n', 'environment.docker_image: not a valid image reference'],
    [
      '[verifier]\nenvironment_mode = "sometimes"\n',
      'verifier.environment_mode: expected one of "shared", "separate"',
    ],
    [
      '[agent]\nnetwork_mode = "internet"\n',
      'agent.network_mode: expected one of "public", "no-network", "allowlist"',
    ],
  ])('a bad field is a located error: %s', (extra, message) => {
    const text = `version = "1.0"\n[metadata]\ndifficulty = "easy"\nlanguage = "python"\ncategory = "bugfix"\n${extra}`
    let err: unknown
    try {
      parseTaskToml(text, '/tasks/x/task.toml')
    } catch (e) {
      err = e
    }
    expect(isHwError(err) && err.code).toBe('task_invalid')
    expect(isHwError(err) && err.where).toBe('/tasks/x/task.toml')
    expect(isHwError(err) && err.message).toContain(message)
  })
})

describe.skipIf(env.runtime === null)('SWE-bench-shaped task in its own image (real engine)', () => {
  const backend = testBackend()

  /** The instance's /testbed copied out of its image into a fresh workspace. */
  async function workspace(): Promise<string> {
    const ws = mkdtempSync(path.join(dir, 'ws-'))
    const workdir = await backend.exportWorkdir?.(
      { build: path.join(FIXTURE, 'environment'), name: 'mathx__mathx-1', timeoutS: 600 },
      ws,
    )
    expect(workdir).toBe('/testbed')
    return ws
  }

  async function verify(taskDir: string, ws: string) {
    const task = await loadTask(taskDir)
    const log = path.join(dir, `verifier-${path.basename(ws)}.log`)
    const r = await runTaskVerifier(task, ws, {
      sandbox: backend,
      logFile: log,
      container: { ...taskRequest(task, testSetting(), 'verifier'), workdir: '/testbed' },
    })
    return { ...r, log }
  }

  it('unfixed: the FAIL_TO_PASS test fails and the reward is 0 (a loss, graded)', async () => {
    const r = await verify(FIXTURE, await workspace())
    expect(r.status).toBe('fail')
    expect(r.reward).toBe(0)
  }, 300_000)

  it('with the reference fix: every FAIL_TO_PASS and PASS_TO_PASS test passes, reward 1', async () => {
    const ws = await workspace()
    execFileSync('bash', [path.join(FIXTURE, 'solution', 'solve.sh')], { cwd: ws })
    const r = await verify(FIXTURE, ws)
    expect(r.status).toBe('pass')
    expect(r.reward).toBe(1)
  }, 300_000)

  it('a test.sh that crashes without a reward is ungraded, never a loss', async () => {
    const copy = path.join(dir, 'crashing', 'mathx__mathx-1')
    mkdirSync(path.dirname(copy), { recursive: true })
    cpSync(FIXTURE, copy, { recursive: true })
    writeFileSync(
      path.join(copy, 'tests', 'test.sh'),
      '#!/usr/bin/env bash\necho "grader broke" >&2\nexit 3\n',
    )
    const r = await verify(copy, await workspace())
    expect(r.status).toBe('error')
    expect(r.reward).toBeNull()
    expect(r.reason).toContain('no reward file in /logs/verifier (test.sh exited 3): ungraded')
  }, 300_000)
})
