import assert from 'node:assert/strict'
import { test } from 'node:test'
import { LRUCache } from '../src/lru.js'

test('stores and reads values', () => {
  const c = new LRUCache(2)
  c.set('a', 1)
  assert.equal(c.get('a'), 1)
  assert.equal(c.get('zzz'), undefined)
})

test('evicts the least recently used entry', () => {
  const c = new LRUCache(2)
  c.set('a', 1).set('b', 2)
  c.get('a')
  c.set('c', 3)
  assert.equal(c.has('b'), false)
  assert.deepEqual(c.keys(), ['a', 'c'])
})
