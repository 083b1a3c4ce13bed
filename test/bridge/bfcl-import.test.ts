import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TraceLog } from '../../src/bridge/calls.js'
import { Dispatcher } from '../../src/bridge/dispatch.js'
import { EnvProvider } from '../../src/bridge/env-provider.js'
import { TRACE_FILE } from '../../src/bridge/open.js'
import { BfclSpec, gradeBfcl } from '../../src/grade/bfcl.js'
import { standardize } from '../../src/grade/bfcl-values.js'
import { collectEvidence } from '../../src/grade/evidence.js'
import { gradeAll } from '../../src/grade/registry.js'
import { loadBridgeTask } from '../../src/panel/bridge-task.js'
import { countReasons, importBfcl } from '../../src/panel/import/write.js'
import { loadTask } from '../../src/panel/task.js'
import { verifyPanel } from '../../src/panel/verify.js'
import { HwError } from '../../src/util/errors.js'

// Rows written for these tests (BFCL v4's formats: JSON Lines questions, possible_answer/ ground truth).
const RULES = path.join(import.meta.dirname, 'fixtures/bfcl-rules')
const file = (name: string) => path.join(RULES, `BFCL_v4_${name}.json`)

let out: string
let tmp: string
beforeEach(() => {
  out = mkdtempSync(path.join(tmpdir(), 'hw-bfcl-'))
  tmp = mkdtempSync(path.join(tmpdir(), 'hw-bfcl-run-'))
})
afterEach(() => {
  rmSync(out, { recursive: true, force: true })
  rmSync(tmp, { recursive: true, force: true })
})

/** Make these calls through the task's real bridge (dispatcher, schema rules, trace), then grade. */
async function attempt(id: string, calls: [string, unknown][], answer: string | null = 'ok') {
  const bt = await loadBridgeTask(await loadTask(path.join(out, id)))
  const dir = mkdtempSync(path.join(tmp, 'a-'))
  const state = path.join(dir, 'state')
  const ws = path.join(dir, 'ws')
  mkdirSync(state)
  mkdirSync(ws)
  const d = new Dispatcher(
    new EnvProvider(bt.env, state, ws),
    null,
    new TraceLog(path.join(state, TRACE_FILE)),
  )
  for (const [tool, args] of calls) await d.call(tool, args)
  const ev = await collectEvidence({
    env: bt.env,
    reference: bt.reference,
    stateDir: state,
    workspace: ws,
    answer,
  })
  return (await gradeAll(bt.graders, ev)).grade
}

