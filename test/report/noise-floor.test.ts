import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { attempt, ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

describe('an A/A pair is shown as the noise floor', () => {
  it('two cells with the same harness, version and config: marked (A/A), with its difference as the noise floor', async () => {
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(10) },
      cells: [
        { id: 'a', harness: 'pi', version: '0.73.1' },
        { id: 'a2', harness: 'pi', version: '0.73.1' },
        { id: 'b', harness: 'opencode', version: '1.18.33' },
      ],
      baseline: 'a',
    })
    // a vs a2: 6 both, 1 a-only, 2 a2-only, 1 neither; b solves the same as a2.
    const aa = pairedOutcomes(plan, { both: 6, bOnly: 1, cOnly: 2, neither: 1 }, ['a', 'a2'])
    const b = aa
      .filter((x) => x.cell_id === 'a2')
      .map((x) => attempt(plan, { cell: 'b', instance: x.instance_id, outcome: x.outcome }))
    const out = mkdtempSync(path.join(tmpdir(), 'hw-aa-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts: writeArtifacts(plan, [...aa, ...b]), out })
    const md = readFileSync(r.reportPath, 'utf8')
    expect(md).toContain('| `a` → `a2` (A/A) | 10 | 2 / 1 / 7 |')
    expect(md).not.toContain('`a` → `b` (A/A)')
    expect(md).toContain(
      '**Noise floor.** A/A pair a → a2 (same harness, version and config): Δ +10.0 pp \\[−26.5, +43.5\\], W/L/T 2/1/7 (n = 10). This is the run-to-run noise floor',
    )
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).toContain('a → a2 (A/A)')
    expect(html).toContain('<strong>Noise floor.</strong> A/A pair a → a2')
  })
})
