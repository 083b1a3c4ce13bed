// Schema problems in a pretty-printed JSON file carry the line and column of the field (issue 16
// point 6): the zod issue path is mapped to its place in the source text by the same locator the
// manifest uses, for plan.json read by `run` (loadPlan), by `aggregate` (readPlan) and by `detect`.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readPlan } from '../../src/ingest/artifacts.js'
import { detectStep } from '../../src/pipeline/detect.js'
import { loadPlan } from '../../src/run/plan-file.js'
import { isHwError } from '../../src/util/errors.js'
import { sourceLocator } from '../../src/util/source-locate.js'
import { makePlan, writePlan } from '../compare/fixtures.js'

/** 1-based line of the first line of `text` containing `needle`. */
const lineOf = (text: string, needle: string): number =>
  text.split('\n').findIndex((l) => l.includes(needle)) + 1

/** plan.json pretty-printed, with legs[1].instances[0] set to a `../` path the schema refuses. */
async function forgedPlan(): Promise<{ file: string; text: string; line: number; col: number }> {
  const plan = await makePlan()
  expect(plan.legs.length).toBeGreaterThan(1)
  const forged = structuredClone(plan)
  // A new array: the plan's legs may share one instances list.
  forged.legs[1]!.instances = ['../escape', ...forged.legs[1]!.instances.slice(1)]
  const file = writePlan(forged)
  const text = readFileSync(file, 'utf8')
  const line = lineOf(text, '"../escape"')
  return { file, text, line, col: text.split('\n')[line - 1]!.indexOf('"../escape"') + 1 }
}

async function thrown(p: Promise<unknown>): Promise<{ code: string; where?: string; details: string[] }> {
  try {
    await p
  } catch (e) {
    if (!isHwError(e)) throw e
    return { code: e.code, where: e.where, details: e.details ?? [] }
  }
  throw new Error('expected a rejection')
}

describe('sourceLocator', () => {
  it('maps paths to the line and column of values, keys and array items of a JSON text', () => {
    const text = '{\n  "a": {\n    "b": [\n      1,\n      "two"\n    ]\n  },\n  "c": true\n}\n'
    const at = sourceLocator(text)!
    expect(at(['a', 'b', 1])).toMatchObject({ line: 5, col: 7, source: '"two"' })
    expect(at(['c'])).toMatchObject({ line: 8, col: 8, source: 'true' })
    // A missing field: the deepest part present (its parent).
    expect(at(['a', 'missing'])).toMatchObject({ line: 2, col: 8, source: null })
    expect(at([])).toMatchObject({ line: 1, col: 1 })
  })

  it('is null for a text that does not parse, never a throw', () => {
    expect(sourceLocator('{"a": ')).toBeNull()
    expect(sourceLocator('')).not.toBeNull()
  })
})

describe('plan.json schema problems carry file:line:column', () => {
  it('run (loadPlan): each problem starts with the place of the bad value', async () => {
    const { file, line, col } = await forgedPlan()
    const e = await thrown(loadPlan(file))
    expect(e.code).toBe('plan_invalid')
    // Two rules broken by one value (the id pattern, no `..`): both at its place.
    expect(e.details).toHaveLength(2)
    for (const d of e.details) {
      expect(d).toMatch(new RegExp(`^${reEscape(`${file}:${line}:${col}`)} legs\\[1\\]\\.instances\\[0\\]: `))
    }
    expect(e.details[0]).toContain('(got "../escape")')
  })

  it('aggregate (readPlan): the input error names the line of the first problem', async () => {
    const { file, line } = await forgedPlan()
    const e = await thrown(readPlan(file))
    expect(e.code).toBe('plan_invalid')
    expect(e.details[0]).toMatch(
      new RegExp(`^${reEscape(`${file}:${line}`)} does not match the schema: legs\\[1\\]`),
    )
  })

  it('detect: the problem is located, the JSON syntax error too (no parser text echoed)', async () => {
    const { file, line, col } = await forgedPlan()
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-locate-'))
    const comparison = path.join(dir, 'comparison.json')
    // Not read: the plan is validated first; a missing comparison would be reported otherwise.
    writeFileSync(comparison, '{}')
    const e = await thrown(detectStep({ comparison, plan: file }))
    expect(e.code).toBe('detect_input_invalid')
    const located = e.details.find((d) => d.includes('legs[1].instances[0]'))
    expect(located).toMatch(new RegExp(`^${reEscape(`${file}:${line}:${col}`)} `))

    const broken = path.join(dir, 'broken.json')
    writeFileSync(broken, '{\n  "a": 1,\n  "b": [1 2]\n}\n')
    const s = await thrown(detectStep({ comparison, plan: broken }))
    expect(s.where).toBe(`${broken}:3:11`)
  })
})

function reEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
