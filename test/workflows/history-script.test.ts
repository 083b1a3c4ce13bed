// scripts/history.sh, the weekly history step of harness-watch.yml, run as the workflow runs it
// (bash, jq) with the CLI from source: three weeks carried from one run's history artifact to the
// next, the final decision taken from the confirmation, the series trimmed to HW_HISTORY_RUNS.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { beforeAll, describe, expect, it } from 'vitest'
import { detect } from '../../src/detect/decide.js'
import { HistorySchema } from '../../src/detect/history.js'
import type { Comparison } from '../../src/records/comparison.js'
import { strictJson } from '../../src/util/json.js'
import { policy, ref } from '../detect/fixtures.js'
import { weeklyRun } from '../detect/history-fixtures.js'
import { root } from './support.js'

const SCRIPT = path.join(root, 'scripts', 'history.sh')
const CLI = `${path.join(root, 'node_modules', '.bin', 'tsx')} ${path.join(root, 'src', 'cli', 'entry.ts')}`

let weeks: Comparison[]
beforeAll(async () => {
  weeks = [
    await weeklyRun('901', '2026-11-02T06:00:00.000Z', { both: 8, bOnly: 0, cOnly: 2, neither: 2 }),
    await weeklyRun('902', '2026-11-09T06:00:00.000Z', { both: 2, bOnly: 6, cOnly: 0, neither: 4 }),
    await weeklyRun('903', '2026-11-16T06:00:00.000Z', { both: 2, bOnly: 6, cOnly: 0, neither: 4 }),
  ]
}, 60_000)

/** One job's workspace: hw-out (report artifact), hw-confirmation, hw-previous-history. */
function job(c: Comparison, opts: { previous?: string; confirmed?: boolean } = {}): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'hw-history-job-'))
  mkdirSync(path.join(ws, 'hw-out'))
  writeFileSync(path.join(ws, 'hw-out', 'comparison.json'), strictJson(c))
  const d = detect({ current: ref(c), policy, quarantine: [] })
  writeFileSync(path.join(ws, 'hw-out', 'decision.json'), strictJson(d))
  if (opts.confirmed) {
    mkdirSync(path.join(ws, 'hw-confirmation'))
    const confirmed = {
      ...d,
      status: 'confirmed',
      signals: d.signals.map((s) => (s.metric === 'resolved' ? { ...s, state: 'confirmed' } : s)),
    }
    writeFileSync(path.join(ws, 'hw-confirmation', 'decision.json'), strictJson(confirmed))
  }
  if (opts.previous) cpSync(opts.previous, path.join(ws, 'hw-previous-history'), { recursive: true })
  return ws
}

async function runScript(ws: string, env: Record<string, string> = {}) {
  const out = path.join(ws, 'github-output')
  writeFileSync(out, '')
  const r = await execa('bash', [SCRIPT], {
    cwd: ws,
    reject: false,
    env: { HW_CLI: CLI, GITHUB_OUTPUT: out, ...env },
  })
  return { ...r, outputs: readFileSync(out, 'utf8') }
}

