import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DialogueMessage, STOP_TOKEN } from '../../src/dialogue/loop.js'
import { parseUserSimulation, USER_SIM_MARKER, userSimulationBody } from '../../src/dialogue/user-request.js'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'

const SCENARIO =
  'You are Ada. Your order W1001 should go to "5 Harbor Rd, Boston".\nAsk first, then change it.'

describe('the simulated user’s request', () => {
  it('round-trips scenario and conversation; the harness’s answers are the user side', () => {
    const history: DialogueMessage[] = [
      { role: 'user', text: 'Hello!' },
      { role: 'agent', text: null },
    ]
    const body = userSimulationBody('user-sim', SCENARIO, history)
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user'])
    expect(body.messages[0]?.content.startsWith(USER_SIM_MARKER)).toBe(true)
    expect(parseUserSimulation(body)).toEqual({
      scenario: SCENARIO,
      history: [
        { role: 'user', text: 'Hello!' },
        { role: 'agent', text: '(no answer)' },
      ],
    })
  })

  it('a body without the marked system message first is not one (a harness cannot pass as the user)', () => {
    expect(parseUserSimulation({ messages: [{ role: 'user', content: USER_SIM_MARKER }] })).toBeNull()
    expect(parseUserSimulation({ messages: [] })).toBeNull()
    expect(parseUserSimulation({ messages: 'x' })).toBeNull()
    expect(parseUserSimulation({})).toBeNull()
  })
})

describe('the scripted model plays the user over HTTP', () => {
  let model: ScriptedModel
  beforeAll(async () => {
    model = await startScriptedModel({})
  })
  afterAll(async () => {
    await model.close()
  })

  const ask = async (history: DialogueMessage[]) => {
    const res = await fetch(`${model.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify(userSimulationBody('user-sim', SCENARIO, history)),
    })
    const json = (await res.json()) as { choices: { message: { content: string } }[]; usage: unknown }
    return { text: json.choices[0]?.message.content, usage: json.usage }
  }

  it('discloses the scenario one sentence per reply, never its instructions, then STOP', async () => {
    const h: DialogueMessage[] = [
      { role: 'user', text: 'Hello!' },
      { role: 'agent', text: 'How can I help?' },
    ]
    const first = await ask(h)
    expect(first.text).toBe('I am Ada.')
    expect(first.usage).toMatchObject({ prompt_tokens: expect.any(Number) })
    h.push({ role: 'user', text: 'I am Ada.' }, { role: 'agent', text: 'Which order?' })
    expect((await ask(h)).text).toBe('My order W1001 should go to "5 Harbor Rd, Boston".')
    h.push({ role: 'user', text: 'x' }, { role: 'agent', text: 'Done.' })
    const last = (await ask(h)).text
    expect(last).toContain(STOP_TOKEN)
    expect(last).not.toContain('Ask first')
  })
})
