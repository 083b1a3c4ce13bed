import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readLegArtifacts } from '../../src/ingest/artifacts.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

// A forged artifact whose files are symbolic links out of the download folder (issue 27 point 8):
// nothing outside is read, quoted or counted; each refusal is a located input error.

const SECRET = 'root:x:0:0:hw-sentinel-7f3a:/root:/bin/bash'

function outsideFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-outside-'))
  const file = path.join(dir, 'passwd')
  writeFileSync(file, `${SECRET}\n`)
  return file
}

async function setup() {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
  const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 3, bOnly: 0, cOnly: 0, neither: 0 }))
  const legA = plan.legs.find((l) => l.cell === 'a')!
  const legB = plan.legs.find((l) => l.cell === 'b')!
  return { plan, dir, legA, legB }
}

describe('no link is followed out of a download folder', () => {
  for (const threads of [false, true]) {
    it(`a ledger.jsonl linked to a file outside is refused, located, never quoted (threads ${threads})`, async () => {
      const { plan, dir, legA } = await setup()
      const ledger = path.join(dir, legA.artifact, 'ledger.jsonl')
      rmSync(ledger)
      symlinkSync(outsideFile(), ledger)
      const r = await readLegArtifacts(plan, dir, { threads })
      expect(r.inputErrors).toContainEqual({
        file: `${legA.artifact}/ledger.jsonl`,
        line: null,
        message: `${legA.artifact}/ledger.jsonl is a symbolic link: not followed out of the folder`,
      })
      expect(JSON.stringify(r)).not.toContain('hw-sentinel')
      expect(r.legs.find((l) => l.leg.leg === legA.leg)?.ledgerRows.size).toBe(0)
    })
  }

  it('through aggregate: the report, comparison.json and its input list hold nothing of the outside file', async () => {
    const { plan, dir, legA } = await setup()
    const ledger = path.join(dir, legA.artifact, 'ledger.jsonl')
    rmSync(ledger)
    symlinkSync(outsideFile(), ledger)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-links-out-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 200 })
    const json = readFileSync(r.comparisonPath, 'utf8')
    expect(json).not.toContain('hw-sentinel')
    expect(r.markdown).not.toContain('hw-sentinel')
    expect(json).toContain('is a symbolic link: not followed out of the folder')
  })

  it('an attempts.jsonl or leg.json that is a link makes the leg missing, with the reason', async () => {
    const { plan, dir, legA, legB } = await setup()
    const attempts = path.join(dir, legA.artifact, 'attempts.jsonl')
    const outside = mkdtempSync(path.join(tmpdir(), 'hw-outside-'))
    cpSync(attempts, path.join(outside, 'attempts.jsonl'))
    rmSync(attempts)
    symlinkSync(path.join(outside, 'attempts.jsonl'), attempts)
    const legJson = path.join(dir, legB.artifact, 'leg.json')
    rmSync(legJson)
    symlinkSync(outsideFile(), legJson)
    const r = await readLegArtifacts(plan, dir)
    expect(r.missingLegs.map((m) => [m.leg, m.reason])).toEqual([
      [legA.leg, 'attempts.jsonl not found in the artifact'],
    ])
    expect(r.inputErrors).toEqual(
      expect.arrayContaining([
        {
          file: legA.artifact,
          line: null,
          message: `${legA.artifact}/attempts.jsonl is a symbolic link: not followed out of the folder`,
        },
        {
          file: legB.artifact,
          line: null,
          message: `${legB.artifact}/leg.json is a symbolic link: not followed out of the folder`,
        },
      ]),
    )
    expect(JSON.stringify(r)).not.toContain('hw-sentinel')
  })

  it('an artifact folder that is itself a link is refused, even to a folder inside', async () => {
    const { plan, dir, legA } = await setup()
    const folder = path.join(dir, legA.artifact)
    const moved = path.join(dir, 'elsewhere')
    cpSync(folder, moved, { recursive: true })
    rmSync(folder, { recursive: true })
    symlinkSync(moved, folder)
    const r = await readLegArtifacts(plan, dir)
    expect(r.missingLegs).toEqual([
      expect.objectContaining({
        leg: legA.leg,
        reason: `${legA.artifact} is a symbolic link: not followed out of the folder`,
      }),
    ])
  })
})
