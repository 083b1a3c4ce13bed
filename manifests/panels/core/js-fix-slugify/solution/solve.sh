#!/usr/bin/env bash
# Reference solution: decompose, drop combining marks, collapse separator runs, trim dashes.
set -euo pipefail
cat > src/slugify.js <<'EOF'
/**
 * Turn a title into a URL slug: lowercase ASCII letters and digits, words joined by single dashes.
 * Accented letters become their base letter (NFKD, combining marks dropped).
 * @param {string} title
 * @returns {string}
 */
export function slugify(title) {
  return title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}
EOF
