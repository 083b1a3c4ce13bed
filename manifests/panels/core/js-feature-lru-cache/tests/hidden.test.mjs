import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const { LRUCache } = await import(pathToFileURL(path.resolve('src/lru.js')).href)

test('never holds more than capacity', () => {
  const c = new LRUCache(3)
  for (let i = 0; i < 10; i++) c.set(i, i * i)
  assert.equal(c.size, 3)
  assert.deepEqual(c.keys(), [7, 8, 9])
  assert.equal(c.get(9), 81)
})

test('get refreshes recency, has does not', () => {
  const c = new LRUCache(2)
  c.set('a', 1).set('b', 2)
  assert.equal(c.has('a'), true)
  c.set('c', 3)
  assert.deepEqual(c.keys(), ['b', 'c'], 'has() must not refresh "a"')
  c.get('b')
  c.set('d', 4)
  assert.deepEqual(c.keys(), ['b', 'd'])
})

test('overwriting refreshes and updates without growing', () => {
  const c = new LRUCache(2)
  c.set('a', 1).set('b', 2).set('a', 10)
  assert.equal(c.size, 2)
  c.set('c', 3)
  assert.deepEqual(c.keys(), ['a', 'c'])
  assert.equal(c.get('a'), 10)
})

test('onEvict sees evicted entries only', () => {
  const evicted = []
  const c = new LRUCache(2, { onEvict: (k, v) => evicted.push([k, v]) })
  c.set('a', 1).set('b', 2)
  c.delete('a')
  c.set('c', 3).set('d', 4)
  assert.deepEqual(evicted, [['b', 2]])
  assert.equal(c.delete('zzz'), false)
  assert.equal(c.delete('c'), true)
  assert.deepEqual(c.keys(), ['d'])
})

test('falsy keys and values', () => {
  const c = new LRUCache(2)
  c.set(0, 0).set('', null)
  assert.equal(c.get(0), 0)
  assert.equal(c.get(''), null)
  assert.equal(c.has(''), true)
})

test('capacity one', () => {
  const c = new LRUCache(1)
  c.set('x', 1).set('y', 2)
  assert.deepEqual(c.keys(), ['y'])
})

test('bad capacity throws RangeError', () => {
  assert.throws(() => new LRUCache(0), RangeError)
  assert.throws(() => new LRUCache(2.5), RangeError)
  assert.throws(() => new LRUCache(-1), RangeError)
})
