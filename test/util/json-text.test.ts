import { describe, expect, it } from 'vitest'
import { describeJsonError, jsonErrorReason } from '../../src/util/json-text.js'

/** V8's own error for `text` (JSON.parse throws on each of the texts below). */
function v8Error(text: string): Error {
  try {
    JSON.parse(text)
  } catch (e) {
    return e as Error
  }
  throw new Error(`valid JSON: ${text}`)
}

describe('JSON error reasons never quote the text', () => {
  // V8 quotes a window of the text: whole when short (`"…"`), cut with `...` after it, or on both sides.
  const texts = [
    'api_key=sk-live-SECRET-0123456789',
    '{"apiKey": sk-live-SECRET-0123456789}',
    '{\n  "harness": "pi",\n  "apiKey": sk-live-SECRET-0123456789\n}',
    '{"a": tru sk-live}',
  ]
  for (const text of texts) {
    it(`reason and place of ${JSON.stringify(text.slice(0, 24))}`, () => {
      const e = v8Error(text)
      expect(e.message).toContain('sk') // the window this guards against is there to begin with
      const reason = jsonErrorReason(e)
      expect(reason).toMatch(/^unexpected token 's'|^unexpected token 'a'|^unexpected token ' '/)
      expect(reason).not.toContain('sk-live')
      expect(reason).not.toContain('api')
      expect(reason).not.toContain('"')
    })
  }

  it('keeps the line and column of the error', () => {
    const text = '{\n  "harness": "pi",\n  "apiKey": sk-live-SECRET-0123456789\n}'
    expect(describeJsonError(text, v8Error(text))).toEqual({
      position: { line: 3, col: 13 },
      reason: "unexpected token 's'",
    })
  })
})
