import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { TracedCall } from '../../src/bridge/calls.js'
import { parseEnvironment } from '../../src/bridge/env-schema.js'
import { gradeAnswer } from '../../src/grade/answer.js'
import { gradeCommand } from '../../src/grade/command.js'
import { gradeEndState } from '../../src/grade/end-state.js'
import { gradeFiles } from '../../src/grade/files.js'
import { gradeAll, parseGraderUses } from '../../src/grade/registry.js'
import { gradeToolCalls, maximumMatching, ToolCallsSpec } from '../../src/grade/tool-calls.js'
import type { Evidence } from '../../src/grade/types.js'

const env = parseEnvironment(
  JSON.stringify({
    version: 1,
    world: { orders: { W1: { status: 'pending' }, W2: { status: 'pending' } } },
    tools: [
      {
        name: 'weather',
        description: 'd',
        parameters: {
          type: 'object',
          properties: {
            city: { type: 'string' },
            days: { type: 'integer' },
            temp: { type: 'number' },
            opts: { type: 'object' },
          },
        },
        effect: { op: 'return', path: 'orders' },
      },
      {
        name: 'cancel',
        description: 'd',
        parameters: { type: 'object', properties: { id: { type: 'string' } } },
        effect: { op: 'set', path: 'orders.{id}.status', value: 'cancelled' },
      },
    ],
  }),
  'env.json',
)
const call = (
  tool: string,
  args: Record<string, unknown>,
  status: TracedCall['status'] = 'ok',
): TracedCall => ({ tool, arguments: args, status })
const spec = (v: unknown) => ToolCallsSpec.parse(v)

describe('tool_calls', () => {
  it('matches allowed values, optional params and int-for-float', () => {
    const s = spec({
      calls: [{ weather: { city: ['Paris', 'paris'], days: [3], temp: [20.0], opts: [''] } }],
    })
    expect(
      gradeToolCalls(s, { env, calls: [call('weather', { city: 'paris', days: 3, temp: 20 })] }).reward,
    ).toBe(1)
  })

  it('reports BFCL-style codes', () => {
    const s = spec({ calls: [{ weather: { city: ['Paris'], days: [3] } }] })
    const g = (args: Record<string, unknown>) =>
      gradeToolCalls(s, { env, calls: [call('weather', args)] }).code
    expect(g({ city: 'Paris' })).toBe('tool_calls:missing_param')
    expect(g({ city: 'Paris', days: 3, temp: 1 })).toBe('tool_calls:unexpected_param')
    expect(g({ city: 'Paris', days: '3' })).toBe('tool_calls:type_error')
    expect(g({ city: 'Paris', days: 3.5 })).toBe('tool_calls:type_error')
    expect(g({ city: 'Lyon', days: 3 })).toBe('tool_calls:wrong_value')
    expect(gradeToolCalls(s, { env, calls: [] }).code).toBe('tool_calls:missing_call')
  })

  it('finds the assignment greedy matching misses (parallel calls in any order)', () => {
    // Expected A accepts both recorded calls, B only the first: greedy A→first leaves B unmatched.
    const s = spec({ calls: [{ weather: { city: ['Paris', 'Lyon'] } }, { weather: { city: ['Paris'] } }] })
    const calls = [call('weather', { city: 'Paris' }), call('weather', { city: 'Lyon' })]
    expect(gradeToolCalls(s, { env, calls }).reward).toBe(1)
    expect(gradeToolCalls(s, { env, calls: [...calls].reverse() }).reward).toBe(1)
    expect(gradeToolCalls(spec({ ...s, order: 'strict' }), { env, calls }).reward).toBe(0)
    expect(
      maximumMatching(
        [
          [true, true],
          [true, false],
        ],
        2,
      ),
    ).toEqual([1, 0])
  })

  it('extra calls fail unless allowed; invalid-argument calls are left out unless counted', () => {
    const s = spec({ calls: [{ cancel: { id: ['W1'] } }] })
    const calls = [
      call('cancel', { id: 1 }, 'invalid_arguments'),
      call('cancel', { id: 'W1' }),
      call('cancel', { id: 'W2' }),
    ]
    expect(gradeToolCalls(s, { env, calls }).code).toBe('tool_calls:extra_call')
    expect(gradeToolCalls(spec({ ...s, allow_extra: true }), { env, calls }).reward).toBe(1)
    expect(
      gradeToolCalls(spec({ ...s, count_invalid: true, allow_extra: true }), { env, calls }).reward,
    ).toBe(1)
    expect(gradeToolCalls(spec({ ...s, count_invalid: true }), { env, calls: calls.slice(0, 2) }).code).toBe(
      'tool_calls:extra_call',
    )
  })

  it('matches dict parameters with per-key allowed lists', () => {
    const s = spec({ calls: [{ weather: { opts: [{ unit: ['c', 'celsius'], detail: [''] }] } }] })
    const g = (opts: unknown) => gradeToolCalls(s, { env, calls: [call('weather', { opts })] }).reward
    expect(g({ unit: 'celsius' })).toBe(1)
    expect(g({ unit: 'c', detail: 'x' })).toBe(0)
    expect(g({ unit: 'f' })).toBe(0)
  })

  it('never puts argument values in the reason', () => {
    const s = spec({ calls: [{ weather: { city: ['Paris'] } }] })
    const g = gradeToolCalls(s, { env, calls: [call('weather', { city: 'SECRET-VALUE' })] })
    expect(g.reason).not.toContain('SECRET-VALUE')
  })
})

