import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ArgumentsTap, callArgumentTexts } from '../../src/bridge/args-text.js'
import { TraceLog } from '../../src/bridge/calls.js'
import { Dispatcher } from '../../src/bridge/dispatch.js'
import { EnvProvider } from '../../src/bridge/env-provider.js'
import { TRACE_FILE } from '../../src/bridge/open.js'
import { serveHttp, serveStdio } from '../../src/bridge/server.js'
import { BfclSpec, gradeBfcl } from '../../src/grade/bfcl.js'
import { collectEvidence } from '../../src/grade/evidence.js'
import { gradeAll } from '../../src/grade/registry.js'
import { type BridgeTask, loadBridgeTask } from '../../src/panel/bridge-task.js'
import { importBfcl } from '../../src/panel/import/write.js'
import { loadTask } from '../../src/panel/task.js'

// A BFCL v4 parallel row and its ground truth, written here: an integer, a float and a list of integers.
const QUESTION = {
  id: 'parallel_0',
  question: [
    [
      {
        role: 'user',
        content: 'Book 5 seats at ratio 0.5 for ids 1 and 2, and 3 seats at ratio 2 for id 4.',
      },
    ],
  ],
  function: [
    {
      name: 'book',
      description: 'Book seats.',
      parameters: {
        type: 'dict',
        properties: {
          seats: { type: 'integer', description: 'How many seats.' },
          ratio: { type: 'float', description: 'A ratio.' },
          ids: { type: 'array', items: { type: 'integer' }, description: 'Seat ids.' },
        },
        required: ['seats', 'ratio', 'ids'],
      },
    },
  ],
}
const ANSWER = {
  id: 'parallel_0',
  ground_truth: [
    { book: { seats: [5], ratio: [0.5], ids: [[1, 2]] } },
    { book: { seats: [3], ratio: [2.0], ids: [[4]] } },
  ],
}

let dir: string
let task: BridgeTask
beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hw-bfcl-num-'))
  const data = path.join(dir, 'data')
  mkdirSync(path.join(data, 'possible_answer'), { recursive: true })
  writeFileSync(path.join(data, 'BFCL_v4_parallel.json'), `${JSON.stringify(QUESTION)}\n`)
  writeFileSync(path.join(data, 'possible_answer', 'BFCL_v4_parallel.json'), `${JSON.stringify(ANSWER)}\n`)
  const out = path.join(dir, 'panel')
  const r = await importBfcl(path.join(data, 'BFCL_v4_parallel.json'), out)
  expect(r.skipped).toEqual([])
  expect(r.tasks).toHaveLength(1)
  task = await loadBridgeTask(await loadTask(path.join(out, 'parallel_0')))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function bridge(name: string) {
  const state = path.join(dir, name, 'state')
  const ws = path.join(dir, name, 'ws')
  mkdirSync(state, { recursive: true })
  mkdirSync(ws, { recursive: true })
  const dispatcher = new Dispatcher(
    new EnvProvider(task.env, state, ws),
    null,
    new TraceLog(path.join(state, TRACE_FILE)),
  )
  const grade = async () => {
    const ev = await collectEvidence({
      env: task.env,
      reference: task.reference,
      stateDir: state,
      workspace: ws,
      answer: 'done',
    })
    return (await gradeAll(task.graders, ev)).grade
  }
  return { dispatcher, state, grade }
}

