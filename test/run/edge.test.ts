import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { beforeAll, describe, expect, it } from 'vitest'
import { runLeg } from '../../src/run/leg.js'
import { createProgressReporter } from '../../src/run/progress.js'
import {
  manifestAndPlan,
  pidsWithCmdline,
  readAttempts,
  readLegJson,
  scriptCell,
  useRunFixture,
} from './fixture.js'

// Verifier failures, aborts and install failures, over a second small panel written here.

const fx = useRunFixture()
beforeAll(() => {
  const task = (id: string, test: string, timeout = 30): void => {
    const dir = path.join(fx.root, 'panel2', id)
    mkdirSync(path.join(dir, 'environment'), { recursive: true })
    mkdirSync(path.join(dir, 'tests'), { recursive: true })
    writeFileSync(path.join(dir, 'instruction.md'), `Task ${id}. FIX:${id}\n`)
    writeFileSync(
      path.join(dir, 'task.toml'),
      `[metadata]\ndifficulty = "easy"\nlanguage = "javascript"\ncategory = "bugfix"\n[verifier]\ntimeout_sec = ${timeout}\n`,
    )
    writeFileSync(path.join(dir, 'environment', 'file.txt'), 'x\n')
    writeFileSync(path.join(dir, 'tests', 'test.sh'), `#!/usr/bin/env bash\n${test}\n`)
    chmodSync(path.join(dir, 'tests', 'test.sh'), 0o755)
  }
  task('grader-crash', 'hw-no-such-grader-command')
  task('grader-slow', 'sleep 30', 1)
})

const panel2 = (ids: string[]) => ({ panel: { source: 'tasks', path: './panel2', instances: ids } })

describe('verifier failures', () => {
  it('a crashing verifier makes the attempt infra (retried) and ungraded; a slow one is ungraded', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'idle', 'noop.sh')],
      { ...panel2(['grader-crash', 'grader-slow']), retries: { max: 1, on: ['infra'], backoff_s: 0 } },
      'grader.yml',
    )
    const dir = path.join(fx.root, 'out', 'grader')
    await runLeg({ loaded, plan, leg: 'idle-s0', outDir: dir, runId: 'r', workRoot: fx.work })
    const attempts = readAttempts(dir)
    const crash = attempts.filter((a) => a.instance_id === 'grader-crash')
    expect(crash.map((a) => [a.attempt, a.final, a.exit.class, a.verifier.status, a.outcome])).toEqual([
      [1, false, 'infra', 'error', 'ungraded'],
      [2, true, 'infra', 'error', 'ungraded'],
    ])
    expect(crash[0]?.exit.reason).toMatch(/^verifier crashed: test\.sh exited 127/)
    const slow = attempts.filter((a) => a.instance_id === 'grader-slow')
    expect(
      slow.map((a) => [a.attempt, a.exit.class, a.verifier.status, a.outcome, a.outcome_reason]),
    ).toEqual([[1, 'clean', 'timeout', 'ungraded', 'verifier timeout']])
    expect(slow[0]?.verifier.duration_ms).toBeGreaterThanOrEqual(1000)
  })
})

describe('abort', () => {
  it('kills the attempt in flight, records it as stopped (infra, not final), and ends the leg partial', async () => {
    const mark = `1000.${process.pid}${(Date.now() % 1000) + 7}`
    const hang = scriptCell(fx, 'hang', 'hang.sh', { env: { HW_MARK: mark } })
    const { loaded, plan } = await manifestAndPlan(fx, [hang], {}, 'abort.yml')
    const dir = path.join(fx.root, 'out', 'abort')
    const ac = new AbortController()
    setTimeout(() => ac.abort('received SIGTERM'), 700)
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'hang-s0',
      outDir: dir,
      runId: 'r',
      workRoot: fx.work,
      killGraceMs: 200,
      signal: ac.signal,
    })
    expect(leg.status).toBe('partial')
    expect(leg.error).toBe('aborted')
    const [stopped, ...more] = readAttempts(dir)
    expect(more).toEqual([])
    expect(stopped).toMatchObject({
      final: false,
      attempt: 1,
      exit: { class: 'infra', reason: 'stopped: received SIGTERM' },
      outcome: 'infra_error',
      outcome_reason: 'stopped: received SIGTERM',
      isolation: 'env-only',
    })
    expect(readLegJson(dir).status).toBe('partial')
    expect(pidsWithCmdline(`sleep ${mark}`)).toEqual([])
    // Resume runs the stopped pair again as attempt 2 (the stopped one never counts).
    const again = new AbortController()
    setTimeout(() => again.abort('received SIGINT'), 500)
    await runLeg({
      loaded,
      plan,
      leg: 'hang-s0',
      outDir: dir,
      runId: 'r',
      workRoot: fx.work,
      killGraceMs: 200,
      signal: again.signal,
    })
    expect(readAttempts(dir).map((r) => [r.attempt, r.final, r.exit.reason])).toEqual([
      [1, false, 'stopped: received SIGTERM'],
      [2, false, 'stopped: received SIGINT'],
    ])
  })
})

describe('install failure', () => {
  it('records every planned pair as an infra_error attempt and fails the leg', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [{ id: 'pi', harness: 'pi', version: '0.73.1' }],
      { panel: { source: 'tasks', path: './panel', instances: ['js-add', 'txt-greet'] } },
      'install.yml',
    )
    const dir = path.join(fx.root, 'out', 'install')
    // A cache folder that cannot be created: the install fails before any network use.
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'pi-s0',
      outDir: dir,
      runId: 'r',
      cacheDir: '/dev/null/cache',
      workRoot: fx.work,
    })
    expect(leg.status).toBe('failed')
    expect(leg.error).toMatch(/^install of pi@0\.73\.1 failed/)
    const attempts = readAttempts(dir)
    expect(attempts).toHaveLength(2)
    for (const a of attempts) {
      expect([a.exit.class, a.outcome, a.final, a.verifier.status]).toEqual([
        'infra',
        'infra_error',
        true,
        'skipped',
      ])
      expect(a.telemetry.coverage).toBe('unknown')
      expect(existsSync(path.join(dir, a.logs_dir, 'stderr.txt'))).toBe(true)
    }
  })
})

describe('progress on a terminal', () => {
  it('draws a bar and prints attempt lines and the summary above it', async () => {
    const chunks: string[] = []
    const stream = Object.assign(new PassThrough(), {
      isTTY: true,
      columns: 120,
      cursorTo: () => true,
      moveCursor: () => true,
      clearLine: () => true,
      clearScreenDown: () => true,
    })
    stream.on('data', (c) => chunks.push(String(c)))
    const reporter = createProgressReporter({ stream: stream as unknown as NodeJS.WriteStream, tty: true })
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      { panel: { source: 'tasks', path: './panel', instances: ['js-add'] } },
      'tty.yml',
    )
    const dir = path.join(fx.root, 'out', 'tty')
    await runLeg({
      loaded,
      plan,
      leg: 'solver-s0',
      outDir: dir,
      runId: 'r',
      workRoot: fx.work,
      onProgress: (e) => reporter.onProgress(e),
    })
    reporter.stop()
    const text = chunks.join('')
    expect(text).toMatch(/\[1\/1\] solver js-add trial 0 attempt 1: resolved \(clean\)/)
    expect(text).toMatch(/leg solver-s0 complete: 1\/1 resolved/)
    expect(text).toMatch(/solver-s0 \[.*\] 1\/1 \| resolved 1 \| /)
  })
})
