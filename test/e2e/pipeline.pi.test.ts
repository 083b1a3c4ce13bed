import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DecisionSchema } from '../../src/detect/schema.js'
import { uniform } from '../../src/model/draw.js'
import { runLocal } from '../../src/pipeline/local.js'
import { AttemptRecordSchema } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { writeManifest } from '../support/manifests.js'

// The whole pipeline on real input: the real Pi CLI from npm (installed into the shared harness cache),
// driven by the scripted model through the recording proxy, on three built-in tasks, two Pi cells.
const TASKS = ['js-fix-slugify', 'py-fix-mutable-default', 'js-fix-paginate']
const SEED = 5
const SUCCESS = 0.6

describe('end to end: real Pi through plan → run → aggregate → detect', () => {
  it('runs two Pi cells on 3 tasks and the comparison matches what ran', { timeout: 900_000 }, async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-e2e-'))
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'e2e-pi', description: 'Pi vs Pi with a config difference' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 0.25, output: 2.0, cache_read: 0.025 },
        scripted: { seed: SEED, success_rate: SUCCESS },
      },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 120 } },
      panel: { source: 'builtin', name: 'core', instances: TASKS },
      cells: [
        { id: 'pi', harness: 'pi', version: '0.73.1' },
        { id: 'pi-nocontext', harness: 'pi', version: '0.73.1', config: { args: ['--no-context-files'] } },
      ],
      baseline: 'pi',
      budgets: { timeout_s: 240, max_requests: 30 },
      concurrency: 2,
      confirmation: { enabled: false, max_blocks: 3 },
      reporting: { bootstrap_resamples: 2000 },
    })
    const lines: string[] = []
    const r = await runLocal({ manifestFile: manifest, out, log: (l) => lines.push(l) })

    // What the scripted model decided, independently recomputed: resolved iff it followed the solution.
    const expected = (cell: string, task: string) => uniform('success', SEED, task, cell, 0) < SUCCESS

    expect(r.rounds).toHaveLength(1)
    const comparison = ComparisonSchema.parse(
      JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8')),
    )
    expect(comparison.blocks.planned).toBe(3)
    expect(comparison.blocks.complete).toBe(3)
    expect(comparison.missing_legs).toEqual([])
    const [cmp] = comparison.comparisons
    expect(cmp?.baseline).toBe('pi')
    expect(cmp?.treatment).toBe('pi-nocontext')
    const both = TASKS.filter((t) => expected('pi', t) && expected('pi-nocontext', t)).length
    const bOnly = TASKS.filter((t) => expected('pi', t) && !expected('pi-nocontext', t)).length
    const cOnly = TASKS.filter((t) => !expected('pi', t) && expected('pi-nocontext', t)).length
    expect(cmp?.outcome).toMatchObject({ n: 3, both, baseline_only: bOnly, treatment_only: cOnly })

    // Every attempt is recorded, graded by the task's verifier, and measured at the proxy.
    for (const cell of ['pi', 'pi-nocontext']) {
      const dir = path.join(out, 'artifacts', `hw-e2e-pi-${cell}-0`)
      const attempts = readFileSync(path.join(dir, 'attempts.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => AttemptRecordSchema.parse(JSON.parse(l)))
      expect(attempts.map((a) => a.instance_id).sort()).toEqual([...TASKS].sort())
      const rows = readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
      for (const a of attempts) {
        expect(a.harness_version).toBe('0.73.1')
        expect(a.outcome).toBe(expected(cell, a.instance_id) ? 'resolved' : 'unresolved')
        expect(a.exit.class).toBe('clean')
        expect(a.telemetry.coverage).toBe('complete')
        expect(a.telemetry.models_observed).toEqual(['gpt-5-mini'])
        const mine = rows.filter((x) => x.attribution?.instance_id === a.instance_id)
        expect(a.telemetry.proxy_requests).toBe(mine.length)
        expect(a.telemetry.proxy_requests).toBeGreaterThanOrEqual(3)
        const spend = mine.reduce((s, x) => s + (x.spend_usd ?? 0), 0)
        expect(a.telemetry.spend_usd).toBeCloseTo(spend, 10)
        // spend is recomputed from tokens and the manifest's prices (USD per million tokens)
        const fresh = mine.reduce((s, x) => s + (x.tokens.input_fresh ?? 0), 0)
        const cached = mine.reduce((s, x) => s + (x.tokens.cache_read ?? 0), 0)
        const output = mine.reduce((s, x) => s + (x.tokens.output ?? 0), 0)
        expect(spend).toBeCloseTo((fresh * 0.25 + cached * 0.025 + output * 2.0) / 1e6, 10)
        expect(a.deliverable.bytes > 0).toBe(a.outcome === 'resolved' || a.deliverable.bytes > 0)
        expect(existsSync(path.join(dir, a.logs_dir, 'stdout.txt'))).toBe(true)
      }
    }
    const spend = cmp?.metrics.spend_usd
    expect(spend?.baseline.n).toBe(3)
    expect(spend?.ratio_of_means.estimate).toBeGreaterThan(0)
    expect(existsSync(path.join(out, 'report.md'))).toBe(true)
    expect(readFileSync(path.join(out, 'report.html'), 'utf8')).toContain('<table')
    const decision = DecisionSchema.parse(JSON.parse(readFileSync(path.join(out, 'decision.json'), 'utf8')))
    expect(decision.experiment_id).toBe('e2e-pi')
    expect(lines.some((l) => l.startsWith('plan: 2 legs'))).toBe(true)
  })
})
