import { describe, expect, it } from 'vitest'
import { applyEffect, isToolError } from '../../src/bridge/effects.js'

const world = { orders: { W1: { status: 'pending', notes: [] as unknown[] } }, list: [1, 2] }

describe('applyEffect', () => {
  it('returns the value at a path with a placeholder, leaving the world untouched', () => {
    const r = applyEffect(world, { op: 'return', path: 'orders.{id}.status' }, { id: 'W1' })
    expect(r).toEqual({ world, result: 'pending' })
  })

  it('set writes a new world and keeps the old one', () => {
    const r = applyEffect(
      world,
      { op: 'set', path: 'orders.{id}.status', value: '{s}' },
      { id: 'W1', s: 'done' },
    )
    if (isToolError(r)) throw new Error(r.message)
    expect((r.world.orders as Record<string, { status: string; notes: unknown[] }>).W1?.status).toBe('done')
    expect(world.orders.W1?.status).toBe('pending')
    expect(r.result).toBe('done')
  })

  it('substitutes typed whole placeholders and interpolates embedded ones', () => {
    const r = applyEffect(
      world,
      {
        op: 'append',
        path: 'orders.W1.notes',
        value: { n: '{n}', tags: '{tags}', msg: 'n={n} tags={tags}', gone: '{x}' },
        result: 'ok {n}',
      },
      { n: 3, tags: ['a'] },
    )
    if (isToolError(r)) throw new Error(r.message)
    expect((r.world.orders as Record<string, { status: string; notes: unknown[] }>).W1?.notes).toEqual([
      { n: 3, tags: ['a'], msg: 'n=3 tags=["a"]', gone: null },
    ])
    expect(r.result).toBe('ok 3')
  })

  it('set under a missing parent and return of a missing key are missing_path errors', () => {
    expect(
      applyEffect(world, { op: 'set', path: 'orders.{id}.status', value: 1 }, { id: 'W9' }),
    ).toMatchObject({
      code: 'missing_path',
      message: 'not found: orders.W9',
    })
    expect(applyEffect(world, { op: 'return', path: 'list.2' }, {})).toMatchObject({ code: 'missing_path' })
    expect(applyEffect(world, { op: 'append', path: 'orders.W1.status', value: 1 }, {})).toMatchObject({
      code: 'not_array',
    })
  })

  it('refuses prototype keys and non-scalar keys from arguments', () => {
    for (const id of ['__proto__', 'constructor', '', { a: 1 }, 1.5]) {
      const r = applyEffect(world, { op: 'set', path: 'orders.{id}', value: 'x' }, { id })
      expect(r).toMatchObject({ code: 'bad_path' })
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined()
  })

  it('indexes and extends arrays by number only in range', () => {
    const r = applyEffect(world, { op: 'set', path: 'list.{i}', value: 9 }, { i: 2 })
    if (isToolError(r)) throw new Error(r.message)
    expect(r.world.list).toEqual([1, 2, 9])
    expect(applyEffect(world, { op: 'set', path: 'list.{i}', value: 9 }, { i: 5 })).toMatchObject({
      code: 'missing_path',
    })
  })
})
