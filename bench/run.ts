// Run-stage orchestration overhead per attempt: workspace copy + git init/commit, home dirs, env,
// deliverable diff, verifier launch, records. The harness itself is excluded: a no-op command harness
// (`true`) runs, and its own phase time is subtracted. Task folder: 1 MB (200 files × 5 KB).
// Target: median ≤ 150 ms. Run: npx tsx bench/run.ts [attempts]
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { stringify } from 'yaml'
import { loadManifest } from '../src/manifest/load.js'
import { resolvePanel } from '../src/panel/resolve.js'
import { buildPlan } from '../src/plan/plan.js'
import type { AttemptRecord } from '../src/records/attempt.js'
import { runLeg } from '../src/run/leg.js'
import { openRunTelemetry } from '../src/run/telemetry-setup.js'

const TARGET_MS = 150
const attempts = Number(process.argv[2] ?? 40)

const root = mkdtempSync(path.join(tmpdir(), 'hw-bench-run-'))
const task = path.join(root, 'panel', 'bench-task')
const write = (file: string, text: string | Buffer): void => {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
}
write(path.join(task, 'instruction.md'), 'Do nothing.\n')
write(
  path.join(task, 'task.toml'),
  '[metadata]\ndifficulty = "easy"\nlanguage = "javascript"\ncategory = "bugfix"\n[verifier]\ntimeout_sec = 30\n',
)
write(path.join(task, 'tests', 'test.sh'), '#!/usr/bin/env bash\nexit 0\n')
for (let i = 0; i < 200; i++) {
  write(path.join(task, 'environment', `d${i % 10}`, `f${i}.txt`), randomBytes(2560).toString('hex'))
}
const manifest = {
  schema_version: 1,
  experiment: { id: 'bench-run' },
  model: { id: 'm', provider: 'scripted', api: 'chat' },
  benchmark: { family: 'bench', revision: 'r1' },
  panel: { source: 'tasks', path: './panel' },
  cells: [{ id: 'noop', harness: 'command', version: '1', config: { command: 'true' } }],
  baseline: 'noop',
  trials: attempts,
  budgets: { timeout_s: 60 },
}
write(path.join(root, 'manifest.yml'), stringify(manifest))

const loaded = await loadManifest(path.join(root, 'manifest.yml'))
const panel = await resolvePanel(loaded.manifest, loaded.dir)
const plan = buildPlan(loaded, panel)

async function measure(
  label: string,
  withCapture: boolean,
  workRoot = path.join(root, 'wk'),
): Promise<number> {
  const out = path.join(root, `out-${label}`)
  const tel = withCapture
    ? await openRunTelemetry({
        manifest: loaded.manifest,
        tasksDir: panel.tasksDir,
        runId: 'bench',
        journalFile: path.join(root, 'journal.jsonl'),
      })
    : null
  const t0 = performance.now()
  await runLeg({
    loaded,
    plan,
    leg: 'noop-s0',
    outDir: out,
    runId: 'bench',
    workRoot,
    capture: tel?.capture ?? null,
  })
  const wall = performance.now() - t0
  await tel?.close()
  const records = readFileSync(path.join(out, 'attempts.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AttemptRecord)
  // Warm-up: the first attempts load modules and fill caches.
  const warm = records.slice(Math.min(3, records.length - 1))
  const overhead = warm.map((r) => Date.parse(r.ended_at) - Date.parse(r.started_at) - r.phases_ms.harness)
  const harness = records.map((r) => r.phases_ms.harness)
  const setup = warm.map((r) => r.phases_ms.setup)
  const verifier = warm.map((r) => r.phases_ms.verifier)
  const perAttemptWall = wall / records.length - mean(harness)
  console.log(
    `${label}: ${records.length} attempts, 1 MB task folder; overhead per attempt (harness excluded): ` +
      `median ${q(overhead, 0.5).toFixed(1)} ms, p90 ${q(overhead, 0.9).toFixed(1)} ms ` +
      `[setup median ${q(setup, 0.5).toFixed(1)} ms, verifier median ${q(verifier, 0.5).toFixed(1)} ms; ` +
      `leg wall per attempt incl. records ${perAttemptWall.toFixed(1)} ms; no-op harness median ${q(harness, 0.5).toFixed(1)} ms]`,
  )
  return q(overhead, 0.5)
}

function q(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))
  return s[i] ?? Number.NaN
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
}

const median = await measure('no capture', false)
await measure('ledger capture', true)
if (existsSync('/dev/shm')) {
  // For reference: the same with workspaces on tmpfs (disk writes dominate on a busy machine).
  const shm = mkdtempSync('/dev/shm/hw-bench-')
  await measure('no capture, workspaces on tmpfs', false, shm)
  rmSync(shm, { recursive: true, force: true })
}
rmSync(root, { recursive: true, force: true })
const ok = median <= TARGET_MS
console.log(
  `target: median ≤ ${TARGET_MS} ms (disk, no capture) → ${ok ? 'met' : 'MISSED'}; ` +
    `load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`,
)
process.exit(ok ? 0 : 1)
