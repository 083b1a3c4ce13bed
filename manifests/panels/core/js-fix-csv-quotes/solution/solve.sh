#!/usr/bin/env bash
# Reference solution: a one-pass state machine over the characters (RFC 4180).
set -euo pipefail
cat > src/csv.js <<'EOF'
/**
 * Parse CSV text (RFC 4180) into rows of string fields.
 * @param {string} text
 * @returns {string[][]}
 * @throws {SyntaxError} when a quoted field is never closed
 */
export function parseCsv(text) {
  const rows = []
  let row = []
  let field = ''
  let inQuotes = false
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (inQuotes) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i += 2
        continue
      }
      if (c === '"') inQuotes = false
      else field += c
      i++
      continue
    }
    if (c === '"' && field === '') {
      inQuotes = true
      i++
    } else if (c === ',') {
      row.push(field)
      field = ''
      i++
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i += c === '\r' ? 2 : 1
    } else {
      field += c
      i++
    }
  }
  if (inQuotes) throw new SyntaxError('unterminated quoted field')
  if (field !== '' || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}
EOF
