import assert from 'node:assert/strict'
import { test } from 'node:test'
import { paginate } from '../src/paginate.js'

const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]

test('first page starts at the first item', () => {
  assert.deepEqual(paginate(ten, 1, 3).items, [1, 2, 3])
})

test('a partial last page counts as a page', () => {
  assert.equal(paginate(ten, 1, 3).totalPages, 4)
})