describe('end_state', () => {
  const base = { env, initialWorld: env.world, reference: [{ tool: 'cancel', arguments: { id: 'W1' } }] }
  it('passes when the final world holds what the reference leaves', () => {
    const world = { orders: { W1: { status: 'cancelled' }, W2: { status: 'pending' } }, extra: 1 }
    expect(gradeEndState({}, { ...base, world }).reward).toBe(1)
  })
  it('fails on a wrong or a collateral change, naming the path', () => {
    const wrong = gradeEndState(
      {},
      { ...base, world: { orders: { W1: { status: 'pending' }, W2: { status: 'pending' } } } },
    )
    expect(wrong).toMatchObject({
      reward: 0,
      code: 'end_state:mismatch',
      reason: 'orders.W1.status: differs from the reference',
    })
    const collateral = { orders: { W1: { status: 'cancelled' }, W2: { status: 'cancelled' } } }
    expect(gradeEndState({}, { ...base, world: collateral }).reason).toContain('orders.W2.status')
    // Narrowed to W1, the collateral change is not looked at.
    expect(gradeEndState({ paths: ['orders.W1'] }, { ...base, world: collateral }).reward).toBe(1)
  })
  it('a broken reference is ungraded, never 0', () => {
    const g = gradeEndState(
      {},
      { ...base, reference: [{ tool: 'cancel', arguments: { id: 'W9' } }], world: env.world },
    )
    expect(g).toMatchObject({ reward: null, code: 'end_state:bad_reference' })
  })
})

