import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'

const { mapLimit } = await import(pathToFileURL(path.resolve('src/map-limit.js')).href)

test('input order with uneven delays', async () => {
  const delays = [40, 5, 25, 1, 12, 30, 2]
  const out = await mapLimit(delays, 3, async (ms) => {
    await sleep(ms)
    return `done-${ms}`
  })
  assert.deepEqual(
    out,
    delays.map((ms) => `done-${ms}`),
  )
})

test('fn receives the item and its index', async () => {
  const out = await mapLimit(['a', 'b', 'c'], 2, async (item, i) => `${i}:${item}`)
  assert.deepEqual(out, ['0:a', '1:b', '2:c'])
})

test('concurrency reaches the limit and never exceeds it', async () => {
  let active = 0
  let peak = 0
  await mapLimit(Array.from({ length: 12 }, (_, i) => i), 4, async (i) => {
    active++
    peak = Math.max(peak, active)
    await sleep(5 + (i % 3) * 5)
    active--
    return i
  })
  assert.equal(peak, 4)
})

test('a limit above the item count works', async () => {
  assert.deepEqual(await mapLimit([3, 1, 2], 10, async (x) => x * 10), [30, 10, 20])
})

test('empty input', async () => {
  assert.deepEqual(await mapLimit([], 3, async () => 1), [])
})

test('a rejection propagates', async () => {
  await assert.rejects(
    mapLimit([1, 2, 3], 2, async (x) => {
      if (x === 2) throw new Error('boom 2')
      return x
    }),
    /boom 2/,
  )
})

test('bad limits reject with RangeError', async () => {
  await assert.rejects(mapLimit([1], 0, async (x) => x), RangeError)
  await assert.rejects(mapLimit([1], 1.5, async (x) => x), RangeError)
})
