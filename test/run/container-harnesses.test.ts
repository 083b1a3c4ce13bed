import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it, onTestFinished } from 'vitest'
import { stringify } from 'yaml'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import type { HarnessName, WireApi } from '../../src/manifest/harness-names.js'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { runLeg } from '../../src/run/leg.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import { builtinPanelsDir } from '../../src/util/paths.js'
import { containerEnv } from '../support/container.js'
import { makeFixture, readAttempts, readLedger, removeFixture } from './fixture.js'

// Every npm harness CLI (pinned as in the conformance suite) runs one attempt on one built-in task
// inside a container of the Debian base image, as a leg runs it: the harness install and the host's
// Node mounted read-only, a per-attempt home, proxy-only network, the scripted model behind the
// recording proxy, the task's tests graded in the same container. One engine run at a time (heavy).

const env = await containerEnv()
if (env.reason) console.warn(`container harness tests skipped: ${env.reason}`)

/** The versions of the conformance suite; `HW_CONTAINER_HARNESSES=codex,qwen-code` runs a subset. */
const PINNED: { harness: HarnessName; version: string; api: WireApi; model: string }[] = [
  { harness: 'pi', version: '0.73.1', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'opencode', version: '1.18.33', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'codex', version: '0.171.0', api: 'responses', model: 'gpt-5-mini' },
  { harness: 'claude-code', version: '2.1.332', api: 'anthropic', model: 'claude-sonnet-4-5' },
  { harness: 'gemini-cli', version: '0.61.0', api: 'gemini', model: 'gemini-2.5-flash' },
  { harness: 'copilot', version: '1.0.102', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'qwen-code', version: '0.24.4', api: 'chat', model: 'qwen3-coder-plus' },
]
const only = (process.env.HW_CONTAINER_HARNESSES ?? '').split(',').filter((s) => s.trim() !== '')
// A JavaScript task: its tests run with the Node the backend mounts (the base image has none). Its
// reference fix holds no backtick or `$(`, which Gemini CLI's shell tool refuses as command substitution.
const INSTANCE = 'js-fix-slugify'

const telemetries: RunTelemetry[] = []
afterAll(async () => {
  for (const t of telemetries) await t.close()
})

describe.skipIf(env.runtime === null)(
  'npm harnesses inside the container backend (real engine, real CLIs)',
  () => {
    for (const pin of PINNED.filter((p) => only.length === 0 || only.includes(p.harness))) {
      it(`${pin.harness}@${pin.version}: resolves ${INSTANCE} in the base image, every request through the proxy`, async (ctx) => {
        try {
          await adapterFor(pin.harness).install(pin.version, { cacheDir: defaultCacheDir(), log: () => {} })
        } catch (e) {
          const why = `${pin.harness} ${pin.version} cannot be installed here: ${(e as Error).message.split('\n')[0]}`
          console.warn(`skipped: ${why}`)
          ctx.skip()
          return
        }
        const fx = makeFixture()
        // HW_CONTAINER_KEEP=1 keeps the leg's folder (attempt logs, ledger) for a look.
        onTestFinished(() =>
          process.env.HW_CONTAINER_KEEP ? console.log(`kept ${fx.root}`) : removeFixture(fx),
        )
        const runId = `ctr-${pin.harness}`
        const manifest = {
          schema_version: 1,
          experiment: { id: runId },
          model: {
            id: pin.model,
            provider: 'scripted',
            api: pin.api,
            prices: { input: 0.25, output: 2, cache_read: 0.025 },
            scripted: { seed: 1, success_rate: 1 },
          },
          benchmark: {
            family: 'builtin',
            revision: 'core-v1',
            verifier: { kind: 'task-tests', timeout_s: 120 },
          },
          panel: { source: 'tasks', path: `${builtinPanelsDir()}/core`, instances: [INSTANCE] },
          cells: [{ id: 'h', harness: pin.harness, version: pin.version }],
          baseline: 'h',
          budgets: { timeout_s: 300, max_requests: 40 },
          sandbox: {
            backend: 'container',
            allow_unisolated: true,
            container: {
              runtime: env.runtime?.name ?? 'auto',
              image: env.baseRef,
              network: 'proxy-only',
              resources: { cpus: 1, memory_mb: 2048, pids: 1024 },
            },
          },
        }
        const file = path.join(fx.root, 'm.yml')
        writeFileSync(file, stringify(manifest))
        const loaded = await loadManifest(file)
        const panel = await resolvePanel(loaded.manifest, loaded.dir, file)
        const plan = buildPlan(loaded, panel)
        const tel = await openRunTelemetry({
          manifest: loaded.manifest,
          tasksDir: panel.tasksDir,
          runId,
          journalFile: path.join(fx.root, 'journal.jsonl'),
        })
        telemetries.push(tel)
        const dir = path.join(fx.root, 'out')
        const leg = await runLeg({
          loaded,
          plan,
          leg: 'h-s0',
          outDir: dir,
          runId,
          workRoot: fx.work,
          capture: tel.capture,
        })
        const [a, ...rest] = readAttempts(dir)
        console.log(
          `${pin.harness}@${pin.version} in ${env.runtime?.name}: outcome ${a?.outcome}, ${a?.telemetry.proxy_requests} proxy requests, harness ${((a?.phases_ms.harness ?? 0) / 1000).toFixed(1)} s`,
        )
        expect(rest).toHaveLength(0)
        expect(leg.status).toBe('complete')
        expect(a?.isolation).toBe('container')
        expect(a?.network).toBe('proxy-only')
        expect(a?.environment).toMatchObject({
          runtime: env.runtime?.name,
          image_ref: env.baseRef,
          network: { agent: 'proxy-only' },
        })
        expect(a?.environment?.image_id).toMatch(/^sha256:[0-9a-f]{64}$/)
        expect(a?.exit.class).toBe('clean')
        expect(a?.verifier.status).toBe('pass')
        expect(a?.outcome).toBe('resolved')
        expect(a?.deliverable.files_changed).toBeGreaterThan(0)
        // The proxy saw the harness's requests: the ledger holds them, attributed to this attempt.
        expect(a?.telemetry.coverage).toBe('complete')
        expect(a?.telemetry.proxy_requests).toBeGreaterThan(1)
        const rows = readLedger(dir)
        expect(rows).toHaveLength(a?.telemetry.rows ?? -1)
        expect(rows.every((r) => r.attribution?.instance_id === INSTANCE)).toBe(true)
        expect(rows.every((r) => r.model === pin.model)).toBe(true)
      }, 900_000)
    }
  },
)
