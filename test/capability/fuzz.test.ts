import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { allUnknown, known } from '../../src/capability/facts.js'
import { readCapabilityFile } from '../../src/ingest/capabilities.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { CapabilityManifestSchema } from '../../src/records/capabilities.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { Mutator } from '../fuzz/mutate.js'

const CASES = Number(process.env.HW_FUZZ_CASES ?? 200)
const SEED = Number(process.env.HW_FUZZ_SEED ?? 20261205)

const VALID = JSON.stringify(
  {
    schema_version: 1,
    cell_id: 'b',
    harness: 'opencode',
    harness_version: '1.18.33',
    model: 'gpt-5-mini',
    configured: {
      ...allUnknown('not read'),
      compaction: known<'compaction'>(true, '.config/opencode/opencode.json compaction.auto'),
      iteration_limit: known<'iteration_limit'>(40, 'agent.build.steps'),
      mcp_servers: known<'mcp_servers'>(['bridge'], 'mcp'),
    },
    observed: {
      requests: 12,
      requests_with_tools: 11,
      tools_named: true,
      tools: [
        { name: 'bash', schema_sha256: ['0123456789abcdef'], requests: 11 },
        { name: 'read', schema_sha256: ['fedcba9876543210', null], requests: 11 },
      ],
      call_types: ['chat.completions'],
    },
  },
  null,
  2,
)

describe('fuzz: mutated capabilities.json files', () => {
  it(`${CASES} seeded mutations: each one read as a valid manifest or ignored with a located reason`, async () => {
    const m = new Mutator(SEED)
    const root = mkdtempSync(path.join(tmpdir(), 'hw-cap-fuzz-'))
    const rel = 'leg/logs/t-001/0-1/capabilities.json'
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    let ignored = 0
    for (let i = 0; i < CASES; i++) {
      const { text, op } = m.mutate(VALID)
      writeFileSync(path.join(root, rel), text)
      const got = await readCapabilityFile(root, rel, 'b')
      const label = `case ${i} (${op}): ${JSON.stringify(text.slice(0, 300))}`
      if (got === 'missing') throw new Error(`${label}: read as missing`)
      if ('ignored' in got) {
        ignored++
        expect(got.ignored, label).toMatch(/^leg\/logs\/t-001\/0-1\/capabilities\.json(:\d+:\d+)?: \S/)
        expect(got.ignored, label).not.toMatch(/\n\s+at /)
      } else {
        // Read: it validates, and names the attempt's own cell.
        expect(CapabilityManifestSchema.safeParse(got).success, label).toBe(true)
        expect(got.cell_id, label).toBe('b')
      }
    }
    // The mutations do reach the reader's refusals (not every case parses).
    expect(ignored).toBeGreaterThan(CASES / 4)
  })

  it('mutated files through aggregate: the run is never failed by them and the reports render', async () => {
    const m = new Mutator(SEED + 1)
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const atts = pairedOutcomes(plan, { both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    for (let i = 0; i < 10; i++) {
      const artifacts = writeArtifacts(plan, atts)
      for (const a of atts) {
        const leg = plan.legs.find((l) => l.cell === a.cell_id && l.instances.includes(a.instance_id))
        const logs = path.join(artifacts, leg?.artifact ?? '', a.logs_dir)
        mkdirSync(logs, { recursive: true })
        const valid = VALID.replace('"cell_id": "b"', `"cell_id": "${a.cell_id}"`)
        writeFileSync(path.join(logs, 'capabilities.json'), m.mutate(valid).text)
      }
      const out = mkdtempSync(path.join(tmpdir(), 'hw-cap-fuzz-out-'))
      const r = await aggregate({ plan: writePlan(plan), artifacts, out, resamples: 200 })
      expect(r.comparison.input_errors).toEqual([])
      const caps = r.comparison.capabilities
      expect(
        (caps?.cells.reduce((n, c) => n + c.attempts, 0) ?? 0) + (caps?.notes.length ?? 0),
      ).toBeGreaterThan(0)
      expect(renderMarkdownReport(r.comparison)).toContain('| Model route |')
      expect(renderHtmlReport(r.comparison)).toContain('<table class="kv">')
    }
  })
})
