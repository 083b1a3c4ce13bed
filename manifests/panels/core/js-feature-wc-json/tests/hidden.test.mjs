import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'

const bin = path.resolve('bin/wc.js')
const dir = mkdtempSync(path.join(os.tmpdir(), 'wc-hidden-'))
writeFileSync(path.join(dir, 'a.txt'), 'one two\nthree\n')
writeFileSync(path.join(dir, 'b.txt'), 'héllo wörld')
writeFileSync(path.join(dir, 'empty.txt'), '')

function wc(...args) {
  return spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8' })
}

test('text output is unchanged', () => {
  const one = wc('a.txt')
  assert.equal(one.status, 0)
  assert.equal(one.stdout, '2 3 14 a.txt\n')
  const two = wc('a.txt', 'b.txt')
  assert.equal(two.stdout, '2 3 14 a.txt\n0 2 11 b.txt\n2 5 25 total\n')
})

test('--json with one file', () => {
  const r = wc('--json', 'a.txt')
  assert.equal(r.status, 0)
  assert.equal(r.stdout.trimEnd().split('\n').length, 1, 'exactly one line')
  assert.deepEqual(JSON.parse(r.stdout), {
    files: [{ file: 'a.txt', lines: 2, words: 3, chars: 14 }],
    total: { lines: 2, words: 3, chars: 14 },
  })
})

test('--json anywhere, files in order', () => {
  for (const args of [
    ['a.txt', '--json', 'b.txt', 'empty.txt'],
    ['a.txt', 'b.txt', 'empty.txt', '--json'],
  ]) {
    const r = wc(...args)
    assert.equal(r.status, 0)
    assert.deepEqual(JSON.parse(r.stdout), {
      files: [
        { file: 'a.txt', lines: 2, words: 3, chars: 14 },
        { file: 'b.txt', lines: 0, words: 2, chars: 11 },
        { file: 'empty.txt', lines: 0, words: 0, chars: 0 },
      ],
      total: { lines: 2, words: 5, chars: 25 },
    })
  }
})

test('unknown options are rejected', () => {
  const r = wc('--words', 'a.txt')
  assert.equal(r.status, 2)
  assert.equal(r.stdout, '')
  assert.equal(r.stderr.trim(), 'wc: unknown option --words')
})
