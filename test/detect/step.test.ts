import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DecisionSchema } from '../../src/detect/schema.js'
import { detectStep, readDecision } from '../../src/pipeline/detect.js'
import { PlanSchema } from '../../src/plan/schema.js'
import { HwError } from '../../src/util/errors.js'
import { strictJson } from '../../src/util/json.js'
import { type CellSpec, makeComparison, rows, writeThreeCellPlan } from './fixtures.js'

const ids = Array.from({ length: 30 }, (_, i) => `inst-${String(i + 1).padStart(2, '0')}`)
const r = (): CellSpec => ({ o: 'r' })
const u = (): CellSpec => ({ o: 'u' })

const setup = () => writeThreeCellPlan(30)

describe('detectStep: decision.json, confirmation plan, then the confirmation decision', () => {
  it('writes a targeted rerun plan on a breach and decides the rerun from it', async () => {
    const { dir, out, planPath, plan } = await setup()
    // c loses 6 blocks to a (−20 pp); b is identical to a.
    const first = makeComparison({
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })),
    })
    const cPath = path.join(out, 'comparison.json')
    await import('node:fs/promises').then((fs) => fs.mkdir(out, { recursive: true }))
    await writeFile(cPath, strictJson(first))
    const res = await detectStep({ comparison: cPath, plan: planPath })
    expect(res.decision.status).toBe('breach')
    expect(res.outputs.breach).toBe('true')
    expect(res.decisionPath).toBe(path.join(out, 'decision.json'))
    const onDisk = DecisionSchema.parse(JSON.parse(await readFile(res.decisionPath, 'utf8')))
    expect(onDisk.runs).toEqual([
      {
        round: 0,
        run_id: 'run-1',
        comparison: 'comparison.json',
        comparison_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    ])

    // The rerun plan: a seeded random sample of up to max_blocks (50) blocks — here the whole 30-block
    // panel — only the baseline and treatment, new seed, round 1.
    const cp = PlanSchema.parse(JSON.parse(await readFile(res.confirmPlanPath!, 'utf8')))
    expect(res.confirmPlanPath).toBe(path.join(out, 'confirm-1', 'plan.json'))
    expect(cp.kind).toBe('confirmation')
    expect(cp.round).toBe(1)
    expect(cp.cells.map((c) => c.id)).toEqual(['a', 'c'])
    expect([...cp.panel.instances].sort()).toEqual(ids)
    expect(cp.seed).not.toBe(plan.seed)
    expect(cp.legs.map((l) => l.cell)).toEqual(['a', 'c', 'a', 'c']) // cells interleaved per shard
    expect(cp.legs.every((l) => l.artifact.startsWith('hw-exp-confirm1-'))).toBe(true)
    expect(new Set(cp.legs.flatMap((l) => l.instances)).size).toBe(30)
    expect(JSON.parse(res.outputs['confirm-matrix'])).toEqual(cp.matrix)
    expect(onDisk.confirmation).toMatchObject({
      round: 1,
      plan: path.join('confirm-1', 'plan.json'),
      cells: ['a', 'c'],
      legs: 4,
      capped: false,
    })
    const sidecar = JSON.parse(await readFile(path.join(out, 'confirm-1', 'confirmation.json'), 'utf8'))
    expect(sidecar).toEqual({
      schema_version: 1,
      round: 1,
      decision: path.join('..', 'decision.json'),
      signals: ['exp/a-vs-c:resolved'],
    })

    // The rerun: the losses repeat on 5 of the 6 blocks; every other block is concordant again.
    const rerun = makeComparison({
      runId: 'run-1',
      round: 1,
      cells: ['a', 'c'],
      rows: Object.fromEntries(ids.map((id, i) => [id, { a: r(), c: i < 5 ? u() : r() }])),
    })
    const rerunDir = path.join(out, 'confirm-1', 'result')
    await import('node:fs/promises').then((fs) => fs.mkdir(rerunDir, { recursive: true }))
    await writeFile(path.join(rerunDir, 'comparison.json'), strictJson(rerun))
    const res2 = await detectStep({
      comparison: path.join(rerunDir, 'comparison.json'),
      plan: res.confirmPlanPath!,
    })
    expect(res2.decision.status).toBe('confirmed')
    expect(res2.outputs).toMatchObject({ confirmed: 'true', breach: 'false', 'confirm-plan-path': '' })
    expect(res2.decision.runs.map((x) => x.comparison)).toEqual([
      path.join('..', '..', 'comparison.json'),
      'comparison.json',
    ])
    expect(res2.decision.signals[0]!.rerun).toMatchObject({ b: 5, c: 0, holds: true })
    void dir
  })

  it('no breach: no rerun plan, an empty confirm matrix', async () => {
    const { out, planPath } = await setup()
    await import('node:fs/promises').then((fs) => fs.mkdir(out, { recursive: true }))
    const cPath = path.join(out, 'comparison.json')
    await writeFile(
      cPath,
      strictJson(
        makeComparison({ cells: ['a', 'b', 'c'], rows: rows(30, () => ({ a: r(), b: r(), c: r() })) }),
      ),
    )
    const res = await detectStep({ comparison: cPath, plan: planPath })
    expect(res.decision.status).toBe('ok')
    expect(res.outputs).toEqual({
      breach: 'false',
      'confirm-matrix': '{"include":[]}',
      'confirm-plan-path': '',
      confirmed: 'false',
    })
    expect(res.confirmPlan).toBeNull()
  })

  it('a changed first-run comparison is refused when confirming', async () => {
    const { out, planPath } = await setup()
    await import('node:fs/promises').then((fs) => fs.mkdir(out, { recursive: true }))
    const cPath = path.join(out, 'comparison.json')
    const first = makeComparison({
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })),
    })
    await writeFile(cPath, strictJson(first))
    const res = await detectStep({ comparison: cPath, plan: planPath })
    await writeFile(cPath, strictJson({ ...first, notes: ['edited'] }))
    const rerunPath = path.join(out, 'rerun.json')
    await writeFile(
      rerunPath,
      strictJson(makeComparison({ round: 1, cells: ['a', 'c'], rows: rows(6, () => ({ a: r(), c: u() })) })),
    )
    await expect(
      detectStep({ comparison: rerunPath, plan: res.confirmPlanPath!, out: path.join(out, 'x') }),
    ).rejects.toThrow(/changed since it was decided/)
  })
})

describe('readDecision', () => {
  it('names the schema version of a decision.json from an earlier version, and how to rewrite it', async () => {
    const { out, planPath } = await setup()
    const first = makeComparison({
      cells: ['a', 'b', 'c'],
      rows: rows(30, (i) => ({ a: r(), b: r(), c: i < 6 ? u() : r() })),
    })
    const cPath = path.join(out, 'comparison.json')
    await mkdir(out, { recursive: true })
    await writeFile(cPath, strictJson(first))
    const res = await detectStep({ comparison: cPath, plan: planPath })
    expect((await readDecision(out)).decision.schema_version).toBe(2)
    const old = { ...JSON.parse(await readFile(res.decisionPath, 'utf8')), schema_version: 1 }
    await writeFile(res.decisionPath, JSON.stringify(old))
    const err = await readDecision(out).then(
      () => null,
      (e: unknown) => e as HwError,
    )
    expect(err).toBeInstanceOf(HwError)
    expect(err?.message).toBe('decision.json has schema_version 1; this version of harness-watch reads 2')
    expect(err?.where).toBe(res.decisionPath)
  })
})
