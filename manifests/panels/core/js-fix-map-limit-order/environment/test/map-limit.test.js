import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { mapLimit } from '../src/map-limit.js'

test('results follow the input order, not completion order', async () => {
  const delays = [30, 5, 15]
  const out = await mapLimit(delays, 2, async (ms) => {
    await sleep(ms)
    return ms * 2
  })
  assert.deepEqual(out, [60, 10, 30])
})