const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'hw-graders-')))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('files and command', () => {
  const ws = path.join(dir, 'ws')
  mkdirSync(ws)
  writeFileSync(path.join(ws, 'out.txt'), 'total: 42\n')
  writeFileSync(path.join(dir, 'outside.txt'), 'total: 42\n')
  symlinkSync(path.join(dir, 'outside.txt'), path.join(ws, 'link.txt'))

  it('checks contains, exact and absent', async () => {
    expect(
      (await gradeFiles({ files: { 'out.txt': { contains: ['total', '42'] } } }, { workspace: ws })).reward,
    ).toBe(1)
    expect(
      (await gradeFiles({ files: { 'out.txt': { exact: 'total: 42' } } }, { workspace: ws })).reward,
    ).toBe(1)
    expect((await gradeFiles({ files: { 'out.txt': { contains: '43' } } }, { workspace: ws })).code).toBe(
      'files:lacks',
    )
    expect((await gradeFiles({ files: { 'nope.txt': { absent: true } } }, { workspace: ws })).reward).toBe(1)
    expect((await gradeFiles({ files: { 'nope.txt': { contains: 'x' } } }, { workspace: ws })).code).toBe(
      'files:missing',
    )
  })
  it('refuses to read through a link out of the workspace (ungraded)', async () => {
    expect(await gradeFiles({ files: { 'link.txt': { contains: '42' } } }, { workspace: ws })).toMatchObject({
      reward: null,
      code: 'files:bad_path',
    })
    expect(
      (await gradeFiles({ files: { '../outside.txt': { contains: '42' } } }, { workspace: ws })).reward,
    ).toBeNull()
  })
  it('command passes on 0, fails otherwise, is ungraded on timeout or not runnable', async () => {
    expect(
      (await gradeCommand({ command: 'grep -q 42 out.txt', timeout_s: 5 }, { workspace: ws })).reward,
    ).toBe(1)
    expect(
      (await gradeCommand({ command: 'grep -q 43 out.txt', timeout_s: 5 }, { workspace: ws })).reward,
    ).toBe(0)
    expect(
      (await gradeCommand({ command: 'no-such-command-x', timeout_s: 5 }, { workspace: ws })).reward,
    ).toBeNull()
    expect((await gradeCommand({ command: 'sleep 5', timeout_s: 0.2 }, { workspace: ws })).code).toBe(
      'command:timeout',
    )
  })
})

describe('answer', () => {
  it('exact, regex and numeric tolerance; no answer is ungraded', () => {
    expect(gradeAnswer({ exact: 'Yes', ignore_case: true, tolerance: 0 }, { answer: ' yes\n' }).reward).toBe(
      1,
    )
    expect(
      gradeAnswer({ regex: 'W\\d+', ignore_case: false, tolerance: 0 }, { answer: 'order W12' }).reward,
    ).toBe(1)
    expect(
      gradeAnswer(
        { number: 1234.5, ignore_case: false, tolerance: 0.01 },
        { answer: 'The total is 1,234.5 USD' },
      ).reward,
    ).toBe(1)
    expect(
      gradeAnswer({ number: 10, ignore_case: false, tolerance: 0.5 }, { answer: 'about 11' }).reward,
    ).toBe(0)
    expect(gradeAnswer({ exact: 'x', ignore_case: false, tolerance: 0 }, { answer: null }).reward).toBeNull()
  })
})

describe('registry', () => {
  it('parses grader lists and refuses unknown graders and bad fields', () => {
    expect(parseGraderUses([{ name: 'end_state' }, { name: 'answer', regex: 'x' }])).toMatchObject({
      uses: [{ name: 'end_state' }, { name: 'answer' }],
    })
    const bad = parseGraderUses([
      { name: 'vibes' },
      { name: 'answer', exact: 'a', regex: 'b' },
      { name: 'files', files: 3 },
    ])
    expect('problems' in bad && bad.problems).toEqual([
      '[0].name: unknown grader "vibes" (expected one of tool_calls, bfcl, end_state, files, command, answer)',
      '[1].answer: give exactly one of exact, regex, number',
      '[2].files: Invalid input: expected record, received number',
    ])
  })

  it('multiplies parts; any ungraded part makes the whole ungraded', async () => {
    const ev = {
      env,
      initialWorld: env.world,
      world: env.world,
      calls: [],
      reference: [],
      workspace: dir,
      answer: '7',
    } as Evidence
    const parsed = parseGraderUses([{ name: 'end_state' }, { name: 'answer', number: 7 }])
    if (!('uses' in parsed)) throw new Error('bad')
    expect((await gradeAll(parsed.uses, ev)).grade.reward).toBe(1)
    const withFail = parseGraderUses([{ name: 'end_state' }, { name: 'answer', number: 8 }])
    if (!('uses' in withFail)) throw new Error('bad')
    expect((await gradeAll(withFail.uses, ev)).grade).toMatchObject({
      reward: 0,
      code: 'answer:out_of_tolerance',
    })
    expect((await gradeAll(withFail.uses, { ...ev, answer: null })).grade.reward).toBeNull()
  })
})
