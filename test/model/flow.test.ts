import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { uniform } from '../../src/model/draw.js'
import { type ScriptedModel, type ScriptedModelOptions, startScriptedModel } from '../../src/model/server.js'
import { GREETING_INSTRUCTION, writePanel } from './fixtures.js'

const panel = writePanel()
const running: ScriptedModel[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.close()))
})
async function start(opts: ScriptedModelOptions): Promise<ScriptedModel> {
  const m = await startScriptedModel({ panelDirs: [panel], ...opts })
  running.push(m)
  return m
}

const bash = {
  type: 'function',
  function: {
    name: 'bash',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
}

/** A chat body at `step` (tool results so far) for an instruction. */
function chatBody(step: number, instruction = GREETING_INSTRUCTION, extra: Record<string, unknown> = {}) {
  const messages: unknown[] = [{ role: 'user', content: instruction }]
  for (let i = 0; i < step; i++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
    })
    messages.push({
      role: 'tool',
      tool_call_id: `c${i}`,
      content: i === 1 ? 'Command exited with code 1' : 'ok',
    })
  }
  return { model: 'gpt-5-mini', messages, tools: [bash], ...extra }
}

async function chat(m: ScriptedModel, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${m.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** Drive a whole conversation: the step sequence of actions the model took. */
async function drive(
  m: ScriptedModel,
  headers: Record<string, string> = {},
  instruction = GREETING_INSTRUCTION,
) {
  const out: string[] = []
  for (let step = 0; step < 6; step++) {
    const r = JSON.parse((await chat(m, chatBody(step, instruction), headers)).text)
    const msg = r.choices[0].message
    if (!msg.tool_calls) {
      out.push(`text:${msg.content}`)
      break
    }
    out.push(JSON.parse(msg.tool_calls[0].function.arguments).command)
  }
  return out
}

describe('the scripted task flow', () => {
  it('success: inspect → solve (heredoc with solve.sh verbatim) → test → final, past a failing tool result', async () => {
    const m = await start({ config: { success_rate: 1 } })
    const steps = await drive(m)
    expect(steps).toEqual([
      "ls -la && cat -- 'greet.sh'",
      "bash <<'HW_SOLVE'\n#!/bin/bash\nset -euo pipefail\nsed -i \"s/wrld/world/\" greet.sh\ncat > NOTES.md <<'EOF'\nfixed $HOME typo\nEOF\nHW_SOLVE",
      'sh check.sh',
      'text:Done: I applied the fix and ran `sh check.sh`.',
    ])
    const recs = m.records()
    expect(recs.map((r) => r.matchedBy)).toEqual(['instruction', 'instruction', 'instruction', 'instruction'])
    expect(recs.map((r) => r.previousToolError)).toEqual([false, false, true, false])
  })

  it('failure (success_rate 0): inspect → test → a short answer, no fix', async () => {
    const m = await start({ config: { success_rate: 0 } })
    expect(await drive(m)).toEqual([
      "ls -la && cat -- 'greet.sh'",
      'sh check.sh',
      'text:I looked into it and ran `sh check.sh`, but I could not find a fix; the task is not solved.',
    ])
  })

  it('per-task overrides: one task always fails while the other follows the global rate', async () => {
    const m = await start({ config: { success_rate: 1, tasks: { 'fix-greeting': { success_rate: 0 } } } })
    expect((await drive(m))[1]).toBe('sh check.sh')
    const farewell = 'Add a file `bye.txt` containing the single line "bye". Run `test -f bye.txt` to check.'
    expect((await drive(m, {}, farewell))[1]).toBe("bash <<'HW_SOLVE'\necho bye > bye.txt\nHW_SOLVE")
  })

  it('x-hw-instance picks the task even when the prompt text does not match', async () => {
    const m = await start({ config: { success_rate: 1 } })
    const steps = await drive(m, { 'x-hw-instance': 'add-farewell' }, 'Please do the task.')
    expect(steps[0]).toBe("ls -la && cat -- 'README.md'")
    expect(m.records()[0]).toMatchObject({ task: 'add-farewell', matchedBy: 'header' })
  })

  it('unknown task: one ls, then text; no tools: a title', async () => {
    const m = await start({})
    expect(await drive(m, {}, 'what is in here?')).toEqual(['ls', 'text:Done.'])
    const title = JSON.parse(
      (await chat(m, { model: 'm', messages: [{ role: 'user', content: `Title: ${GREETING_INSTRUCTION}` }] }))
        .text,
    )
    expect(title.choices[0].message.content).toBe('Fix the greeting')
  })

  it('a confirmation round (x-hw-round) draws afresh; round 0 keeps the first-run draw', async () => {
    const m = await start({ config: { seed: 11, success_rate: 0.5 } })
    let differs = 0
    for (let c = 0; c < 24; c++) {
      const cell = `cell-${c}`
      await chat(m, chatBody(1), { 'x-hw-cell': cell, 'x-hw-trial': '0', 'x-hw-round': '0' })
      expect(m.records().at(-1)!.success).toBe(uniform('success', 11, 'fix-greeting', cell, 0) < 0.5)
      await chat(m, chatBody(1), { 'x-hw-cell': cell, 'x-hw-trial': '0', 'x-hw-round': '1' })
      const rerun = uniform('success', 11, 'fix-greeting', cell, 0, 'round', 1) < 0.5
      expect(m.records().at(-1)!.success).toBe(rerun)
      if (rerun !== uniform('success', 11, 'fix-greeting', cell, 0) < 0.5) differs++
    }
    expect(differs).toBeGreaterThan(0)
  })

  it('success draw: seeded by (seed, task, cell, trial); cells from x-hw-cell or the tool fingerprint', async () => {
    const m = await start({ config: { seed: 11, success_rate: 0.5 } })
    const outcomes: boolean[] = []
    for (let c = 0; c < 24; c++) {
      const cell = `cell-${c}`
      await chat(m, chatBody(1), { 'x-hw-cell': cell, 'x-hw-trial': '2' })
      const rec = m.records().at(-1)!
      expect(rec).toMatchObject({ cell, trial: 2 })
      expect(rec.success).toBe(uniform('success', 11, 'fix-greeting', cell, 2) < 0.5)
      expect(rec.action?.kind === 'tool' && rec.action.step).toBe(rec.success ? 'solve' : 'test')
      outcomes.push(rec.success)
    }
    expect(outcomes).toContain(true)
    expect(outcomes).toContain(false)
    // without x-hw-cell, different tool sets are different cells
    await chat(m, chatBody(0))
    await chat(m, {
      ...chatBody(0),
      tools: [bash, { ...bash, function: { ...bash.function, name: 'read' } }],
    })
    const [a, b] = m.records().slice(-2)
    expect(a!.cell).toMatch(/^tools:[0-9a-f]{12}$/)
    expect(a!.cell).not.toBe(b!.cell)
  })

  it('latency: the answer waits latency_ms', async () => {
    const m = await start({ config: { latency_ms: 300 } })
    const t0 = performance.now()
    await chat(m, chatBody(0, GREETING_INSTRUCTION, { stream: true }))
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290)
  })
})

describe('injected faults', () => {
  it('429 with retry-after and a provider-shaped body on every API', async () => {
    const m = await start({ config: { faults: { rate_429: 1, rate_500: 0, hang_rate: 0 } } })
    const r = await chat(m, chatBody(0))
    expect(r.status).toBe(429)
    expect(r.headers.get('retry-after')).toBe('1')
    expect(JSON.parse(r.text).error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' })
    const a = await fetch(`${m.origin}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(a.status).toBe(429)
    expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
    const g = await fetch(`${m.origin}/v1beta/models/g:generateContent`, {
      method: 'POST',
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }),
    })
    expect(await g.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } })
    expect(m.records().map((x) => x.status)).toEqual([429, 429, 429])
  })

  it('500 in the provider shape', async () => {
    const m = await start({ config: { faults: { rate_429: 0, rate_500: 1, hang_rate: 0 } } })
    const r = await fetch(`${m.origin}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    })
    expect(r.status).toBe(500)
    expect(await r.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } })
  })

  it('hang: never answers; close() ends it and returns promptly', async () => {
    const m = await startScriptedModel({ config: { faults: { rate_429: 0, rate_500: 0, hang_rate: 1 } } })
    const pending = fetch(`${m.origin}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chatBody(0)),
    }).then(
      (r) => `answered ${r.status}`,
      () => 'connection closed',
    )
    const early = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still waiting'), 400))])
    expect(early).toBe('still waiting')
    await m.close()
    expect(await pending).toBe('connection closed')
    expect(m.records()[0]).toMatchObject({ fault: 'hang', status: 0 })
  })

  it('a retry at the same step gets a fresh draw; the fault sequence is deterministic', async () => {
    const cfg = { seed: 5, faults: { rate_429: 0.5, rate_500: 0, hang_rate: 0 } }
    const seq = async () => {
      const m = await start({ config: cfg })
      const statuses: number[] = []
      for (let i = 0; i < 16; i++) statuses.push((await chat(m, chatBody(0), { 'x-hw-cell': 'a' })).status)
      return statuses
    }
    const first = await seq()
    expect(await seq()).toEqual(first)
    expect(first).toContain(200)
    expect(first).toContain(429)
  })

  it('per-task fault overrides', async () => {
    const m = await start({
      config: { tasks: { 'fix-greeting': { faults: { rate_500: 1 } } } },
    })
    expect((await chat(m, chatBody(0))).status).toBe(500)
    expect((await chat(m, chatBody(0, 'something else'))).status).toBe(200)
  })
})

describe('determinism', () => {
  const requests: { path: string; body: unknown }[] = [
    { path: '/v1/chat/completions', body: chatBody(0) },
    { path: '/v1/chat/completions', body: chatBody(1, GREETING_INSTRUCTION, { stream: true }) },
    {
      path: '/v1/responses',
      body: { model: 'r', input: GREETING_INSTRUCTION, stream: true, tools: [{ type: 'local_shell' }] },
    },
    {
      path: '/v1/messages',
      body: {
        model: 'c',
        max_tokens: 9,
        stream: true,
        messages: [{ role: 'user', content: GREETING_INSTRUCTION }],
      },
    },
    {
      path: '/v1beta/models/g:streamGenerateContent?alt=sse',
      body: { contents: [{ role: 'user', parts: [{ text: GREETING_INSTRUCTION }] }] },
    },
  ]
  async function replay(): Promise<string[]> {
    const m = await start({ config: { seed: 9, success_rate: 0.5 }, now: () => Date.UTC(2026, 0, 1) })
    const out: string[] = []
    for (const r of requests) {
      const res = await fetch(`${m.origin}${r.path}`, { method: 'POST', body: JSON.stringify(r.body) })
      out.push(await res.text())
    }
    return out
  }

  it('the same requests give byte-identical response bodies, ids included; ids never repeat', async () => {
    const a = await replay()
    const b = await replay()
    expect(b).toEqual(a)
    const ids = a.join('\n').match(/"(?:id|call_id|responseId)":"[^"]+"/g) ?? []
    expect(ids.length).toBeGreaterThan(8)
    const local = a[2]!
    expect(local).toContain('"type":"local_shell_call"')
    expect(local).toContain('"command":["bash","-lc","ls -la && cat -- \'greet.sh\'"]')
    // ids of different responses differ
    const chatIds = a.slice(0, 2).map((t) => /"id":"(chatcmpl-[0-9a-f]+)"/.exec(t)?.[1])
    expect(chatIds[0]).not.toBe(chatIds[1])
  })
})

describe('loading panels', () => {
  it('accepts a single task folder and rejects a folder without tasks', async () => {
    const m = await startScriptedModel({ panelDirs: [path.join(panel, 'fix-greeting')] })
    running.push(m)
    expect((await drive(m))[0]).toBe("ls -la && cat -- 'greet.sh'")
    await expect(
      startScriptedModel({ panelDirs: [path.join(panel, 'fix-greeting', 'tests')] }),
    ).rejects.toMatchObject({
      code: 'panel_invalid',
    })
  })

  it('bad settings are a config_invalid error naming the field', async () => {
    await expect(startScriptedModel({ config: { success_rate: 2 } })).rejects.toMatchObject({
      code: 'config_invalid',
      details: [expect.stringContaining('success_rate')],
    })
  })
})
