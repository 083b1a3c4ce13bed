import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { allUnknown, known } from '../../src/capability/facts.js'
import { detectStep } from '../../src/pipeline/detect.js'
import type { CellCapabilities } from '../../src/records/capabilities.js'
import type { Comparison } from '../../src/records/comparison.js'
import { strictJson } from '../../src/util/json.js'
import { type CellSpec, makeComparison, rows, writeThreeCellPlan } from '../detect/fixtures.js'

const r = (): CellSpec => ({ o: 'r' })

function cell(id: string, version: string, tools: string[], compaction: boolean): CellCapabilities {
  return {
    cell_id: id,
    harness: 'opencode',
    harness_version: version,
    attempts: 30,
    configured: { ...allUnknown('not read'), compaction: known<'compaction'>(compaction, 'opencode.json') },
    observed: {
      requests: 300,
      requests_with_tools: 290,
      tools_named: true,
      tools: tools.map((name) => ({ name, schema_sha256: ['0123456789abcdef'], requests: 290 })),
      call_types: ['chat.completions'],
    },
  }
}

function week(runId: string, bVersion: string, bTools: string[], bCompaction: boolean): Comparison {
  const c = makeComparison({
    runId,
    cells: ['a', 'b', 'c'],
    rows: rows(30, () => ({ a: r(), b: r(), c: r() })),
  })
  const cells = [
    cell('a', '1.18.33', ['bash', 'read'], false),
    cell('b', bVersion, bTools, bCompaction),
    cell('c', '1.18.33', ['bash', 'read'], false),
  ]
  return { ...c, capabilities: { cells, differences: [], notes: [] } }
}

describe('the weekly report lists capability changes since the previous run', () => {
  it('detect with the previous comparison writes the line into both reports; comparison.json is untouched', async () => {
    const { dir, planPath } = await writeThreeCellPlan(30)
    const w1 = path.join(dir, 'w1')
    const w2 = path.join(dir, 'w2')
    await mkdir(w1)
    await mkdir(w2)
    await writeFile(
      path.join(w1, 'comparison.json'),
      strictJson(week('w1', '1.18.33', ['bash', 'read'], false)),
    )
    const current = strictJson(week('w2', '1.19.0', ['bash', 'glob', 'read'], true))
    await writeFile(path.join(w2, 'comparison.json'), current)
    await detectStep({
      comparison: path.join(w2, 'comparison.json'),
      plan: planPath,
      previous: path.join(w1, 'comparison.json'),
    })
    const line = 'opencode 1.18.33 → 1.19.0 (cell b): +1 tool (glob), compaction on'
    expect(await readFile(path.join(w2, 'report.md'), 'utf8')).toContain(
      `| Capabilities since the previous run | ${line} |`,
    )
    expect(await readFile(path.join(w2, 'report.html'), 'utf8')).toContain(
      `<th>Capabilities since the previous run</th><td>${line}</td>`,
    )
    expect(await readFile(path.join(w2, 'comparison.json'), 'utf8')).toBe(current)
  })
})
