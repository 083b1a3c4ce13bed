import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Plan } from '../../src/plan/schema.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { LegArtifact } from '../../src/run/artifact.js'
import { HwError } from '../../src/util/errors.js'
import { attempt, ledgerFor, makePlan } from '../compare/fixtures.js'

let plan: Plan
let rows: AttemptRecord[]
beforeAll(async () => {
  plan = await makePlan()
  rows = ['t-1', 't-2', 't-3'].map((instance) => attempt(plan, { cell: 'a', instance }))
})

async function folder(attemptsText: string, ledgerText = ''): Promise<LegArtifact> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-resume-'))
  const art = new LegArtifact(dir)
  await art.init()
  writeFileSync(art.attemptsFile, attemptsText)
  writeFileSync(art.ledgerFile, ledgerText)
  return art
}

const line = (r: unknown): string => `${JSON.stringify(r)}\n`

async function failure(p: Promise<unknown>): Promise<HwError> {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    return e as HwError
  }
  throw new Error('expected the read to fail')
}

describe('resume deletes nothing that parses', () => {
  it('a last line that is valid JSON but not a record stops the resume at its line, naming the field', async () => {
    const bad = { ...rows[2], trial: -1 }
    const art = await folder(line(rows[0]) + line(rows[1]) + line(bad))
    const before = readFileSync(art.attemptsFile, 'utf8')
    const e = await failure(art.readAttempts())
    expect(e.code).toBe('artifact_corrupt')
    expect(e.where).toBe(`${art.attemptsFile}:3`)
    expect(e.message).toMatch(/^not a valid record: trial: .*\(got -1\)$/)
    expect(readFileSync(art.attemptsFile, 'utf8')).toBe(before)
  })

  it('the same without its newline is not a torn write either (it is valid JSON)', async () => {
    const bad = { ...rows[2], outcome: 'maybe' }
    const art = await folder(line(rows[0]) + JSON.stringify(bad))
    const e = await failure(art.readAttempts())
    expect(e.where).toBe(`${art.attemptsFile}:2`)
    expect(e.message).toContain('outcome: ')
    expect(e.message).toContain('(got "maybe")')
  })

  it('a middle line that is not JSON names its line and column', async () => {
    const art = await folder(`${line(rows[0])}{"attempt": 1,,}\n${line(rows[1])}`)
    const e = await failure(art.readAttempts())
    expect(e.where).toBe(`${art.attemptsFile}:2:15`)
    expect(e.message).toMatch(/^not valid JSON: /)
    expect(e.message).not.toContain('[')
  })

  it('a cut last line with a newline is corruption, not a torn write', async () => {
    const cut = JSON.stringify(rows[1]).slice(0, 50)
    const art = await folder(`${line(rows[0])}${cut}\n`)
    const e = await failure(art.readAttempts())
    expect(e.where).toMatch(/attempts\.jsonl:2:\d+$/)
  })

  it('a truncated last line without a newline is set aside, kept and reported', async () => {
    const cut = JSON.stringify(rows[1]).slice(0, 50)
    const art = await folder(line(rows[0]) + cut)
    const logs: string[] = []
    const values = await art.readAttempts((l) => logs.push(l))
    expect(values).toEqual([rows[0]])
    expect(readFileSync(art.attemptsFile, 'utf8')).toBe(line(rows[0]))
    expect(readFileSync(`${art.attemptsFile}.torn`, 'utf8')).toBe(`${cut}\n`)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain(`${art.attemptsFile}:2: a torn last line (50 chars`)
  })

  it('ledger rows of unrecorded attempts are moved aside, not deleted; a bad ledger row stops the resume', async () => {
    const ledger = [...ledgerFor(rows[0]!), ...ledgerFor(rows[1]!)]
    const art = await folder(line(rows[0]), ledger.map(line).join(''))
    const logs: string[] = []
    const moved = await art.pruneLedger(
      (r) => r.attribution?.instance_id === 't-1',
      (l) => logs.push(l),
    )
    expect(moved).toBe(ledgerFor(rows[1]!).length)
    const pruned = readFileSync(path.join(art.dir, 'ledger.pruned.jsonl'), 'utf8').trim().split('\n')
    expect(pruned.map((l) => JSON.parse(l).attribution.instance_id)).toEqual(
      ledgerFor(rows[1]!).map(() => 't-2'),
    )
    expect(logs[0]).toMatch(/row\(s\) of attempts that were never recorded/)

    const bad = { ...ledger[0], input_tokens: -5 }
    writeFileSync(art.ledgerFile, line(ledger[0]) + line(bad))
    const e = await failure(art.pruneLedger(() => true))
    expect(e.where).toBe(`${art.ledgerFile}:2`)
    expect(readFileSync(art.ledgerFile, 'utf8')).toBe(line(ledger[0]) + line(bad))
  })

  it('a broken leg.json stops the resume at its line and column', async () => {
    const art = await folder('')
    writeFileSync(art.legFile, '{\n  "schema_version": 1,\n  "leg": }\n')
    const e = await failure(art.readLeg())
    expect(e.where).toBe(`${art.legFile}:3:10`)
  })
})
