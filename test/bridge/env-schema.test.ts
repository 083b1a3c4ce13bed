import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseEnvironment } from '../../src/bridge/env-schema.js'
import { HwError } from '../../src/util/errors.js'

const good = readFileSync(path.join(import.meta.dirname, 'fixtures/shop.json'), 'utf8')

function problems(text: string): string[] {
  try {
    parseEnvironment(text, 'env.json')
  } catch (e) {
    if (e instanceof HwError) return e.details
    throw e
  }
  throw new Error('accepted')
}

const tool = (extra: string) =>
  `{"name":"t","description":"d","parameters":{"type":"object","properties":{"id":{"type":"string"}}}${extra}}`
const env = (tools: string) =>
  `{\n  "version": 1,\n  "world": {"orders": {}},\n  "tools": [\n    ${tools}\n  ]\n}`

describe('environment validation', () => {
  it('accepts the fixture', () => {
    expect(parseEnvironment(good, 'shop.json').tools).toHaveLength(6)
  })

  it('refuses an unknown effect with file, line and field', () => {
    expect(problems(env(tool(',"effect":{"op":"delete","path":"orders"}')))).toEqual([
      'env.json:5:5 tools[0]: unknown effect "delete": expected return, set or append',
    ])
  })

  it('refuses a tool without a schema', () => {
    expect(problems(env('{"name":"t","description":"d","effect":{"op":"return","path":"orders"}}'))).toEqual([
      'env.json:5:5 tools[0]: tool has no "parameters" JSON Schema (or "builtin")',
    ])
  })

  it('refuses a duplicate tool name, pointing at the second', () => {
    const t = tool(',"effect":{"op":"return","path":"orders"}')
    expect(problems(env(`${t},\n    ${t}`))).toEqual([
      'env.json:6:6 tools[1].name: duplicate tool name "t" (first at tools[0])',
    ])
  })

  it('refuses paths outside the store', () => {
    for (const p of ['customers.x', '{id}', '..orders', 'orders.__proto__', 'orders/../x', 'orders.{nope}']) {
      const out = problems(env(tool(`,"effect":{"op":"return","path":"${p}"}`)))
      expect(out[0]).toMatch(/^env\.json:5:\d+ tools\[0\]\.effect\.path: /)
    }
  })

  it('refuses a schema that does not compile and a placeholder naming no parameter', () => {
    const bad =
      '{"name":"t","description":"d","parameters":{"type":"object","properties":{"x":{"type":"dict"}}},"effect":{"op":"set","path":"orders","value":"{y}"}}'
    const out = problems(env(bad))
    expect(out).toHaveLength(2)
    expect(out[0]).toMatch(/tools\[0\]\.parameters: not a valid JSON Schema/)
    expect(out[1]).toMatch(/tools\[0\]\.effect\.value: placeholder \{y\} names no parameter/)
  })

  it('reports invalid JSON with a position', () => {
    expect(problems('{"version": 1,\n "tools": [}')[0]).toMatch(/^env\.json:2:\d+ /)
  })
})
