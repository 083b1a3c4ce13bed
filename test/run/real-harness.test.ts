import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { stringify } from 'yaml'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { runLeg } from '../../src/run/leg.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import { builtinPanelsDir } from '../../src/util/paths.js'
import { makeFixture, readAttempts, readLedger, readLegJson, removeFixture } from './fixture.js'
import { PI_VERSION, usePi } from './pi.js'

// Real Pi from npm (installed into the shared harness cache), driven by the scripted model through the
// recording proxy, on two tasks of the built-in panel: the run stage end to end with a real harness.

const skipWithoutPi = usePi()

let tel: RunTelemetry | null = null
afterAll(async () => {
  await tel?.close()
})

describe('run stage with a real harness (Pi)', () => {
  it('runs a Pi leg on built-in tasks: resolved, graded, telemetry complete and attributed', async (ctx) => {
    skipWithoutPi(ctx)
    const fx = makeFixture()
    onTestFinished(() => removeFixture(fx))
    const manifest = {
      schema_version: 1,
      experiment: { id: 'run-pi' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 0.25, output: 2, cache_read: 0.025 },
        scripted: { seed: 1, success_rate: 1 },
      },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { kind: 'task-tests', timeout_s: 120 } },
      panel: {
        source: 'tasks',
        path: builtinPanelsDir().concat('/core'),
        instances: ['js-fix-slugify', 'py-fix-word-wrap'],
      },
      cells: [{ id: 'pi', harness: 'pi', version: PI_VERSION }],
      baseline: 'pi',
      budgets: { timeout_s: 180, max_requests: 40 },
    }
    const file = path.join(fx.root, 'pi.yml')
    writeFileSync(file, stringify(manifest))
    const loaded = await loadManifest(file)
    const panel = await resolvePanel(loaded.manifest, loaded.dir, file)
    const plan = buildPlan(loaded, panel)
    tel = await openRunTelemetry({
      manifest: loaded.manifest,
      tasksDir: panel.tasksDir,
      runId: 'run-pi',
      journalFile: path.join(fx.root, 'journal.jsonl'),
    })
    const dir = path.join(fx.root, 'out', 'pi')
    const leg = await runLeg({
      loaded,
      plan,
      leg: 'pi-s0',
      outDir: dir,
      runId: 'run-pi',
      workRoot: fx.work,
      capture: tel.capture,
    })
    expect(leg.status).toBe('complete')
    expect(readLegJson(dir).harness_version_observed).toBe(PI_VERSION)
    const attempts = readAttempts(dir)
    expect(attempts).toHaveLength(2)
    for (const a of attempts) {
      expect(a.exit.class).toBe('clean')
      expect(a.verifier.status).toBe('pass')
      expect(a.outcome).toBe('resolved')
      expect(a.deliverable.files_changed).toBeGreaterThan(0)
      expect(a.telemetry.coverage).toBe('complete')
      expect(a.telemetry.proxy_requests).toBeGreaterThan(1)
      expect(a.telemetry.spend_usd).toBeGreaterThan(0)
      // Pi reports its own usage; the proxy's numbers stand and the two agree.
      expect(a.self_report?.input_tokens).toBeGreaterThan(0)
      expect(a.telemetry.flags).not.toContain('self_report_divergence')
    }
    const rows = readLedger(dir)
    expect(rows).toHaveLength(attempts.reduce((n, a) => n + a.telemetry.rows, 0))
    expect(new Set(rows.map((r) => r.attribution?.instance_id))).toEqual(
      new Set(['js-fix-slugify', 'py-fix-word-wrap']),
    )
  }, 600_000)
})
