import { readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runLocal } from '../../src/pipeline/local.js'
import { AttemptRecordSchema } from '../../src/records/attempt.js'
import { CapabilityManifestSchema } from '../../src/records/capabilities.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { toolSchemaHash } from '../../src/telemetry/offered-tools.js'
import { writeManifest } from '../support/manifests.js'

// Capability manifests on real input: the real Pi CLI, driven by the scripted model through the
// recording proxy; one cell as Pi comes, one restricted to two tools with compaction turned on.
describe('end to end: capability manifests of real Pi attempts', () => {
  it('writes capabilities.json per attempt and the report lists the difference between the cells', {
    timeout: 600_000,
  }, async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-e2e-cap-'))
    const settings = JSON.stringify({
      defaultProvider: 'hw',
      defaultModel: 'gpt-5-mini',
      quietStartup: true,
      enableInstallTelemetry: false,
      retry: { enabled: false },
      compaction: { enabled: true },
    })
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'e2e-cap', description: 'Pi vs Pi with fewer tools' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 0.25, output: 2.0, cache_read: 0.025 },
        scripted: { seed: 5, success_rate: 1 },
      },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 120 } },
      panel: { source: 'builtin', name: 'core', instances: ['js-fix-slugify'] },
      cells: [
        { id: 'pi', harness: 'pi', version: '0.73.1' },
        {
          id: 'pi-lean',
          harness: 'pi',
          version: '0.73.1',
          config: { args: ['--tools', 'read,bash'], files: { '.pi/agent/settings.json': settings } },
        },
      ],
      baseline: 'pi',
      budgets: { timeout_s: 240, max_requests: 30 },
      concurrency: 2,
      confirmation: { enabled: false, max_blocks: 1 },
      reporting: { bootstrap_resamples: 200 },
    })
    await runLocal({ manifestFile: manifest, out, log: () => {} })

    const caps: Record<string, ReturnType<typeof CapabilityManifestSchema.parse>> = {}
    for (const cell of ['pi', 'pi-lean']) {
      const dir = path.join(out, 'artifacts', `hw-e2e-cap-${cell}-0`)
      const [attempt] = readFileSync(path.join(dir, 'attempts.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => AttemptRecordSchema.parse(JSON.parse(l)))
      expect(attempt?.exit.class).toBe('clean')
      const file = path.join(dir, attempt?.logs_dir ?? '', 'capabilities.json')
      const m = CapabilityManifestSchema.parse(JSON.parse(readFileSync(file, 'utf8')))
      caps[cell] = m
      // What the proxy saw is what the ledger rows name: the same names and hashes.
      const rows = readFileSync(path.join(dir, 'ledger.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
      const named = rows.flatMap((r) => r.tools_offered ?? [])
      expect(m.observed?.requests).toBe(rows.length)
      expect(m.observed?.tools.map((t) => t.name)).toEqual([...new Set(named.map((t) => t.name))].sort())
      for (const t of named) expect(t.schema_sha256).toMatch(/^[0-9a-f]{16}$/)
    }
    // Pi's own default set as offered in real requests, and the cell's two tools.
    expect(caps.pi?.observed?.tools.map((t) => t.name)).toEqual(['bash', 'edit', 'read', 'write'])
    expect(caps['pi-lean']?.observed?.tools.map((t) => t.name)).toEqual(['bash', 'read'])
    expect(caps['pi-lean']?.configured.tools).toEqual({ value: ['bash', 'read'], from: '--tools' })
    expect(caps['pi-lean']?.configured.compaction.value).toBe(true)
    expect(caps.pi?.configured.compaction.value).toBeNull()
    expect(caps.pi?.harness_version).toBe('0.73.1')
    // The same tool, same schema in both cells: the same hash.
    const hash = (cell: string, name: string) =>
      caps[cell]?.observed?.tools.find((t) => t.name === name)?.schema_sha256
    expect(hash('pi', 'read')).toEqual(hash('pi-lean', 'read'))
    expect(toolSchemaHash({})).toMatch(/^[0-9a-f]{16}$/)

    const comparison = ComparisonSchema.parse(
      JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8')),
    )
    const line =
      'pi (pi 0.73.1) → pi-lean (pi 0.73.1): −2 tools (edit, write); unknown on one side: compaction'
    expect(comparison.capabilities?.differences).toEqual([line])
    expect(comparison.capabilities?.notes).toEqual([])
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain(
      '| Capabilities vs baseline | pi (pi 0.73.1) → pi-lean (pi 0.73.1): −2 tools (edit, write); unknown on one side: compaction |',
    )
    expect(readFileSync(path.join(out, 'report.html'), 'utf8')).toContain(
      '<th>Capabilities vs baseline</th><td>pi (pi 0.73.1) → pi-lean (pi 0.73.1): −2 tools (edit, write); unknown on one side: compaction</td>',
    )
  })
})
