// Benchmark of the diagnose stage: the dossier of 50 blocks × 2 cells, every block a driving instance,
// each attempt with a 200-event Pi trajectory, a patch and 40 ledger rows. Target: ≤ 5 s wall on a
// 2-core machine from reading comparison.json, decision-less, to writing dossier.json and dossier.md
// (mapping every trajectory, every behaviour measure, every request curve). The run folder is written
// by bench/aggregate.ts's writer and aggregated before the clock starts; the comparison's drivers are
// then widened to all 50 blocks so the dossier covers the whole panel. Exits non-zero when missed.
// Run: npm run bench -- diagnose
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { stopWorker } from '../src/ingest/worker.js'
import { aggregate } from '../src/pipeline/aggregate.js'
import { diagnoseRun } from '../src/pipeline/diagnose.js'

const BLOCKS = 50
const EVENTS = 200
const TARGET_S = 5
const root = mkdtempSync(path.join(tmpdir(), 'hw-bench-diagnose-'))
try {
  const w = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      path.join(import.meta.dirname, 'aggregate.ts'),
      '--cells',
      '2',
      '--instances',
      String(BLOCKS),
      '--trials',
      '1',
      '--ledger-rows',
      '40',
      '--write-to',
      root,
    ],
    { stdio: 'inherit' },
  )
  if (w.status !== 0) throw new Error('writing the artifacts failed')
  const artifacts = path.join(root, 'artifacts')
  // Harness of every cell: Pi (the plan's cells are bench harnesses; the mapper is chosen per record).
  for (const leg of readdirSync(artifacts)) {
    const dir = path.join(artifacts, leg)
    const lines = readFileSync(path.join(dir, 'attempts.jsonl'), 'utf8').trim().split('\n')
    const out: string[] = []
    for (const line of lines) {
      const a = JSON.parse(line)
      a.harness = 'pi'
      out.push(JSON.stringify(a))
      const logs = path.join(dir, a.logs_dir)
      mkdirSync(logs, { recursive: true })
      writeFileSync(path.join(logs, 'trajectory.jsonl'), piTrajectory(Date.parse(a.started_at)))
      writeFileSync(
        path.join(logs, 'patch.diff'),
        'diff --git a/src/f3.js b/src/f3.js\n--- a/src/f3.js\n+++ b/src/f3.js\n@@ -1 +1 @@\n-a\n+b\n',
      )
    }
    writeFileSync(path.join(dir, 'attempts.jsonl'), `${out.join('\n')}\n`)
  }
  await aggregate({ plan: path.join(root, 'plan.json'), artifacts, out: root, resamples: 200 })
  const cmpFile = path.join(root, 'comparison.json')
  const cmp = JSON.parse(readFileSync(cmpFile, 'utf8'))
  const listed = new Set(cmp.comparisons[0].drivers.map((d: { instance: string }) => d.instance))
  for (const inst of cmp.instances.map((r: { instance: string }) => r.instance))
    if (!listed.has(inst))
      cmp.comparisons[0].drivers.push({
        instance: inst,
        kind: 'residual',
        metric: 'spend_usd',
        baseline: 1,
        treatment: 1,
        log_ratio: 0,
      })
  writeFileSync(cmpFile, JSON.stringify(cmp))

  const t0 = performance.now()
  const r = await diagnoseRun({ dir: root, maxInstances: BLOCKS })
  const wall = (performance.now() - t0) / 1000
  const events = Object.values(r.dossier.attempts).reduce((s, a) => s + a.trajectory.events.length, 0)
  const mb = statSync(r.dossierJson).size / 1e6
  console.log(
    `dossier: ${r.dossier.comparisons[0]!.instances.length} blocks × 2 cells, ${Object.keys(r.dossier.attempts).length} attempts, ${events} events, dossier.json ${mb.toFixed(1)} MB: ${wall.toFixed(2)} s wall (target ≤ ${TARGET_S} s)`,
  )
  if (wall > TARGET_S) process.exitCode = 1
} finally {
  rmSync(root, { recursive: true, force: true })
  // As the CLI does when a command is done: the aggregate's worker, handed shared memory for the
  // ledgers, would otherwise keep this process from exiting.
  await stopWorker()
}

/** A Pi trajectory of EVENTS tool calls (reads, searches, edits, tests), one per second. */
function piTrajectory(start: number): string {
  const lines: string[] = [
    JSON.stringify({ type: 'session', version: 3, id: 's', timestamp: new Date(start).toISOString() }),
  ]
  for (let i = 0; i < EVENTS; i++) {
    const kind = i % 4
    const [name, args] =
      kind === 0
        ? ['read', { path: `src/f${i % 7}.js` }]
        : kind === 1
          ? ['bash', { command: `grep -rn sym${i % 5} src` }]
          : kind === 2
            ? ['edit', { path: `src/f${i % 3}.js`, oldText: 'a', newText: 'b' }]
            : ['bash', { command: 'npm test' }]
    const id = `c${i}`
    lines.push(
      JSON.stringify({
        type: 'message_end',
        message: {
          role: 'assistant',
          timestamp: start + i * 1000,
          content: [{ type: 'toolCall', id, name, arguments: args }],
        },
      }),
    )
    lines.push(
      JSON.stringify({
        type: 'tool_execution_end',
        toolCallId: id,
        result: { content: [{ type: 'text', text: `output ${i % 11}\n`.repeat(20) }] },
        isError: kind === 3 && i % 8 === 3,
      }),
    )
  }
  lines.push(
    JSON.stringify({
      type: 'message_end',
      message: {
        role: 'assistant',
        timestamp: start + EVENTS * 1000,
        content: [{ type: 'text', text: 'done' }],
      },
    }),
  )
  return `${lines.join('\n')}\n`
}
