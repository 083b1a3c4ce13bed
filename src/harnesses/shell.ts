/**
 * POSIX shell quoting for one word: the result, pasted into a `bash -lc` script, is read back as
 * exactly `s` (no expansion, no word splitting). Plain words stay bare for readable logs.
 */
export function shellQuote(s: string): string {
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/** A whole argv as one shell line (for logs and command.txt). */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ')
}
