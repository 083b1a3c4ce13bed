import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseEnvironment } from '../../src/bridge/env-schema.js'
import { gradeToolCalls, ToolCallsSpec } from '../../src/grade/tool-calls.js'
import { loadBridgeTask } from '../../src/panel/bridge-task.js'
import { importBfcl } from '../../src/panel/import/write.js'
import { loadTask } from '../../src/panel/task.js'
import { verifyPanel } from '../../src/panel/verify.js'
import { HwError } from '../../src/util/errors.js'

const FIXTURE = path.join(import.meta.dirname, 'fixtures/bfcl/BFCL_v4_mixed.json')
let out: string
beforeEach(() => {
  out = mkdtempSync(path.join(tmpdir(), 'hw-bfcl-'))
})
afterEach(() => rmSync(out, { recursive: true, force: true }))

describe('panel import bfcl', () => {
  it('converts single-turn rows, reports every skipped row, and the tasks verify', async () => {
    const r = await importBfcl(FIXTURE, out)
    expect(r.tasks.map((t) => t.id)).toEqual([
      'simple_python_0',
      'simple_python_1',
      'simple_python_2',
      'parallel_0',
    ])
    expect(r.skipped).toEqual([
      { id: 'multi_turn_base_0', reason: '2 turns: only single-turn rows are imported' },
      { id: 'irrelevance_0', reason: 'no expected call (irrelevance rows are not imported)' },
      { id: 'orphan_0', reason: 'no ground truth in the answers file' },
    ])
    const v = await verifyPanel(out)
    for (const t of v.tasks) expect([t.id, t.start, t.solution]).toEqual([t.id, 'fail', 'pass'])
  })

  it('maps pseudo-types and dotted names; the grader accepts BFCL alternatives and rejects others', async () => {
    await importBfcl(FIXTURE, out)
    const env = parseEnvironment(
      readFileSync(path.join(out, 'simple_python_1/environment/bridge.json'), 'utf8'),
      'x',
    )
    const tool = env.tools[0] as unknown as {
      name: string
      parameters: { properties: Record<string, { type: string; description: string }> }
    }
    expect(tool.parameters).toMatchObject({ type: 'object', properties: { base: { type: 'number' } } })
    expect(tool.parameters.properties.base?.description).toBe('The base. This is a float type value.')
    const hotel = await loadBridgeTask(await loadTask(path.join(out, 'simple_python_2')))
    expect(hotel.env.tools[0]?.name).toBe('hotel_book')
    expect(hotel.reference).toEqual([
      {
        tool: 'hotel_book',
        arguments: { city: 'Berlin', guests: { adults: 2, children: 0 }, extras: ['breakfast'] },
      },
    ])
    const spec = ToolCallsSpec.parse((hotel.graders[0] as { spec: unknown }).spec)
    const g = (args: Record<string, unknown>) =>
      gradeToolCalls(spec, { env: hotel.env, calls: [{ tool: 'hotel_book', arguments: args, status: 'ok' }] })
        .reward
    expect(g({ city: 'Berlin, Germany', guests: { adults: 2, children: 0 }, extras: ['breakfast'] })).toBe(1)
    expect(g({ city: 'Berlin', guests: { adults: 3 }, extras: ['breakfast'] })).toBe(0)
    expect(g({ city: 'Berlin', guests: { adults: 2 }, extras: ['breakfast', 'parking'] })).toBe(0)
  })

  it('refuses a malformed line with file and line, and never overwrites', async () => {
    const bad = path.join(out, 'BFCL_v4_bad.json')
    writeFileSync(bad, `${readFileSync(FIXTURE, 'utf8').split('\n')[0]}\n{"id": 3}\n`)
    const err = await importBfcl(
      bad,
      path.join(out, 'tasks'),
      path.join(path.dirname(FIXTURE), 'possible_answer/BFCL_v4_mixed.json'),
    ).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).details[0]).toMatch(/BFCL_v4_bad\.json:2 id: /)
    await importBfcl(FIXTURE, out)
    await expect(importBfcl(FIXTURE, out)).rejects.toThrow(/already exist/)
  })
})