const call = (id: number, args: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"book","arguments":${args}}}`

/** Send each call as the raw JSON text a harness writes, over the bridge's Streamable HTTP transport. */
async function overHttp(name: string, argTexts: string[]) {
  const b = bridge(name)
  const served = await serveHttp(b.dispatcher, '127.0.0.1', 0)
  try {
    for (const [i, args] of argTexts.entries()) {
      const res = await fetch(served.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: call(i + 1, args),
      })
      expect(res.status).toBe(200)
      expect(JSON.stringify(await res.json())).not.toMatch(/"isError":true/)
    }
  } finally {
    await served.close()
  }
  return b
}

const FIRST = '{"seats": 5, "ratio": 0.5, "ids": [1, 2]}'
const SECOND = '{"seats": 3, "ratio": 2.0, "ids": [4]}'

describe('BFCL number types read from the arguments as sent', () => {
  it('an integer written where a float is declared passes, as Python accepts it', async () => {
    const b = await overHttp('int-for-float', [FIRST, '{"seats": 3, "ratio": 2, "ids": [4]}'])
    expect(await b.grade()).toMatchObject({ reward: 1 })
    // The trace keeps the text with its literals.
    const trace = readFileSync(path.join(b.state, TRACE_FILE), 'utf8').trim().split('\n')
    expect(JSON.parse(trace[1] as string).arguments_text).toBe('{"seats":3,"ratio":2,"ids":[4]}')
  })

  it('a float literal (5.0) where an integer is declared fails, though parsed JSON holds 5', async () => {
    const b = await overHttp('float-for-int', ['{"seats": 5.0, "ratio": 0.5, "ids": [1, 2]}', SECOND])
    // No call left matches the first expected one (BFCL: cannot find a match in the parallel check).
    expect(await b.grade()).toMatchObject({ reward: 0 })
    const trace = readFileSync(path.join(b.state, TRACE_FILE), 'utf8').trim().split('\n')
    expect(JSON.parse(trace[0] as string).arguments).toEqual({ seats: 5, ratio: 0.5, ids: [1, 2] })
    expect(JSON.parse(trace[0] as string).arguments_text).toBe('{"seats":5.0,"ratio":0.5,"ids":[1,2]}')
  })

  it('an exponent literal is a float too, and a float inside a list of integers fails', async () => {
    const exp = await overHttp('exp', ['{"seats": 5e0, "ratio": 0.5, "ids": [1, 2]}', SECOND])
    expect((await exp.grade()).reward).toBe(0)
    const nested = await overHttp('nested', ['{"seats": 5, "ratio": 0.5, "ids": [1.0, 2]}', SECOND])
    expect((await nested.grade()).reward).toBe(0)
    const fine = await overHttp('fine', [FIRST, SECOND])
    expect((await fine.grade()).reward).toBe(1)
  })

  it('over stdio the same text reaches the trace, even split across chunks mid-character', async () => {
    const b = bridge('stdio')
    const input = new PassThrough()
    const output = new PassThrough()
    const replies: string[] = []
    output.on('data', (c: Buffer) => replies.push(c.toString()))
    const served = serveStdio(b.dispatcher, input, output)
    const line = `${call(7, '{"seats": 5.0, "ratio": 0.5, "ids": [1, 2], "note": "caf\u00e9"}')}\n`
    const bytes = Buffer.from(line)
    const cut = bytes.indexOf(Buffer.from('\u00e9')) + 1
    input.write(bytes.subarray(0, cut))
    input.write(bytes.subarray(cut))
    input.write(`${call(8, SECOND)}\n`)
    await new Promise((r) => setTimeout(r, 300))
    input.end()
    await served
    const trace = readFileSync(path.join(b.state, TRACE_FILE), 'utf8').trim().split('\n')
    expect(trace).toHaveLength(2)
    expect(JSON.parse(trace[0] as string).arguments_text).toBe(
      '{"seats":5.0,"ratio":0.5,"ids":[1,2],"note":"caf\u00e9"}',
    )
    expect(JSON.parse(trace[1] as string).arguments_text).toBe('{"seats":3,"ratio":2.0,"ids":[4]}')
  })

  it('a trace without the text (an older one) grades the parsed arguments: 5.0 is then 5', async () => {
    const b = bridge('legacy')
    await b.dispatcher.call('book', JSON.parse('{"seats": 5.0, "ratio": 0.5, "ids": [1, 2]}'))
    await b.dispatcher.call('book', JSON.parse(SECOND))
    expect((await b.grade()).reward).toBe(1)
  })

  it('in a single call the miss is named: a float literal where an integer is declared is a type error', () => {
    const spec = BfclSpec.parse({
      mode: 'simple',
      functions: [
        { tool: 'book', name: 'book', required: ['seats'], types: { seats: 'integer', ratio: 'float' } },
      ],
      calls: [{ book: { seats: [5], ratio: [2.0, ''] } }],
    })
    const grade = (text: string) =>
      gradeBfcl(spec, {
        calls: [{ tool: 'book', arguments: JSON.parse(text), arguments_text: text, status: 'ok' }],
        answer: null,
      })
    expect(grade('{"seats":5.0}')).toMatchObject({ reward: 0, code: 'bfcl:type_error' })
    expect(grade('{"seats":5.0}').reason).toMatch(/book: parameter seats is not integer \(BFCL semantics\)/)
    expect(grade('{"seats":5}').reward).toBe(1)
    expect(grade('{"seats":5,"ratio":2}').reward).toBe(1)
    expect(grade('{"seats":5,"ratio":2.00}').reward).toBe(1)
    expect(grade('{"seats":-5}')).toMatchObject({ reward: 0, code: 'bfcl:wrong_value' })
  })

  it('reads tools/call texts from single messages and batches; other messages and bad JSON give none', () => {
    const m = callArgumentTexts(
      `[${call(1, '{"a": 1.50}')}, ${call('"x"' as unknown as number, '{"b": -0.0}')}]`,
    )
    expect([...m.entries()]).toEqual([
      ['n:1', '{"a":1.50}'],
      ['s:x', '{"b":-0.0}'],
    ])
    expect(callArgumentTexts('{"jsonrpc":"2.0","id":1,"method":"tools/list"}').size).toBe(0)
    expect(callArgumentTexts('{"jsonrpc":').size).toBe(0)
    const texts = new Map<string, string>()
    const tap = new ArgumentsTap(texts)
    tap.end(call(3, '{"z": 10.0}'))
    tap.resume()
    expect(texts.get('n:3')).toBe('{"z":10.0}')
  })
})
