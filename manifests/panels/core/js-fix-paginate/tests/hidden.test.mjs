import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const { paginate } = await import(pathToFileURL(path.resolve('src/paginate.js')).href)
const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]

test('every page in order', () => {
  assert.deepEqual(paginate(ten, 1, 3), { items: [1, 2, 3], page: 1, totalPages: 4, hasNext: true })
  assert.deepEqual(paginate(ten, 2, 3), { items: [4, 5, 6], page: 2, totalPages: 4, hasNext: true })
  assert.deepEqual(paginate(ten, 3, 3), { items: [7, 8, 9], page: 3, totalPages: 4, hasNext: true })
  assert.deepEqual(paginate(ten, 4, 3), { items: [10], page: 4, totalPages: 4, hasNext: false })
})

test('exact multiple has no empty trailing page', () => {
  assert.deepEqual(paginate(ten, 2, 5), { items: [6, 7, 8, 9, 10], page: 2, totalPages: 2, hasNext: false })
})

test('past the end', () => {
  assert.deepEqual(paginate(ten, 5, 3), { items: [], page: 5, totalPages: 4, hasNext: false })
})

test('empty list', () => {
  assert.deepEqual(paginate([], 1, 3), { items: [], page: 1, totalPages: 0, hasNext: false })
})

test('one page holds everything', () => {
  assert.deepEqual(paginate(ten, 1, 50), { items: ten, page: 1, totalPages: 1, hasNext: false })
})

test('bad arguments throw RangeError', () => {
  assert.throws(() => paginate(ten, 0, 3), RangeError)
  assert.throws(() => paginate(ten, 1, 0), RangeError)
  assert.throws(() => paginate(ten, 1.5, 3), RangeError)
  assert.throws(() => paginate(ten, 1, -2), RangeError)
})
