import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type LegProgressEvent, runLeg } from '../../src/run/leg.js'
import { loadPlan } from '../../src/run/plan-file.js'
import { formatLegSummary } from '../../src/run/progress.js'
import type { AttemptTelemetry, TelemetryCapture } from '../../src/telemetry/capture.js'
import { AtifTrajectorySchema } from '../../src/trajectory/atif-schema.js'
import { HwError } from '../../src/util/errors.js'
import {
  manifestAndPlan,
  pidsWithCmdline,
  readAttempts,
  readLegJson,
  scriptCell,
  useRunFixture,
  walk,
} from './fixture.js'

const fx = useRunFixture()

const out = (name: string): string => path.join(fx.root, 'out', name)

describe('runLeg: a complete leg over a fixture panel', () => {
  it('solves every task with a solving harness and writes a valid artifact', async () => {
    const { loaded, plan } = await manifestAndPlan(fx, [scriptCell(fx, 'solver', 'solve.sh')], {
      trials: 2,
      panel: { source: 'tasks', path: './panel', quarantine: ['txt-greet'] },
    })
    const dir = out('solver')
    const events: string[] = []
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'solver-s0',
      outDir: dir,
      runId: 'run-1',
      workRoot: fx.work,
      onProgress: (e) => events.push(e.type),
    })
    expect(leg.status).toBe('complete')
    expect(leg.error).toBeNull()
    expect(leg.attempts).toBe(6)
    expect(leg.harness_version_observed).toBe('1.0.0')
    expect(leg.manifest_sha256).toBe(loaded.sha256)
    expect(leg.config_hash).toBe(loaded.configHashes.solver)
    expect(leg.ended_at).not.toBeNull()
    expect(readLegJson(dir)).toEqual(leg)

    const attempts = readAttempts(dir)
    const planned = plan.legs[0]?.instances ?? []
    // Seeded instance order, each instance k = 2 times (trial 0, 1).
    expect(attempts.map((a) => [a.instance_id, a.trial])).toEqual(
      planned.flatMap((id) => [
        [id, 0],
        [id, 1],
      ]),
    )
    for (const a of attempts) {
      expect(a.outcome).toBe('resolved')
      expect(a.exit).toEqual({ class: 'clean', code: 0, signal: null, reason: null })
      expect(a.verifier.status).toBe('pass')
      expect(a.attempt).toBe(1)
      expect(a.final).toBe(true)
      expect(a.timed_out).toBe(false)
      expect(a.quarantined).toBe(a.instance_id === 'txt-greet')
      expect(a.deliverable.bytes).toBeGreaterThan(0)
      expect(a.deliverable.sha256).toMatch(/^[0-9a-f]{64}$/)
      expect(a.final_message).toMatch(/^solved /)
      // No capture configured: coverage unknown, totals null — never zero.
      expect(a.telemetry.coverage).toBe('unknown')
      expect(a.telemetry.proxy_requests).toBeNull()
      expect(a.logs_dir).toBe(`logs/${a.instance_id}/${a.trial}-${a.attempt}`)
      const logs = path.join(dir, a.logs_dir)
      expect(readdirSync(logs).sort()).toEqual(
        [
          'capabilities.json',
          'patch.diff',
          'stderr.txt',
          'stdout.txt',
          'trajectory.atif.json',
          'trajectory.jsonl',
          'verifier.log',
          ...(a.instance_id === 'txt-greet' ? ['patch.excluded.txt'] : []),
        ].sort(),
      )
      expect(readFileSync(path.join(logs, 'trajectory.jsonl'), 'utf8')).toContain('"type":"done"')
      // A command harness states its capabilities unknown; without a capture the proxy saw nothing.
      const caps = JSON.parse(readFileSync(path.join(logs, 'capabilities.json'), 'utf8'))
      expect(caps.harness).toBe('command')
      expect(caps.configured.compaction).toEqual({
        value: null,
        from: 'the command adapter does not read its capabilities',
      })
      expect(caps.observed).toBeNull()
    }
    // The grade uses the reward file for txt-greet.
    expect(attempts.find((a) => a.instance_id === 'txt-greet')?.verifier.reward).toBe(1)
    // The deliverable includes new files, never ignored ones: those are listed beside the patch.
    const greet = attempts.find((a) => a.instance_id === 'txt-greet')
    const patch = readFileSync(path.join(dir, greet?.logs_dir ?? '', 'patch.diff'), 'utf8')
    expect(patch).toContain('+hello world')
    expect(patch).not.toContain('build/out.txt')
    expect(readFileSync(path.join(dir, greet?.logs_dir ?? '', 'patch.excluded.txt'), 'utf8')).toBe(
      'ignored\tbuild/\n',
    )
    expect(greet?.deliverable.files_changed).toBe(1)
    const count = attempts.find((a) => a.instance_id === 'sh+count')
    expect(count?.deliverable.files_changed).toBe(2)
    // Same patch for the same work on every trial (reproducible baseline).
    expect(
      new Set(attempts.filter((a) => a.instance_id === 'js-add').map((a) => a.deliverable.sha256)).size,
    ).toBe(1)
    // No hidden paths in the artifact (upload-artifact skips them).
    expect(walk(dir).filter((p) => p.split('/').some((s) => s.startsWith('.')))).toEqual([])
    expect(events[0]).toBe('start')
    expect(events.at(-1)).toBe('end')
    expect(events.filter((e) => e === 'attempt')).toHaveLength(6)
    // Workspaces are removed after each attempt.
    expect(readdirSync(path.join(fx.work, 'w'))).toEqual([])
  })

  it('records an idle harness as unresolved with an empty deliverable', async () => {
    const { loaded, plan } = await manifestAndPlan(fx, [scriptCell(fx, 'idle', 'noop.sh')], {}, 'idle.yml')
    const dir = out('idle')
    const leg = await runLeg({ loaded, plan, leg: 'idle-s0', outDir: dir, runId: 'run-1', workRoot: fx.work })
    expect(leg.status).toBe('complete')
    const attempts = readAttempts(dir)
    expect(attempts).toHaveLength(3)
    for (const a of attempts) {
      expect(a.outcome).toBe('unresolved')
      expect(a.exit.class).toBe('clean')
      expect(a.verifier.status).toBe('fail')
      expect(a.deliverable).toEqual({ bytes: 0, sha256: null, files_changed: 0 })
      // No trajectory and no proxy request: still a valid ATIF document, with no steps and the reason.
      const doc = JSON.parse(readFileSync(path.join(dir, a.logs_dir, a.atif ?? 'none'), 'utf8'))
      expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true)
      expect(doc.steps).toEqual([])
      expect(doc.final_metrics).toEqual({ total_steps: 0, extra: expect.objectContaining({ requests: 0 }) })
      expect(doc.notes).toMatch(/the attempt's trajectory holds no events/)
    }
  })

  it('kills a hanging harness tree at the timeout, leaves no orphan, and still grades the workspace', async () => {
    const mark = `1000.${process.pid}${Date.now() % 100000}`
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'hang', 'hang.sh', { env: { HW_MARK: mark } })],
      { budgets: { timeout_s: 1.5 }, panel: { source: 'tasks', path: './panel', instances: ['js-add'] } },
      'hang.yml',
    )
    const dir = out('hang')
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'hang-s0',
      outDir: dir,
      runId: 'run-1',
      workRoot: fx.work,
      killGraceMs: 300,
    })
    expect(leg.status).toBe('complete')
    const [a] = readAttempts(dir)
    expect(a?.timed_out).toBe(true)
    expect(a?.exit.class).toBe('timeout')
    expect(a?.exit.code).toBeNull()
    expect(a?.exit.signal).toBe('SIGKILL') // SIGTERM was ignored: the grace period escalated
    expect(a?.phases_ms.harness).toBeGreaterThanOrEqual(1500)
    expect(a?.phases_ms.harness).toBeLessThan(6000)
    // The verifier ran after the timeout and its verdict stands (the fix was applied before the hang).
    expect(a?.verifier.status).toBe('pass')
    expect(a?.outcome).toBe('resolved')
    expect(a?.telemetry.flags).toContain('stray_processes_killed')
    expect(pidsWithCmdline(`sleep ${mark}`)).toEqual([])
  })

  it('a harness failing at startup (no model request, seconds) is infrastructure: retried per retries.on: [infra]', async () => {
    const bad = {
      id: 'broken',
      harness: 'command',
      version: '1.0.0',
      config: { command: 'hw-no-such-program-xyz --flag' },
    }
    const { loaded, plan } = await manifestAndPlan(fx, [bad], {}, 'broken.yml')
    const dir = out('broken')
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'broken-s0',
      outDir: dir,
      runId: 'run-1',
      workRoot: fx.work,
    })
    expect(leg.status).toBe('complete')
    const attempts = readAttempts(dir)
    // 3 instances × (the attempt + 1 retry, retries.max 1): the exit code said `error`, the classifier
    // (no model request, a few seconds, nothing delivered) says harness_startup, which is infra.
    expect(attempts).toHaveLength(6)
    for (const a of attempts) {
      expect(a.exit.class).toBe('error')
      expect(a.exit.code).toBe(127)
      expect(a.exit.reason).toMatch(/^startup: /)
      expect(a.final).toBe(a.attempt === 2)
      expect(a.ledger_check).toMatchObject({ rows: 0, suspected_duplicates: 0, last: [] })
    }
    expect(attempts.map((a) => a.attempt).sort()).toEqual([1, 1, 1, 2, 2, 2])
  })
})

