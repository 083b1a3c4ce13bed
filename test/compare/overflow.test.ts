import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { captureOutput } from '../support/capture.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

const io = captureOutput()

describe('figures beyond any real attempt never overflow a sum', () => {
  it('two attempts of 1e308 USD are input errors at file:line naming spend_usd; the outputs are written', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 })
    const costly = atts.filter((a) => a.cell_id === 'b').slice(0, 2)
    for (const a of costly) a.telemetry = { ...a.telemetry, spend_usd: 1e308 }
    const dir = writeArtifacts(plan, atts)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-overflow-'))
    const code = await main(['aggregate', '--plan', writePlan(plan), '--artifacts', dir, '--out', out])
    expect(code).toBe(1)
    expect(io.err).not.toContain('non-finite')
    expect(io.err).not.toMatch(/\n\s+at /)
    const text = readFileSync(path.join(out, 'comparison.json'), 'utf8')
    expect(text).not.toMatch(/Infinity|NaN/)
    const c = JSON.parse(text)
    const legB = plan.legs.find((l) => l.cell === 'b')!
    const errors = JSON.stringify(c)
    expect(errors).toContain(`${legB.artifact}/attempts.jsonl`)
    expect(errors).toMatch(/telemetry\.spend_usd: [^"]*\(got 1e\+308\)/)
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toContain(`${legB.artifact}/attempts.jsonl:`)
  })
})
