import assert from 'node:assert/strict'
import { test } from 'node:test'
import { daysBetween, parseDate } from '../src/dates.js'

test('parses to midnight UTC of the same day', () => {
  assert.equal(parseDate('2024-03-05').toISOString(), '2024-03-05T00:00:00.000Z')
})

test('impossible dates are rejected', () => {
  assert.throws(() => parseDate('2023-02-29'), RangeError)
})

test('days in a leap February', () => {
  assert.equal(daysBetween('2024-02-01', '2024-03-01'), 29)
})
