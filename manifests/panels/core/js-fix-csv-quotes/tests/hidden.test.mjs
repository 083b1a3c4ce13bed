import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

const { parseCsv } = await import(pathToFileURL(path.resolve('src/csv.js')).href)

test('plain rows, with and without a final newline', () => {
  assert.deepEqual(parseCsv('a,b\n1,2\n'), [['a', 'b'], ['1', '2']])
  assert.deepEqual(parseCsv('a,b\n1,2'), [['a', 'b'], ['1', '2']])
  assert.deepEqual(parseCsv(''), [])
})

test('CRLF line endings', () => {
  assert.deepEqual(parseCsv('a,b\r\n1,2\r\n'), [['a', 'b'], ['1', '2']])
})

test('empty fields are kept', () => {
  assert.deepEqual(parseCsv('a,,c\nx,\n,y'), [['a', '', 'c'], ['x', ''], ['', 'y']])
})

test('quoted commas, quotes and line breaks', () => {
  assert.deepEqual(parseCsv('"Smith, Jane",42\n'), [['Smith, Jane', '42']])
  assert.deepEqual(parseCsv('"say ""hi""",x\n'), [['say "hi"', 'x']])
  assert.deepEqual(parseCsv('id,note\n1,"line one\nline two"\n2,"a\r\nb"\r\n'), [
    ['id', 'note'],
    ['1', 'line one\nline two'],
    ['2', 'a\r\nb'],
  ])
})

test('empty quoted field and quoted last field', () => {
  assert.deepEqual(parseCsv('"",a,""\n'), [['', 'a', '']])
  assert.deepEqual(parseCsv('a,"b"'), [['a', 'b']])
})

test('unquoted fields are literal', () => {
  assert.deepEqual(parseCsv(' a , b \n'), [[' a ', ' b ']])
})

test('unterminated quote throws SyntaxError', () => {
  assert.throws(() => parseCsv('a,"oops\n1,2\n'), SyntaxError)
})