describe('panel import bfcl', () => {
  it('imports a whole data folder: rows BFCL grades by AST or relevance become tasks, every other row is listed with its reason and counted', async () => {
    const r = await importBfcl(RULES, out)
    expect(r.tasks.map((t) => t.id).sort()).toEqual([
      'irrelevance_0',
      'live_relevance_0-0-0',
      'live_simple_0-0-0',
      'multiple_0',
      'parallel_0',
      'simple_java_0',
      'simple_javascript_0',
      'simple_python_0',
      'simple_python_1',
      'simple_python_2',
    ])
    const byId = Object.fromEntries(r.skipped.map((s) => [s.id, s.reason]))
    expect(byId['multi_turn_base_0']).toMatch(/^multi-turn: .*stateful Python backends/)
    expect(byId['multi_turn_base_1']).toMatch(/^multi-turn/)
    // The malformed line is skipped alone and located; the rows around it still import.
    expect(byId['line 2']).toMatch(/BFCL_v4_live_simple\.json:2"? not valid JSON/)
    // An answers file that lacks an id the questions have: that row is listed.
    expect(byId['live_simple_1-0-1']).toBe('no ground truth in the answers file')
    expect(countReasons(r.skipped)).toEqual([
      ['multi-turn', 2],
      ['malformed row', 1],
      ['no ground truth in the answers file', 1],
    ])
  })

  it('every imported task passes its own reference solution and fails untouched (panel verify: 0 bad)', async () => {
    await importBfcl(RULES, out)
    const v = await verifyPanel(out)
    expect(v.tasks).toHaveLength(10)
    for (const t of v.tasks)
      expect([t.id, t.start, t.solution, t.note]).toEqual([t.id, 'fail', 'pass', undefined])
  })

  it("grades strings after BFCL's standardization and says which semantics graded", async () => {
    await importBfcl(file('rules'), out)
    const ok = await attempt('simple_python_0', [['weather_forecast', { city: 'san francisco ca', days: 3 }]])
    expect(ok).toMatchObject({ reward: 1, reason: expect.stringMatching(/BFCL semantics/) })
    expect(standardize("April 1, 2024 - 'x'")).toBe('april12024"x"')
    const wrong = await attempt('simple_python_0', [['weather_forecast', { city: 'Los Angeles', days: 3 }]])
    expect(wrong).toMatchObject({ reward: 0, code: 'bfcl:wrong_value' })
    // The dotted name keeps its visible mapping in the reason.
    expect(wrong.reason).toMatch(/weather_forecast \(BFCL weather\.forecast\)/)
  })

  it('optional parameters: "" may be omitted; a required parameter may not; an unexpected one fails', async () => {
    await importBfcl(file('rules'), out)
    const omit = await attempt('simple_python_0', [['weather_forecast', { city: 'San Francisco', days: 3 }]])
    expect(omit.reward).toBe(1)
    const missing = await attempt('simple_python_0', [['weather_forecast', { city: 'San Francisco' }]])
    expect(missing.code).toBe('bfcl:missing_required')
    const extra = await attempt('simple_python_0', [
      ['weather_forecast', { city: 'San Francisco', days: 3, x: 1 }],
    ])
    expect(extra.code).toBe('bfcl:unexpected_param')
  })

  it('null among the allowed values: the parameter may be omitted or sent as null (TOML keeps it as { null = true })', async () => {
    await importBfcl(file('rules'), out)
    expect(readFileSync(path.join(out, 'simple_python_2/task.toml'), 'utf8')).toMatch(/null = true/)
    expect((await attempt('simple_python_2', [['search_products', { query: 'running shoes' }]])).reward).toBe(
      1,
    )
    expect(
      (await attempt('simple_python_2', [['search_products', { query: 'running shoes', brand: null }]]))
        .reward,
    ).toBe(1)
    expect(
      (await attempt('simple_python_2', [['search_products', { query: 'x', brand: 'Nike' }]])).reward,
    ).toBe(0)
    // A list is compared element by element after standardization, order kept.
    const tags = (t: string[]) =>
      attempt('simple_python_2', [['search_products', { query: 'Running Shoes', tags: t }]])
    expect((await tags(['red', 'lightweight'])).reward).toBe(1)
    expect((await tags(['lightweight', 'red'])).reward).toBe(0)
  })

  it('numbers: an int where a float is declared passes; a float where an int is declared does not', async () => {
    await importBfcl(file('rules'), out)
    expect((await attempt('simple_python_1', [['circle_area', { radius: 2 }]])).reward).toBe(1)
    expect((await attempt('simple_python_1', [['circle_area', { radius: 2.0, precision: 2 }]])).reward).toBe(
      1,
    )
    const f = await attempt('simple_python_1', [['circle_area', { radius: 2, precision: 2.5 }]])
    expect(f).toMatchObject({ reward: 0, code: 'bfcl:type_error' })
    const b = await attempt('simple_python_1', [['circle_area', { radius: true }]])
    expect(b.code).toBe('bfcl:type_error')
  })

  it('parallel calls match in any order and in number; multiple picks the expected one of several functions', async () => {
    await importBfcl(file('rules'), out)
    const both = await attempt('parallel_0', [
      ['get_weather', { city: 'Tokyo' }],
      ['get_weather', { city: 'boston ma' }],
    ])
    expect(both.reward).toBe(1)
    expect((await attempt('parallel_0', [['get_weather', { city: 'Tokyo' }]])).code).toBe('bfcl:wrong_count')
    expect(
      (
        await attempt('parallel_0', [
          ['get_weather', { city: 'Tokyo' }],
          ['get_weather', { city: 'Tokyo' }],
        ])
      ).reward,
    ).toBe(0)
    expect((await attempt('multiple_0', [['math_factorial', { number: 5 }]])).reward).toBe(1)
    const other = await attempt('multiple_0', [['math_gcd', { a: 5, b: 1 }]])
    expect(other).toMatchObject({ reward: 0, code: 'bfcl:wrong_func_name' })
  })

  it('Java and JavaScript values are source literals converted by the declared type', async () => {
    await importBfcl(RULES, out)
    const bridge = JSON.parse(readFileSync(path.join(out, 'simple_java_0/environment/bridge.json'), 'utf8'))
    expect(bridge.validate_arguments).toBe(false)
    expect(bridge.tools[0].parameters.properties.limit).toMatchObject({
      type: 'string',
      description: 'Limit. This is Java long type parameter in string representation.',
    })
    const java = (args: Record<string, unknown>) =>
      attempt('simple_java_0', [
        [
          'Cache_open',
          {
            name: 'users',
            persistent: 'true',
            limit: '500L',
            ratio: '0.75f',
            options: 'new HashMap<String, Object>() {{ put("retries", 3); put("mode", "fast"); }}',
            ...args,
          },
        ],
      ])
    expect((await java({})).reward).toBe(1)
    expect((await java({ limit: '500' })).reward).toBe(0) // a long needs its L
    expect((await java({ ratio: '0.75' })).reward).toBe(0) // a float needs its f
    expect((await java({ persistent: true })).code).toBe('bfcl:type_error') // not a literal
    const js = (items: string, descending = 'true') =>
      attempt('simple_javascript_0', [['sortItems', { items, descending }]])
    expect((await js("['pear', 'fig']")).reward).toBe(1)
    expect((await js('["Pear", "fig"]')).reward).toBe(1)
    expect((await js("['fig', 'pear']")).reward).toBe(0)
    expect((await js("['pear', 'fig']", 'false')).reward).toBe(0)
  })

  it('irrelevance passes with no call and an answer; live_relevance with at least one well-formed call', async () => {
    await importBfcl(RULES, out)
    expect((await attempt('irrelevance_0', [], 'I cannot tell jokes with a weather tool.')).reward).toBe(1)
    expect((await attempt('irrelevance_0', [['get_weather', { city: 'x' }]])).code).toBe('bfcl:call_made')
    expect((await attempt('irrelevance_0', [], null)).reward).toBeNull()
    expect(
      (await attempt('live_relevance_0-0-0', [['image_generate', { prompt: 'a cat', size: '512' }]])).reward,
    ).toBe(1)
    expect((await attempt('live_relevance_0-0-0', [])).code).toBe('bfcl:no_call')
  })

  it('exact semantics stay available as a declared option', () => {
    const spec = BfclSpec.parse({
      mode: 'simple',
      semantics: 'exact',
      functions: [{ tool: 'f', name: 'f', types: { city: 'string', r: 'float' } }],
      calls: [{ f: { city: ['San Francisco'], r: [2.0, ''] } }],
    })
    const g = (args: Record<string, unknown>) =>
      gradeBfcl(spec, { calls: [{ tool: 'f', arguments: args, status: 'ok' }], answer: null })
    expect(g({ city: 'San Francisco' })).toMatchObject({
      reward: 1,
      reason: expect.stringMatching(/exact semantics/),
    })
    expect(g({ city: 'san francisco' }).reward).toBe(0)
    expect(g({ city: 'San Francisco', r: 2.5 }).reward).toBe(0)
  })

  it('a single question file without its answers file is a clear error; an existing task folder is never overwritten', async () => {
    const err = await importBfcl(file('rules'), out, path.join(RULES, 'nope.json')).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toMatch(/nope\.json.*cannot read the answers file/)
    await importBfcl(file('rules'), out)
    expect(existsSync(path.join(out, 'parallel_0/task.toml'))).toBe(true)
    await expect(importBfcl(file('rules'), out)).rejects.toThrow(/already exist/)
  })
})