/** A capture that cannot start for the first `failures` attempts (then hands out a closed endpoint). */
function failingCapture(failures: number): TelemetryCapture & { begun: number } {
  const cap = {
    source: 'ledger' as const,
    begun: 0,
    async begin(): Promise<AttemptTelemetry> {
      cap.begun++
      if (cap.begun <= failures) throw new Error('proxy is down (connection refused)')
      throw new Error('unreachable in this test')
    },
    async close() {},
  }
  return cap
}

describe('runLeg: retries', () => {
  it('retries infra failures up to retries.max, each retry a new attempt; only the last is final', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      {
        retries: { max: 2, on: ['infra'], backoff_s: 0 },
        panel: { source: 'tasks', path: './panel', instances: ['js-add'] },
      },
      'retry.yml',
    )
    const dir = out('retry')
    const capture = failingCapture(99)
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'solver-s0',
      outDir: dir,
      runId: 'run-1',
      workRoot: fx.work,
      capture,
    })
    const attempts = readAttempts(dir)
    expect(attempts.map((a) => [a.attempt, a.final, a.exit.class, a.outcome])).toEqual([
      [1, false, 'infra', 'infra_error'],
      [2, false, 'infra', 'infra_error'],
      [3, true, 'infra', 'infra_error'],
    ])
    expect(attempts[0]?.exit.reason).toMatch(/telemetry capture failed to start: proxy is down/)
    expect(attempts[0]?.verifier.status).toBe('skipped')
    expect(new Set(attempts.map((a) => a.logs_dir)).size).toBe(3)
    expect(capture.begun).toBe(3)
    expect(leg.status).toBe('complete')
    expect(leg.attempts).toBe(3)
  })
})

