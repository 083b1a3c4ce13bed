#!/usr/bin/env node
// Usage: wc.js <file>...
import { readFileSync } from 'node:fs'
import { count } from '../src/count.js'

const files = process.argv.slice(2)
const total = { lines: 0, words: 0, chars: 0 }
for (const file of files) {
  const c = count(readFileSync(file, 'utf8'))
  total.lines += c.lines
  total.words += c.words
  total.chars += c.chars
  console.log(`${c.lines} ${c.words} ${c.chars} ${file}`)
}
if (files.length > 1) console.log(`${total.lines} ${total.words} ${total.chars} total`)
