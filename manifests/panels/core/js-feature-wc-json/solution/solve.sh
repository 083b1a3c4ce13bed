#!/usr/bin/env bash
# Reference solution: separate flags from file names; print one JSON object with --json.
set -euo pipefail
cat > bin/wc.js <<'EOF'
#!/usr/bin/env node
// Usage: wc.js [--json] <file>...
import { readFileSync } from 'node:fs'
import { count } from '../src/count.js'

const files = []
let json = false
for (const arg of process.argv.slice(2)) {
  if (arg === '--json') json = true
  else if (arg.startsWith('--')) {
    process.stderr.write(`wc: unknown option ${arg}\n`)
    process.exit(2)
  } else files.push(arg)
}

const total = { lines: 0, words: 0, chars: 0 }
const rows = []
for (const file of files) {
  const c = count(readFileSync(file, 'utf8'))
  total.lines += c.lines
  total.words += c.words
  total.chars += c.chars
  rows.push({ file, ...c })
}

if (json) {
  console.log(JSON.stringify({ files: rows, total }))
} else {
  for (const r of rows) console.log(`${r.lines} ${r.words} ${r.chars} ${r.file}`)
  if (files.length > 1) console.log(`${total.lines} ${total.words} ${total.chars} total`)
}
EOF