describe('runLeg: resume and --fresh', () => {
  it('skips pairs whose final attempt is recorded, reruns the rest, and --fresh moves the folder aside', async () => {
    const { loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      {},
      'resume.yml',
    )
    const dir = out('resume')
    const opts = { loaded, plan, leg: 'solver-s0', outDir: dir, runId: 'run-1', workRoot: fx.work }
    await runLeg(opts)
    const first = readAttempts(dir)
    expect(first).toHaveLength(3)

    const firstLeg = readLegJson(dir)
    const legText = readFileSync(path.join(dir, 'leg.json'), 'utf8')

    // Nothing to do on a rerun of a complete leg: leg.json (its timing) is left as it was.
    const ends: Extract<LegProgressEvent, { type: 'end' }>[] = []
    const onProgress = (e: LegProgressEvent): void => {
      if (e.type === 'end') ends.push(e)
    }
    await new Promise((r) => setTimeout(r, 50))
    // A later run attempt (a re-run of the job) that finds nothing to run keeps the identity of the run
    // that did the work: leg.json and its rows still agree (no mixture of runs).
    expect(firstLeg.leg_attempt).toBe(1)
    const again = await runLeg({
      ...opts,
      runId: 'run-idle',
      onProgress,
      runnerEnv: { ...process.env, GITHUB_RUN_ATTEMPT: '2' },
    })
    expect(again.status).toBe('complete')
    expect(readAttempts(dir)).toEqual(first)
    expect(readFileSync(path.join(dir, 'leg.json'), 'utf8')).toBe(legText)
    expect(again).toEqual(firstLeg)
    const idle = ends[0]
    expect(idle?.session).toMatchObject({ attempts: 0, resumed: true })
    const recorded = (Date.parse(firstLeg.ended_at ?? '') - Date.parse(firstLeg.started_at)) / 1000
    expect(formatLegSummary(idle!.leg, idle!.finals, idle!.session)).toMatch(
      new RegExp(
        `^leg solver-s0 already complete \\(nothing to run\\): 3/3 resolved.*; ${recorded.toFixed(1)}s recorded;`,
      ),
    )

    // A crash after the first attempt, mid-way through writing the second line.
    const lines = readFileSync(path.join(dir, 'attempts.jsonl'), 'utf8').split('\n')
    writeFileSync(path.join(dir, 'attempts.jsonl'), `${lines[0]}\n${lines[1]?.slice(0, 40)}`)
    const resumed = await runLeg({ ...opts, runId: 'run-2', onProgress })
    expect(resumed.status).toBe('complete')
    // The leg started when the first session did; the summary times this session's two attempts.
    expect(resumed.started_at).toBe(firstLeg.started_at)
    expect(Date.parse(resumed.ended_at ?? '')).toBeGreaterThan(Date.parse(firstLeg.ended_at ?? ''))
    const work = ends[1]
    expect(work?.session).toMatchObject({ attempts: 2, resumed: true })
    expect(work!.session.seconds).toBeLessThan((Date.now() - Date.parse(firstLeg.started_at)) / 1000)
    expect(formatLegSummary(work!.leg, work!.finals, work!.session)).toContain(
      `; ${work!.session.seconds.toFixed(1)}s this session (2 attempts);`,
    )
    const after = readAttempts(dir)
    expect(after).toHaveLength(3)
    expect(after[0]).toEqual(first[0])
    expect(after.slice(1).map((a) => a.run_id)).toEqual(['run-2', 'run-2'])
    expect(after.map((a) => a.instance_id)).toEqual(first.map((a) => a.instance_id))
    // One final attempt per (instance, trial): never counted twice (F09).
    expect(new Set(after.filter((a) => a.final).map((a) => `${a.instance_id}/${a.trial}`)).size).toBe(3)

    // --fresh: the old folder is moved aside (never deleted) and the leg runs from scratch.
    const logs: string[] = []
    const fresh = await runLeg({ ...opts, runId: 'run-3', fresh: true, log: (l) => logs.push(l) })
    expect(fresh.status).toBe('complete')
    expect(readAttempts(dir).map((a) => a.run_id)).toEqual(['run-3', 'run-3', 'run-3'])
    // Not beside the leg folder (an artifacts folder would read it as another leg).
    expect(readdirSync(path.dirname(dir)).filter((n) => n.startsWith('resume'))).toEqual(['resume'])
    const aside = /moved the previous results of .* to (\S+)$/.exec(logs.join('\n'))?.[1] ?? ''
    expect(aside).toMatch(/harness-watch-prev\/resume-\d{8}T\d{6}Z/)
    expect(readAttempts(aside)).toEqual(after)
    rmSync(aside, { recursive: true, force: true })
  })

  it('refuses to resume into a folder holding another leg', async () => {
    const a = await manifestAndPlan(fx, [scriptCell(fx, 'solver', 'solve.sh')], {}, 'mix-a.yml')
    const dir = out('mix')
    await runLeg({
      loaded: a.loaded,
      plan: a.plan,
      leg: 'solver-s0',
      outDir: dir,
      runId: 'r',
      workRoot: fx.work,
    })
    const b = await manifestAndPlan(fx, [scriptCell(fx, 'idle', 'noop.sh')], {}, 'mix-b.yml')
    await expect(
      runLeg({ loaded: b.loaded, plan: b.plan, leg: 'idle-s0', outDir: dir, runId: 'r', workRoot: fx.work }),
    ).rejects.toMatchObject({ code: 'resume_mismatch' })
    // Same cell and config, but another manifest (a different budget): not resumable either.
    const c = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      { budgets: { timeout_s: 21 } },
      'mix-c.yml',
    )
    await expect(
      runLeg({
        loaded: c.loaded,
        plan: c.plan,
        leg: 'solver-s0',
        outDir: dir,
        runId: 'r',
        workRoot: fx.work,
      }),
    ).rejects.toMatchObject({
      code: 'resume_mismatch',
      message: expect.stringMatching(/another version of the manifest/),
    })
  })
})

