import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { stringify } from 'yaml'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { runLeg } from '../../src/run/leg.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import { makeFixture, readAttempts, readLedger, removeFixture } from './fixture.js'
import { PI_VERSION, usePi } from './pi.js'

// One multi-turn bridge task (a simulated user with a hidden scenario) through the real run stage on
// the real Pi CLI, the scripted model playing both the harness's model and the user through the proxy.

const skipWithoutPi = usePi()

let tel: RunTelemetry | null = null
afterAll(async () => {
  await tel?.close()
})

describe('the run stage drives a simulated-user dialogue (Pi)', () => {
  it('resumes the session each turn, keeps the world, grades once at the end, and keeps the user’s spend apart', async (ctx) => {
    skipWithoutPi(ctx)
    const fx = makeFixture()
    onTestFinished(() => removeFixture(fx))
    const manifest = {
      schema_version: 1,
      experiment: { id: 'run-dialogue' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 0.25, output: 2, cache_read: 0.025 },
        scripted: { seed: 1, success_rate: 1 },
      },
      user_model: { id: 'user-sim', provider: 'scripted', max_turns: 6 },
      benchmark: { family: 'builtin', revision: 'bridge-v1' },
      panel: { source: 'builtin', name: 'bridge-state', instances: ['state-user-address'] },
      cells: [{ id: 'pi', harness: 'pi', version: PI_VERSION }],
      baseline: 'pi',
      budgets: { timeout_s: 180, max_requests: 40 },
    }
    const file = path.join(fx.root, 'dialogue.yml')
    writeFileSync(file, stringify(manifest))
    const loaded = await loadManifest(file)
    const panel = await resolvePanel(loaded.manifest, loaded.dir, file)
    const plan = buildPlan(loaded, panel)
    tel = await openRunTelemetry({
      manifest: loaded.manifest,
      tasksDir: panel.tasksDir,
      runId: 'run-dialogue',
      journalFile: path.join(fx.root, 'journal.jsonl'),
    })
    const dir = path.join(fx.root, 'out', 'pi')
    const leg = await runLeg({
      loaded,
      plan,
      leg: plan.legs[0]?.leg ?? 'pi-s0',
      outDir: dir,
      runId: 'run-dialogue',
      workRoot: fx.work,
      capture: tel.capture,
    })
    expect(leg.status).toBe('complete')
    const [a] = readAttempts(dir)
    if (!a) throw new Error('no attempt recorded')
    // instruction + the scenario's two sentences, then the user's STOP
    expect(a.dialogue).toMatchObject({ turns: 3, ended: 'stop', resumed_session: true })
    const logs = path.join(dir, a.logs_dir)
    const transcript = JSON.parse(readFileSync(path.join(logs, 'dialogue.json'), 'utf8'))
    expect(transcript.history.filter((m: { role: string }) => m.role === 'user')[1].text).toBe(
      'I am Ada Lovelace.',
    )
    // turn 2 and 3 resumed turn 1's session with Pi's flag
    expect(readFileSync(path.join(logs, 'turn-2.stdout.txt'), 'utf8')).toContain(transcript.session)
    // the world persisted: both reference calls in one calls.jsonl, the end state graded once → pass
    const calls = readFileSync(path.join(logs, 'calls.jsonl'), 'utf8').trim().split('\n')
    expect(calls.map((l) => JSON.parse(l).tool)).toEqual(['get_order', 'update_address'])
    expect(a.verifier.status).toBe('pass')
    expect(a.outcome).toBe('resolved')
    // the user's three requests are its own rows, never in the harness's telemetry
    const rows = readLedger(dir)
    const userRows = rows.filter((r) => r.attribution?.role === 'user_simulation')
    expect(userRows).toHaveLength(3)
    expect(a.dialogue?.user_simulation.requests).toBe(3)
    expect(a.dialogue?.user_simulation.spend_usd).toBeGreaterThan(0)
    expect(a.telemetry.rows).toBe(rows.length - 3)
    const harnessSpend = rows
      .filter((r) => r.attribution?.role !== 'user_simulation')
      .reduce((s, r) => s + (r.spend_usd ?? 0), 0)
    expect(a.telemetry.spend_usd).toBeCloseTo(harnessSpend, 9)
    // turn 2's request carried turn 1's conversation (prompt, two tool calls and results, answer)
    const harnessRows = rows.filter((r) => r.attribution?.role !== 'user_simulation')
    const sizes = harnessRows.map((r) => r.request_shape?.messages ?? 0)
    expect(harnessRows).toHaveLength(5) // turn 1: two calls and the answer; turns 2 and 3: one answer each
    expect(sizes[3]).toBeGreaterThanOrEqual((sizes[2] ?? 0) + 2)
    expect(sizes[4]).toBeGreaterThanOrEqual((sizes[3] ?? 0) + 2)
  }, 300_000)
})