describe('scripts/history.sh carries the series from week to week', () => {
  it('week 1 starts the series; week 2 adds to it with the confirmed decision; week 3 keeps the newest two', async () => {
    const w1 = job(weeks[0]!)
    const r1 = await runScript(w1)
    expect(r1.exitCode, r1.stderr).toBe(0)
    expect(r1.stdout).toContain('history: 0 earlier run(s) from the previous history')
    expect(r1.outputs).toBe('runs=hw-history/runs\nhtml=hw-history/history.html\n')
    expect(readdirSync(path.join(w1, 'hw-history', 'runs'))).toEqual(['901-r0'])

    const w2 = job(weeks[1]!, { previous: path.join(w1, 'hw-history'), confirmed: true })
    const r2 = await runScript(w2)
    expect(r2.exitCode, r2.stderr).toBe(0)
    expect(r2.stdout).toContain('history: 1 earlier run(s) from the previous history')
    const h2 = HistorySchema.parse(
      JSON.parse(readFileSync(path.join(w2, 'hw-history', 'history.json'), 'utf8')),
    )
    expect(h2.runs.map((r) => r.run_id)).toEqual(['901', '902'])
    expect(h2.runs[1]!.decision!.status).toBe('confirmed')
    expect(h2.runs[1]!.confirmed_breaches.map((b) => b.metric)).toEqual(['resolved'])
    expect(h2.runs[1]!.change_points.map((c) => [c.cell, c.direction])).toEqual([['b', 'regression']])
    expect(existsSync(path.join(w2, 'hw-history', 'history.html'))).toBe(true)

    const w3 = job(weeks[2]!, { previous: path.join(w2, 'hw-history') })
    const r3 = await runScript(w3, { HW_HISTORY_RUNS: '2' })
    expect(r3.exitCode, r3.stderr).toBe(0)
    expect(readdirSync(path.join(w3, 'hw-history', 'runs')).sort()).toEqual(['902-r0', '903-r0'])
    const h3 = HistorySchema.parse(
      JSON.parse(readFileSync(path.join(w3, 'hw-history', 'history.json'), 'utf8')),
    )
    expect(h3.runs.map((r) => r.run_id)).toEqual(['902', '903'])
    // week 2's final (confirmed) decision travelled with it
    expect(h3.runs[0]!.decision!.status).toBe('confirmed')
  }, 120_000)

  it('run ids that sanitise alike keep folders of their own; a leading dot never hides a run', async () => {
    const prev = mkdtempSync(path.join(tmpdir(), 'hw-history-forged-'))
    for (const [dir, c] of [
      ['one', { ...weeks[0]!, run_id: 'a/b' }],
      ['two', { ...weeks[1]!, run_id: 'a_b' }],
    ] as const) {
      mkdirSync(path.join(prev, 'runs', dir), { recursive: true })
      writeFileSync(path.join(prev, 'runs', dir, 'comparison.json'), strictJson(c))
    }
    const ws = job({ ...weeks[2]!, run_id: '..' }, { previous: prev })
    const r = await runScript(ws)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain('history: 2 earlier run(s) from the previous history')
    const hash = async (s: string) =>
      (await execa('bash', ['-c', `printf '%s' "$1" | sha256sum | cut -c1-12`, '_', s])).stdout
    expect(readdirSync(path.join(ws, 'hw-history', 'runs')).sort()).toEqual(
      [`_..-r0-${await hash('..-r0')}`, 'a_b-r0', `a_b-r0-${await hash('a/b-r0')}`].sort(),
    )
    const h = HistorySchema.parse(
      JSON.parse(readFileSync(path.join(ws, 'hw-history', 'history.json'), 'utf8')),
    )
    expect(h.runs.map((x) => x.run_id)).toEqual(['a/b', 'a_b', '..'])

    // carried again next week, each run keeps its folder (the name comes from the id, not the folder)
    const next = job(
      { ...weeks[2]!, run_id: '904', stamp: { ...weeks[2]!.stamp, started_at: '2026-11-23T06:00:00.000Z' } },
      {
        previous: path.join(ws, 'hw-history'),
      },
    )
    const r2 = await runScript(next)
    expect(r2.exitCode, r2.stderr).toBe(0)
    expect(readdirSync(path.join(next, 'hw-history', 'runs'))).toHaveLength(4)
  }, 120_000)

  it('a run id too long for a folder name is cut with its hash; none is lost', async () => {
    const prev = mkdtempSync(path.join(tmpdir(), 'hw-history-long-'))
    const long = 'x'.repeat(300)
    const unicode = 'é'.repeat(200)
    for (const [dir, c] of [
      ['one', { ...weeks[0]!, run_id: long }],
      ['two', { ...weeks[1]!, run_id: unicode }],
    ] as const) {
      mkdirSync(path.join(prev, 'runs', dir), { recursive: true })
      writeFileSync(path.join(prev, 'runs', dir, 'comparison.json'), strictJson(c))
    }
    const ws = job({ ...weeks[2]!, run_id: `${long}y` }, { previous: prev })
    const r = await runScript(ws)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).not.toContain('too long')
    expect(r.stdout).toContain('history: 2 earlier run(s) from the previous history')
    const names = readdirSync(path.join(ws, 'hw-history', 'runs'))
    expect(names).toHaveLength(3)
    for (const n of names) expect(Buffer.byteLength(n)).toBeLessThanOrEqual(133)
    const h = HistorySchema.parse(
      JSON.parse(readFileSync(path.join(ws, 'hw-history', 'history.json'), 'utf8')),
    )
    expect(h.runs.map((x) => x.run_id)).toEqual([long, unicode, `${long}y`])
  }, 120_000)

  it('an unreadable earlier file is left out with a warning naming it; no report: nothing to do', async () => {
    const prev = mkdtempSync(path.join(tmpdir(), 'hw-history-prev-'))
    mkdirSync(path.join(prev, 'runs', 'broken'), { recursive: true })
    writeFileSync(path.join(prev, 'runs', 'broken', 'comparison.json'), '{ not json')
    const ws = job(weeks[0]!, { previous: prev })
    const r = await runScript(ws)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      '::warning::history: hw-previous-history/runs/broken/comparison.json is not a readable comparison.json; left out of the series',
    )
    expect(r.stdout).toContain('history: 0 earlier run(s) from the previous history')
    expect(readdirSync(path.join(ws, 'hw-history', 'runs'))).toEqual(['901-r0'])

    const empty = mkdtempSync(path.join(tmpdir(), 'hw-history-empty-'))
    const none = await runScript(empty)
    expect(none.exitCode).toBe(0)
    expect(none.stdout).toContain('history: no hw-out/comparison.json in this run; nothing to add')
    expect(none.outputs).toBe('')

    // a history that cannot be built (here: an earlier run of another experiment) is a warning, never
    // a failed step; its runs are still offered for upload (next week's series loses nothing), its page is not
    const other = mkdtempSync(path.join(tmpdir(), 'hw-history-other-'))
    mkdirSync(path.join(other, 'runs', 'x-r0'), { recursive: true })
    writeFileSync(
      path.join(other, 'runs', 'x-r0', 'comparison.json'),
      strictJson({ ...weeks[0]!, experiment_id: 'exp-other', run_id: 'x' }),
    )
    const mixed = job(weeks[1]!, { previous: other })
    const bad = await runScript(mixed)
    expect(bad.exitCode).toBe(0)
    expect(bad.stdout).toContain('::warning::history: the weekly history could not be built')
    expect(bad.stderr).toContain('experiment exp-other is not exp-a')
    expect(bad.stdout).toContain('its runs are kept for next week')
    expect(bad.outputs).toBe('runs=hw-history/runs\n')
    expect(readdirSync(path.join(mixed, 'hw-history', 'runs')).sort()).toEqual(['902-r0', 'x-r0'])
  }, 120_000)
})