describe('runLeg: the harness environment is an allowlist', () => {
  it('passes only the isolation variables, the adapter env, config.env and pass_env (F14)', async () => {
    const dump = path.join(fx.root, 'env-dump')
    process.env.HW_TEST_SECRET = 'runner-secret'
    process.env.HW_TEST_PASSED = 'passed-through'
    try {
      const cell = scriptCell(fx, 'envdump', 'envdump.sh', {
        env: { HW_DUMP: dump, CELL_VAR: 'from-config' },
        pass_env: ['HW_TEST_PASSED', 'HW_TEST_ABSENT'],
      })
      const { loaded, plan } = await manifestAndPlan(
        fx,
        [cell],
        { panel: { source: 'tasks', path: './panel', instances: ['js-add'] } },
        'env.yml',
      )
      const dir = out('env')
      const logs: string[] = []
      await runLeg({
        loaded,
        plan,
        leg: 'envdump-s0',
        outDir: dir,
        runId: 'r',
        workRoot: fx.work,
        log: (l) => logs.push(l),
      })
      const env = Object.fromEntries(
        readFileSync(dump, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      )
      // The command adapter's own variables (Invocation.env) are allowed; so are those bash sets itself.
      const adapterNames = [
        'USER',
        'LOGNAME',
        'SHELL',
        'TZ',
        'NO_COLOR',
        'CI',
        'HW_BASE_URL',
        'HW_OPENAI_BASE_URL',
        'HW_MODEL',
        'HW_API_KEY',
        'HW_PROMPT_FILE',
        'HW_WORKSPACE',
        'OPENAI_BASE_URL',
        'OPENAI_API_KEY',
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_API_KEY',
      ]
      const allowed = new Set([
        'PATH',
        'HOME',
        'XDG_CONFIG_HOME',
        'XDG_DATA_HOME',
        'XDG_CACHE_HOME',
        'XDG_STATE_HOME',
        'TMPDIR',
        'LANG',
        'LC_ALL',
        'TERM',
        ...adapterNames,
        'HW_DUMP',
        'CELL_VAR',
        'HW_TEST_PASSED',
        'PWD',
        'OLDPWD',
        'SHLVL',
        '_',
      ])
      expect(Object.keys(env).filter((k) => !allowed.has(k))).toEqual([])
      expect(env.HW_TEST_SECRET).toBeUndefined()
      expect(env.HW_TEST_PASSED).toBe('passed-through')
      expect(env.CELL_VAR).toBe('from-config')
      expect(env.TERM).toBe('dumb')
      expect(env.LC_ALL).toBe('C.UTF-8')
      // A fresh home of the attempt, never the user's (no stored credentials to find).
      expect(env.HOME).toMatch(new RegExp(`^${fx.work}/h/[0-9a-f]{12}$`))
      expect(env.HOME).not.toBe(process.env.HOME)
      expect(env.XDG_CONFIG_HOME).toBe(`${env.HOME}/.config`)
      expect(env.XDG_DATA_HOME).toBe(`${env.HOME}/.local/share`)
      expect(env.TMPDIR?.startsWith(`${env.HOME}/`)).toBe(true)
      expect(readFileSync(`${dump}.home`, 'utf8').split('\n').filter(Boolean).sort()).toEqual([
        '.cache',
        '.config',
        '.local',
        'tmp',
      ])
      // Workspace path: same length for every attempt.
      expect(env.PWD).toMatch(new RegExp(`^${fx.work}/w/[0-9a-f]{12}$`))
      // A runner variable not present is reported once, not invented.
      expect(logs.join('\n')).toMatch(/pass_env names variables the runner does not have: HW_TEST_ABSENT/)
      // Every runner variable outside the allowlist stayed out.
      const leaked = Object.keys(process.env).filter((k) => k in env && !allowed.has(k))
      expect(leaked).toEqual([])
    } finally {
      delete process.env.HW_TEST_SECRET
      delete process.env.HW_TEST_PASSED
    }
  })
})

describe('plan checks before anything runs', () => {
  it('rejects a plan.json whose instance id would escape the artifact folder', async () => {
    const { loaded, plan } = await manifestAndPlan(fx, [scriptCell(fx, 'solver', 'solve.sh')], {}, 'evil.yml')
    const evil = structuredClone(plan)
    const leg0 = evil.legs[0]
    if (!leg0) throw new Error('no leg')
    leg0.instances = ['../../escape', ...leg0.instances]
    const planFile = path.join(fx.root, 'evil-plan.json')
    writeFileSync(planFile, JSON.stringify(evil))
    const err = await loadPlan(planFile).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).code).toBe('plan_invalid')
    expect((err as HwError).details.join('\n')).toMatch(/legs\[0\]\.instances\[0\]/)
    const dir = out('evil')
    await expect(
      runLeg({ loaded, plan: evil, leg: 'solver-s0', outDir: dir, runId: 'r', workRoot: fx.work }),
    ).rejects.toMatchObject({ code: 'plan_invalid' })
    expect(existsSync(dir)).toBe(false)
  })

  it('F09: rejects a leg that lists an instance twice, naming it', async () => {
    const { loaded, plan } = await manifestAndPlan(fx, [scriptCell(fx, 'solver', 'solve.sh')], {}, 'dup.yml')
    const dup = structuredClone(plan)
    const leg0 = dup.legs[0]
    if (!leg0) throw new Error('no leg')
    leg0.instances = [...leg0.instances, leg0.instances[0] ?? '']
    const dir = out('dup')
    const err = await runLeg({ loaded, plan: dup, leg: 'solver-s0', outDir: dir, runId: 'r' }).catch(
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toBe(`leg "solver-s0" lists instance "${leg0.instances[0]}" twice`)
    expect(existsSync(dir)).toBe(false)
  })

  it('rejects a stale plan (manifest changed since planning) and an unknown leg', async () => {
    const { file, loaded, plan } = await manifestAndPlan(
      fx,
      [scriptCell(fx, 'solver', 'solve.sh')],
      {},
      'drift.yml',
    )
    const drifted = { ...loaded, sha256: 'f'.repeat(64) }
    await expect(
      runLeg({ loaded: drifted, plan, leg: 'solver-s0', outDir: out('drift'), runId: 'r' }),
    ).rejects.toMatchObject({ code: 'plan_stale' })
    await expect(
      runLeg({ loaded, plan, leg: 'nope-s9', outDir: out('drift'), runId: 'r' }),
    ).rejects.toMatchObject({ code: 'leg_unknown' })
    expect(existsSync(out('drift'))).toBe(false)
    expect(file).toContain('drift.yml')
  })
})
