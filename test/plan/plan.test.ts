import { describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { artifactName, buildPlan, MAX_LEGS } from '../../src/plan/plan.js'
import { PlanSchema } from '../../src/plan/schema.js'
import { HwError } from '../../src/util/errors.js'
import { strictJson } from '../../src/util/json.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const ids = (n: number) => Array.from({ length: n }, (_, i) => `inst-${String(i).padStart(3, '0')}`)
const cells = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, harness: 'pi', version: '1.0.0' }))

async function plan(over: Record<string, unknown>, opts: Parameters<typeof buildPlan>[2] = {}) {
  const loaded = await loadManifest(writeManifest(baseManifest({ ...over, baseline: 'c0' })))
  const panel = await resolvePanel(loaded.manifest, loaded.dir)
  return buildPlan(loaded, panel, opts)
}

describe('plan', () => {
  it('is byte-identical for the same manifest and seed, and differs for another seed', async () => {
    const over = { cells: cells(2), panel: { source: 'inline', instances: ids(20) }, shards: { count: 3 } }
    const file = writeManifest(baseManifest({ ...over, baseline: 'c0' }))
    const loaded = await loadManifest(file)
    const panel = await resolvePanel(loaded.manifest, loaded.dir)
    const a = strictJson(buildPlan(loaded, panel))
    const b = strictJson(buildPlan(await loadManifest(file), panel))
    expect(a).toBe(b)
    const c = strictJson(buildPlan(loaded, panel, { seed: 2 }))
    expect(c).not.toBe(a)
    expect(PlanSchema.parse(JSON.parse(a)).legs).toHaveLength(6)
  })

  it('shards partition the panel, every cell gets the same shards in the same seeded order', async () => {
    const p = await plan({
      cells: cells(3),
      panel: { source: 'inline', instances: ids(10) },
      shards: { count: 3 },
    })
    expect(p.legs.map((l) => l.leg)).toEqual([
      'c0-s0',
      'c1-s0',
      'c2-s0',
      'c0-s1',
      'c1-s1',
      'c2-s1',
      'c0-s2',
      'c1-s2',
      'c2-s2',
    ])
    const byShard = [0, 1, 2].map((s) => p.legs.filter((l) => l.shard === s).map((l) => l.instances))
    for (const lists of byShard) {
      expect(lists[1]).toEqual(lists[0])
      expect(lists[2]).toEqual(lists[0])
    }
    const all = byShard.flatMap((l) => l[0] ?? [])
    expect(all.slice().sort()).toEqual(ids(10))
    expect(byShard.map((l) => l[0]?.length)).toEqual([3, 3, 4])
    // the order is a seeded shuffle, not the declared order
    expect(all).not.toEqual(ids(10))
  })

  it('F10: names artifacts hw-<experiment>-<cell>-<shard>, unique, and a matrix without instance lists', async () => {
    const p = await plan({
      cells: cells(2),
      panel: { source: 'inline', instances: ids(4) },
      shards: { count: 2 },
    })
    expect(p.matrix.include).toEqual([
      { leg: 'c0-s0', cell: 'c0', shard: 0, artifact: 'hw-exp-a-c0-0' },
      { leg: 'c1-s0', cell: 'c1', shard: 0, artifact: 'hw-exp-a-c1-0' },
      { leg: 'c0-s1', cell: 'c0', shard: 1, artifact: 'hw-exp-a-c0-1' },
      { leg: 'c1-s1', cell: 'c1', shard: 1, artifact: 'hw-exp-a-c1-1' },
    ])
    expect(artifactName('hw-x/y:z*?')).toBe('hw-x_y_z__')
  })

  it('plans one leg for one cell and one shard', async () => {
    const p = await plan({ cells: cells(1), panel: { source: 'inline', instances: ids(3) } })
    expect(p.legs).toHaveLength(1)
    expect(p.legs[0]?.instances.slice().sort()).toEqual(ids(3))
  })

  it('plans exactly 256 legs without packing', async () => {
    const p = await plan({
      cells: cells(2),
      panel: { source: 'inline', instances: ids(300) },
      shards: { count: 128 },
    })
    expect(p.legs).toHaveLength(MAX_LEGS)
    expect(p.shards).toMatchObject({ count: 128, packed: false, note: null })
    expect(JSON.stringify(p.matrix).length).toBeLessThan(1_000_000)
  })

  it('packs a shard count that would exceed 256 legs (F11)', async () => {
    const p = await plan({
      cells: cells(6),
      panel: { source: 'inline', instances: ids(300) },
      shards: { count: 50 },
    })
    expect(p.legs).toHaveLength(252)
    expect(p.shards).toEqual({
      requested: { count: 50 },
      count: 42,
      packed: true,
      note: '6 cells × 50 shards = 300 legs exceed 256; packed into 42 shards',
    })
    const covered = new Set(p.legs.filter((l) => l.cell === 'c0').flatMap((l) => l.instances))
    expect(covered.size).toBe(300)
  })

  it('fails clearly when a declared shard size cannot fit in 256 legs', async () => {
    const err = await plan({
      cells: cells(3),
      panel: { source: 'inline', instances: ids(300) },
      shards: { size: 2 },
    }).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toBe(
      '3 cells × 150 shards (size 2) = 450 legs exceed the 256-job matrix limit',
    )
    expect((err as HwError).help).toBe('use shards: {size: 4} or more, or shards: {count: N}')
  })

  it('plans zero legs when a cell filter selects nothing', async () => {
    const p = await plan({ cells: cells(2), panel: { source: 'inline', instances: ids(3) } }, { cells: [] })
    expect(p.legs).toEqual([])
    expect(p.matrix).toEqual({ include: [] })
  })

  it('rejects a filter naming unknown cells', async () => {
    await expect(plan({ cells: cells(2) }, { cells: ['zz'] })).rejects.toThrow(
      '--cells names unknown cells: zz',
    )
  })

  it('caps the shard count at the panel size', async () => {
    const p = await plan({
      cells: cells(1),
      panel: { source: 'inline', instances: ids(2) },
      shards: { count: 5 },
    })
    expect(p.shards.count).toBe(2)
    expect(p.legs.map((l) => l.instances.length)).toEqual([1, 1])
  })

  it('confirmation plans use their own artifact prefix and order seed', async () => {
    const over = { cells: cells(2), panel: { source: 'inline', instances: ids(12) } }
    const first = await plan(over)
    const conf = await plan(over, {
      kind: 'confirmation',
      round: 1,
      instances: ['inst-001', 'inst-005', 'inst-009'],
    })
    expect(conf.kind).toBe('confirmation')
    expect(conf.legs.map((l) => l.artifact)).toEqual(['hw-exp-a-confirm1-c0-0', 'hw-exp-a-confirm1-c1-0'])
    expect(conf.legs[0]?.instances.slice().sort()).toEqual(['inst-001', 'inst-005', 'inst-009'])
    expect(first.legs[0]?.artifact).toBe('hw-exp-a-c0-0')
  })
})
