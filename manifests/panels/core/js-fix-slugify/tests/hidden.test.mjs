import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const { slugify } = await import(pathToFileURL(path.resolve('src/slugify.js')).href)

test('plain words', () => {
  assert.equal(slugify('Hello World'), 'hello-world')
})

test('accents are reduced to base letters', () => {
  assert.equal(slugify('Crème Brûlée'), 'creme-brulee')
  assert.equal(slugify('Ångström 2.0'), 'angstrom-2-0')
  assert.equal(slugify('Ça déménage!'), 'ca-demenage')
})

test('runs of separators become one dash', () => {
  assert.equal(slugify('a -- b'), 'a-b')
  assert.equal(slugify('Rock & Roll / Blues'), 'rock-roll-blues')
  assert.equal(slugify('snake_case_name'), 'snake-case-name')
})

test('no leading or trailing dash', () => {
  assert.equal(slugify('  --Hello,   World!--  '), 'hello-world')
  assert.equal(slugify('!!!'), '')
  assert.equal(slugify(''), '')
})

test('compatibility forms fold to ASCII', () => {
  assert.equal(slugify('Ｆｕｌｌ ｗｉｄｔｈ'), 'full-width')
})

test('letters without an ASCII base are dropped', () => {
  assert.equal(slugify('日本語 guide'), 'guide')
})
