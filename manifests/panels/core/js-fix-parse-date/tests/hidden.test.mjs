import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const { daysBetween, parseDate } = await import(pathToFileURL(path.resolve('src/dates.js')).href)

test('midnight UTC of the same day', () => {
  assert.equal(parseDate('2024-03-05').toISOString(), '2024-03-05T00:00:00.000Z')
  assert.equal(parseDate('1999-12-31').toISOString(), '1999-12-31T00:00:00.000Z')
  assert.equal(parseDate('2024-02-29').toISOString(), '2024-02-29T00:00:00.000Z')
  assert.equal(parseDate('2024-01-01').getTime(), Date.UTC(2024, 0, 1))
})

test('impossible dates throw RangeError', () => {
  for (const s of ['2023-02-29', '2024-13-01', '2024-04-31', '2024-00-10', '2024-01-00']) {
    assert.throws(() => parseDate(s), RangeError, s)
  }
})

test('other formats throw RangeError', () => {
  for (const s of ['2024-3-5', '05/03/2024', '2024-03-05T10:00:00Z', '', '2024-03-05 ', 'abcd-ef-gh']) {
    assert.throws(() => parseDate(s), RangeError, JSON.stringify(s))
  }
})

test('whole days, signed', () => {
  assert.equal(daysBetween('2024-02-01', '2024-03-01'), 29)
  assert.equal(daysBetween('2023-02-01', '2023-03-01'), 28)
  assert.equal(daysBetween('2024-03-01', '2024-02-01'), -29)
  assert.equal(daysBetween('2024-01-01', '2025-01-01'), 366)
  assert.equal(daysBetween('2024-05-05', '2024-05-05'), 0)
})

test('across daylight-saving changes', () => {
  assert.equal(daysBetween('2024-03-09', '2024-03-11'), 2)
  assert.equal(daysBetween('2024-11-02', '2024-11-04'), 2)
  assert.equal(daysBetween('2024-03-11', '2024-03-09'), -2)
})
