import assert from 'node:assert/strict'
import { test } from 'node:test'
import { validateInvite, validateOrder, validateUser } from '../src/validate.js'

test('valid user', () => {
  assert.deepEqual(validateUser({ name: 'Ada', email: 'ada@example.org' }), [])
})

test('invalid user', () => {
  assert.deepEqual(validateUser({ name: ' ', email: 'ada@example' }), ['name is required', 'email is invalid'])
})

test('order', () => {
  assert.deepEqual(validateOrder({ quantity: 2, contactEmail: 'shop@example.com' }), [])
  assert.deepEqual(validateOrder({ quantity: 0, contactEmail: 'nope' }), [
    'quantity must be a positive integer',
    'contactEmail is invalid',
  ])
})

test('invite', () => {
  assert.deepEqual(validateInvite({ to: 'a@b.co', cc: ['c@d.io', 'bad'] }), ['cc[1] is invalid'])
})
