import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { evaluationHealth } from '../../src/detect/health.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { policy } from '../detect/fixtures.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

const OTHER_MANIFEST = `9b38${'c'.repeat(60)}`

/** Rewrite a field of one leg's leg.json, as a leg run under another manifest version would state it. */
function editLegJson(dir: string, artifact: string, edit: Record<string, unknown>): void {
  const file = path.join(dir, artifact, 'leg.json')
  writeFileSync(file, `${JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), ...edit })}\n`)
}

async function run(plan: Awaited<ReturnType<typeof makePlan>>, dir: string) {
  const out = mkdtempSync(path.join(tmpdir(), 'hw-drift-out-'))
  const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 500 })
  const parsed = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
  return { ...r, parsed, html: readFileSync(r.htmlPath, 'utf8') }
}

describe('aggregate: legs run under another manifest version are config_drift', () => {
  it('two legs with another manifest_sha256: their blocks are incomplete, listed, and named in the header', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(8) }, shards: { count: 2 } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 6, bOnly: 1, cOnly: 1, neither: 0 }))
    const drifted = plan.legs.filter((l) => l.cell === 'b')
    expect(drifted).toHaveLength(2)
    for (const leg of drifted) editLegJson(dir, leg.artifact, { manifest_sha256: OTHER_MANIFEST })

    const { parsed, markdown, html } = await run(plan, dir)
    // Every block has a leg of cell b: nothing is compared as if it matched the plan.
    expect(parsed.blocks.outcome_complete).toBe(0)
    expect(parsed.comparisons[0]!.outcome.n).toBe(0)
    const reasons = parsed.blocks.incomplete.flatMap((b) => b.reasons)
    expect(reasons).toHaveLength(8)
    for (const r of reasons) {
      expect(r).toMatchObject({ code: 'config_drift', cell: 'b', trial: null })
      expect(r.detail).toMatch(/ran under manifest sha256 9b38c{8}… while the plan says [0-9a-f]{12}…/)
    }
    expect(parsed.drift).toEqual(
      drifted
        .map((l) => ({
          leg: l.leg,
          cell: 'b',
          file: `${l.artifact}/leg.json`,
          manifest_sha256: OTHER_MANIFEST,
          config_hash: null,
        }))
        .sort((x, y) => (x.leg < y.leg ? -1 : 1)),
    )
    // Listed as input errors with the file.
    expect(parsed.input_errors.map((e) => e.file).sort()).toEqual(
      drifted.map((l) => `${l.artifact}/leg.json`).sort(),
    )
    // The header says which version the legs ran under and which the plan states.
    const planned = plan.manifest_sha256.slice(0, 12)
    expect(markdown).toContain(
      `> **Config drift:** 2 legs ran under manifest sha256 \`9b38cccccccc…\` while the plan says \`${planned}…\``,
    )
    expect(html).toContain('2 legs ran under manifest sha256 9b38cccccccc…')
    // Health: an identity problem (error) listing the blocks, not a harness result.
    const health = evaluationHealth(parsed, policy.thresholds, (e) => `${e.baseline}-${e.treatment}`)
    expect(health.find((h) => h.code === 'identity_mismatch')).toMatchObject({
      severity: 'error',
      count: 8,
    })
  })

  it('a leg whose leg.json states another config hash for its cell is config_drift too', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 }))
    const legA = plan.legs.find((l) => l.cell === 'a')!
    editLegJson(dir, legA.artifact, { config_hash: 'e'.repeat(64) })
    const { parsed, markdown } = await run(plan, dir)
    expect(parsed.blocks.outcome_complete).toBe(0)
    expect(parsed.drift).toEqual([
      {
        leg: legA.leg,
        cell: 'a',
        file: `${legA.artifact}/leg.json`,
        manifest_sha256: null,
        config_hash: 'e'.repeat(64),
      },
    ])
    expect(markdown).toMatch(/1 leg of cell `a` ran with config hash `eeeeeeeeeeee…` while the plan says `/)
  })

  it('legs that match the plan add nothing (no drift key, no input error)', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 }))
    const { parsed, markdown } = await run(plan, dir)
    expect(parsed.drift).toBeUndefined()
    expect(parsed.input_errors).toEqual([])
    expect(parsed.blocks.outcome_complete).toBe(4)
    expect(markdown).not.toContain('Config drift')
  })
})
