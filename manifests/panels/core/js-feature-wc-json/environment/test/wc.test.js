import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const bin = fileURLToPath(new URL('../bin/wc.js', import.meta.url))
const dir = mkdtempSync(path.join(os.tmpdir(), 'wc-test-'))
const a = path.join(dir, 'a.txt')
writeFileSync(a, 'one two\nthree\n')

function wc(...args) {
  return spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
}

test('text output', () => {
  const r = wc(a)
  assert.equal(r.status, 0)
  assert.equal(r.stdout, `2 3 14 ${a}\n`)
})

test('--json output', () => {
  const r = wc('--json', a)
  assert.equal(r.status, 0)
  assert.deepEqual(JSON.parse(r.stdout), {
    files: [{ file: a, lines: 2, words: 3, chars: 14 }],
    total: { lines: 2, words: 3, chars: 14 },
  })
})
