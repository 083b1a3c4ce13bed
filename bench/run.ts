// Run-stage orchestration overhead per attempt: workspace copy + git init/commit, home dirs, env,
// deliverable diff, verifier launch, records. The harness itself is excluded: a no-op command harness
// (`true`) runs, and its own phase time is subtracted. Task folder: 1 MB (200 files × 5 KB).
// Targets per isolation backend (median overhead, workspaces on disk, no capture):
//   none, env-only (unisolated)  ≤ 150 ms
//   namespace+uid (isolated)     ≤ 1 s   (measured only where it probes ok: Linux, root or sudo)
// Each line says where the time goes: setup and verifier phases, the sandbox jobs the attempt opened
// (count × the backend's own open + close), and the rest (workspace, diff, records).
// Run: npm run bench -- run   or   npx tsx bench/run.ts [attempts]
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
import type { HostIsolation as Isolation } from '../src/sandbox/select.js'
import { BACKENDS, resetSandboxChoices } from '../src/sandbox/select.js'

/** Median overhead per attempt, by isolation backend. */
const TARGET_MS: Record<Isolation, number> = { none: 150, 'env-only': 150, 'namespace+uid': 1000 }
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
const manifestFor = (backend: Isolation) => ({
  schema_version: 1,
  experiment: { id: 'bench-run' },
  model: { id: 'm', provider: 'scripted', api: 'chat' },
  benchmark: { family: 'bench', revision: 'r1' },
  panel: { source: 'tasks', path: './panel' },
  cells: [{ id: 'noop', harness: 'command', version: '1', config: { command: 'true' } }],
  baseline: 'noop',
  trials: attempts,
  budgets: { timeout_s: 60 },
  sandbox: { backend, allow_unisolated: backend !== 'namespace+uid' },
})

// Sandbox jobs opened per attempt: every backend's open() is counted.
const opened: Record<Isolation, number> = { none: 0, 'env-only': 0, 'namespace+uid': 0 }
for (const kind of Object.keys(BACKENDS) as Isolation[]) {
  const b = BACKENDS[kind]
  const open = b.open.bind(b)
  b.open = (spec) => {
    opened[kind]++
    return open(spec)
  }
}

/** The backend's own cost of one job around the command: open + close (exec `true` excluded), median of 7. */
async function jobCost(kind: Isolation): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < 7; i++) {
    const ws = mkdtempSync(path.join(root, `job-${kind}-`))
    const t0 = performance.now()
    const box = await BACKENDS[kind].open({ writable: [ws], readOnly: [] })
    const t1 = performance.now()
    await box.exec(
      { command: 'true', args: [], cwd: ws, env: { PATH: '/usr/bin:/bin', HOME: ws } },
      { timeoutMs: 30_000, graceMs: 1000, stdoutFile: path.join(ws, 'o'), stderrFile: path.join(ws, 'e') },
    )
    const t2 = performance.now()
    await box.close()
    times.push(t1 - t0 + (performance.now() - t2))
  }
  return q(times, 0.5)
}

async function measure(
  label: string,
  backend: Isolation,
  withCapture: boolean,
  workRoot = path.join(root, 'wk'),
): Promise<number> {
  const file = path.join(root, `manifest-${backend}.yml`)
  write(file, stringify(manifestFor(backend)))
  const loaded = await loadManifest(file)
  const panel = await resolvePanel(loaded.manifest, loaded.dir)
  const plan = buildPlan(loaded, panel)
  resetSandboxChoices()
  const out = path.join(root, `out-${label}`.replace(/[^\w.-]+/g, '-'))
  const tel = withCapture
    ? await openRunTelemetry({
        manifest: loaded.manifest,
        tasksDir: panel.tasksDir,
        runId: 'bench',
        journalFile: path.join(root, 'journal.jsonl'),
      })
    : null
  const opensBefore = opened[backend]
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
  // The canary self-test opens jobs too, before the first attempt; spread them out of the count.
  const jobs = Math.max(0, opened[backend] - opensBefore) / records.length
  const job = await jobCost(backend)
  const med = q(overhead, 0.5)
  const rest = med - q(setup, 0.5) - q(verifier, 0.5)
  console.log(
    `${label}: ${records.length} attempts, 1 MB task folder; overhead per attempt (harness excluded): ` +
      `median ${med.toFixed(1)} ms, p90 ${q(overhead, 0.9).toFixed(1)} ms\n` +
      `  where it goes (medians): setup ${q(setup, 0.5).toFixed(1)} ms, verifier ${q(verifier, 0.5).toFixed(1)} ms, ` +
      `the rest (workspace diff, records, harness launch) ${rest.toFixed(1)} ms; ` +
      `sandbox: ${jobs.toFixed(1)} jobs per attempt (incl. the canary's share) × ${job.toFixed(1)} ms open + close ≈ ${(jobs * job).toFixed(1)} ms of it\n` +
      `  leg wall per attempt incl. records ${perAttemptWall.toFixed(1)} ms; no-op harness median ${q(harness, 0.5).toFixed(1)} ms`,
  )
  return med
}

function q(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))
  return s[i] ?? Number.NaN
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
}

const verdicts: string[] = []
let ok = true
for (const backend of ['none', 'env-only', 'namespace+uid'] as const) {
  if (backend === 'namespace+uid') {
    const probe = await BACKENDS[backend].probe()
    if (!probe.ok) {
      verdicts.push(`${backend}: skipped (${probe.reason ?? 'probe failed'})`)
      continue
    }
  }
  const median = await measure(`${backend}, no capture`, backend, false)
  const met = median <= TARGET_MS[backend]
  ok &&= met
  verdicts.push(
    `${backend}: median ${median.toFixed(1)} ms ≤ ${TARGET_MS[backend]} ms → ${met ? 'met' : 'MISSED'}`,
  )
}
await measure('none, ledger capture', 'none', true)
if (existsSync('/dev/shm')) {
  // For reference: the same with workspaces on tmpfs (disk writes dominate on a busy machine).
  const shm = mkdtempSync('/dev/shm/hw-bench-')
  await measure('none, no capture, workspaces on tmpfs', 'none', false, shm)
  rmSync(shm, { recursive: true, force: true })
}
rmSync(root, { recursive: true, force: true })
console.log(
  `targets (disk, no capture): ${verdicts.join('; ')}; ` +
    `load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`,
)
process.exit(ok ? 0 : 1)
