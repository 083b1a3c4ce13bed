import { HwError } from './errors.js'
import { quotePath } from './paths.js'
import { clip, oneLine } from './text.js'

/** 1-based line and column of a place in a text. */
export interface TextPosition {
  line: number
  col: number
}

/** Line and column (1-based) of UTF-16 `offset` in `text`; an offset past the end is the end. */
export function positionAt(text: string, offset: number): TextPosition {
  const end = Math.max(0, Math.min(offset, text.length))
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return { line, col: end - lineStart + 1 }
}

/**
 * Where `JSON.parse(text)` failed. V8 says `at position N` or `(line L column C)` for some errors
 * and nothing for others (`Unexpected token '}', "…" is not valid JSON`); then the text is scanned
 * for its first syntax error, and failing that the end of the text is blamed.
 */
export function jsonErrorPosition(text: string, e: unknown): TextPosition {
  const msg = e instanceof Error ? e.message : String(e)
  const lc = /line (\d+) column (\d+)/.exec(msg)
  if (lc) return { line: Number(lc[1]), col: Number(lc[2]) }
  const pos = /position (\d+)/.exec(msg)
  if (pos) return positionAt(text, Number(pos[1]))
  return positionAt(text, firstJsonError(text) ?? text.length)
}

/**
 * UTF-16 offset of the first JSON syntax error in `text`, or null when it is valid JSON (RFC 8259).
 * Iterative: nesting depth costs no stack.
 */
export function firstJsonError(text: string): number | null {
  let i = 0
  const n = text.length
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 32 || c === 9 || c === 10 || c === 13) i++
      else break
    }
  }
  const literal = (word: string): boolean => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) return false
    i += word.length
    return true
  }
  // Returns false at the error offset `i`.
  const string = (): boolean => {
    i++
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 34) {
        i++
        return true
      }
      if (c < 32) return false
      if (c === 92) {
        const x = text[i + 1]
        if (x === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false
          i += 6
        } else if (x !== undefined && '"\\/bfnrt'.includes(x)) i += 2
        else {
          i++
          return false
        }
      } else i++
    }
    return false
  }
  const number = (): boolean => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (!m || m[0] === '' || m[0] === '-') return false
    i += m[0].length
    return true
  }
  // Stack of open containers: '{' or '['.
  const stack: string[] = []
  const value = (): boolean => {
    ws()
    const c = text[i]
    if (c === '"') return string()
    if (c === '{' || c === '[') {
      stack.push(c)
      i++
      return true
    }
    if (c === 't') return literal('true')
    if (c === 'f') return literal('false')
    if (c === 'n') return literal('null')
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number()
    return false
  }
  if (!value()) return i
  // True right after a container opened: it may close at once, and its first member needs no comma.
  let opened = stack.length > 0
  while (stack.length > 0) {
    ws()
    const top = stack[stack.length - 1]
    if (text[i] === (top === '{' ? '}' : ']')) {
      stack.pop()
      i++
      opened = false
      continue
    }
    if (!opened) {
      if (text[i] !== ',') return i
      i++
      ws()
    }
    opened = false
    if (top === '{') {
      if (text[i] !== '"' || !string()) return i
      ws()
      if (text[i] !== ':') return i
      i++
    }
    const depth = stack.length
    if (!value()) return i
    opened = stack.length > depth
  }
  ws()
  return i < n ? i : null
}

/**
 * The parser's reason without its own position and without echoing input: `Unexpected token 'x',
 * "...": ...` → `unexpected token 'x'`.
 */
export function jsonErrorReason(e: unknown): string {
  let msg = e instanceof Error ? e.message : String(e)
  msg = msg
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/ at position \d+.*$/s, '')
  // V8 quotes a window of the input after the token (`, "…" is not valid JSON`, with `...` before
  // and/or after the quotes when the window is cut from a longer text): drop it.
  msg = msg.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
  msg = oneLine(msg)
  return clip(msg.charAt(0).toLowerCase() + msg.slice(1), 120)
}

/** `not valid JSON at line L, column C: reason` pieces of a JSON syntax error. */
export function describeJsonError(text: string, e: unknown): { position: TextPosition; reason: string } {
  return { position: jsonErrorPosition(text, e), reason: jsonErrorReason(e) }
}

/**
 * Parse a JSON document read from `file`. Throws HwError `code` (default `json_invalid`) located at
 * `file:line:column` when the text is not JSON.
 */
export function parseJsonText(text: string, file: string, code = 'json_invalid'): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    const { position, reason } = describeJsonError(text, e)
    throw new HwError(code, `not valid JSON: ${reason}`, {
      where: quotePath(`${file}:${position.line}:${position.col}`),
    })
  }
}
