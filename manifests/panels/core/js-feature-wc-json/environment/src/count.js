/**
 * Count lines (newline characters), words (runs of non-whitespace) and characters of a text.
 * @param {string} text
 * @returns {{ lines: number, words: number, chars: number }}
 */
export function count(text) {
  const lines = (text.match(/\n/g) ?? []).length
  const words = (text.match(/\S+/g) ?? []).length
  return { lines, words, chars: text.length }
}
