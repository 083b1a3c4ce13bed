/**
 * Parse CSV text into rows of string fields.
 * @param {string} text
 * @returns {string[][]}
 */
export function parseCsv(text) {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','))
}
