import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseCsv } from '../src/csv.js'

test('simple rows', () => {
  assert.deepEqual(parseCsv('a,b\n1,2\n'), [
    ['a', 'b'],
    ['1', '2'],
  ])
})

test('quoted field with a comma', () => {
  assert.deepEqual(parseCsv('name,age\n"Smith, Jane",42\n'), [
    ['name', 'age'],
    ['Smith, Jane', '42'],
  ])
})
