import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const load = (rel) => import(pathToFileURL(path.resolve(rel)).href)
const { validateInvite, validateOrder, validateUser } = await load('src/validate.js')
const OLD = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** Source text without comments, so a mention in a comment does not count. */
function code(rel) {
  return readFileSync(path.resolve(rel), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
}

const samples = ['ada@example.org', 'a@b.co', 'ada@example', 'no at.sign', 'two@@x.io', 'sp ace@x.io', '', 'x@y.z']

test('behaviour is unchanged', () => {
  assert.deepEqual(validateUser({ name: 'Ada', email: 'ada@example.org' }), [])
  assert.deepEqual(validateUser({}), ['name is required', 'email is invalid'])
  assert.deepEqual(validateUser({ name: 'Bo', email: 42 }), ['email is invalid'])
  assert.deepEqual(validateOrder({ quantity: 1.5, contactEmail: null }), [
    'quantity must be a positive integer',
    'contactEmail is invalid',
  ])
  assert.deepEqual(validateInvite({ to: 'x@y.z' }), [])
  assert.deepEqual(validateInvite({ to: 'bad', cc: [7, 'c@d.io', 'e@f'] }), [
    'to is invalid',
    'cc[0] is invalid',
    'cc[2] is invalid',
  ])
  for (const s of samples) {
    const want = OLD.test(s) ? [] : ['email is invalid']
    assert.deepEqual(validateUser({ name: 'N', email: s }), want, s)
  }
})

test('src/email.js exports isValidEmail with the same answers', async () => {
  assert.ok(existsSync(path.resolve('src/email.js')), 'src/email.js exists')
  const { isValidEmail } = await load('src/email.js')
  assert.equal(typeof isValidEmail, 'function')
  for (const s of samples) assert.equal(isValidEmail(s), OLD.test(s), s)
  for (const v of [undefined, null, 42, {}, ['a@b.co']]) assert.equal(isValidEmail(v), false)
})

test('validate.js uses isValidEmail and holds no e-mail expression', () => {
  const src = code('src/validate.js')
  assert.match(src, /import\s*\{[^}]*\bisValidEmail\b[^}]*\}\s*from\s*['"]\.\/email\.js['"]/)
  assert.ok((src.match(/\bisValidEmail\s*\(/g) ?? []).length >= 3, 'each validator calls isValidEmail')
  assert.ok(!src.includes('@'), 'no "@" (an e-mail pattern) left in validate.js')
})

test('the expression lives in exactly one file under src/', () => {
  const files = readdirSync(path.resolve('src'), { recursive: true }).filter((f) => /\.[cm]?js$/.test(f))
  const holders = files.filter((f) => code(path.join('src', f)).includes('@'))
  assert.deepEqual(holders, ['email.js'])
})
