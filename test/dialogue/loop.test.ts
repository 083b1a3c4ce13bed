import { describe, expect, it } from 'vitest'
import { type DialogueMessage, type DialoguePorts, runDialogue, STOP_TOKEN } from '../../src/dialogue/loop.js'
import { scenarioFacts, scriptedUserReply } from '../../src/dialogue/scripted-user.js'

/** Ports over scripted answers and replies; records what the harness was sent and what the user saw. */
function ports(answers: (string | null)[], replies: string[], failAt = -1) {
  const sent: string[] = []
  const seen: number[] = []
  const p: DialoguePorts = {
    async turn(message, index) {
      sent.push(message)
      return { answer: answers[index] ?? null, ok: index !== failAt }
    },
    async reply(history) {
      seen.push(history.length)
      return replies[seen.length - 1] ?? 'more?'
    },
  }
  return { p, sent, seen }
}

describe('the dialogue loop', () => {
  it('alternates harness turns and user replies until the user says STOP', async () => {
    const { p, sent, seen } = ports(['A1', 'A2'], ['my zip is 94110', `great ${STOP_TOKEN}`])
    const r = await runDialogue('Hi, I need help.', p, { maxTurns: 5 })
    expect(sent).toEqual(['Hi, I need help.', 'my zip is 94110'])
    expect(seen).toEqual([2, 4]) // the user sees the whole conversation so far
    expect(r).toEqual({
      turns: 2,
      ended: 'stop',
      history: [
        { role: 'user', text: 'Hi, I need help.' },
        { role: 'agent', text: 'A1' },
        { role: 'user', text: 'my zip is 94110' },
        { role: 'agent', text: 'A2' },
        { role: 'user', text: 'great' },
      ],
    })
  })

  it('a bare STOP adds no message; the token is never sent to the harness', async () => {
    const { p, sent } = ports(['A1'], [`  ${STOP_TOKEN} trailing text`])
    const r = await runDialogue('go', p, { maxTurns: 3 })
    expect(sent).toEqual(['go'])
    expect(r.history.at(-1)).toEqual({ role: 'agent', text: 'A1' })
    expect(r.ended).toBe('stop')
  })

  it('ends at max_turns without asking the user again', async () => {
    const { p, seen } = ports(['A1', 'A2', 'A3'], ['r1', 'r2', 'r3'])
    const r = await runDialogue('go', p, { maxTurns: 2 })
    expect(r.turns).toBe(2)
    expect(r.ended).toBe('max_turns')
    expect(seen).toEqual([2])
  })

  it('a failed turn ends it (the answer, if any, kept); a cancel stops before the next turn', async () => {
    const failed = await runDialogue('go', ports(['A1', null], ['r1'], 1).p, { maxTurns: 5 })
    expect(failed).toMatchObject({ turns: 2, ended: 'turn_failed' })
    expect(failed.history.at(-1)).toEqual({ role: 'agent', text: null })
    const ac = new AbortController()
    const { p, sent } = ports(['A1'], ['r1'])
    const cancelling: DialoguePorts = {
      turn: p.turn,
      async reply(h) {
        ac.abort()
        return p.reply(h)
      },
    }
    expect((await runDialogue('go', cancelling, { maxTurns: 5, signal: ac.signal })).ended).toBe('cancelled')
    expect(sent).toEqual(['go'])
  })

  it('a port that throws propagates; max_turns below 1 or fractional is refused', async () => {
    const boom: DialoguePorts = {
      turn: async () => {
        throw new Error('harness crashed')
      },
      reply: async () => 'x',
    }
    await expect(runDialogue('go', boom, { maxTurns: 2 })).rejects.toThrow('harness crashed')
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      await expect(runDialogue('go', ports([], []).p, { maxTurns: bad })).rejects.toThrow(RangeError)
    }
  })
})

describe('the scripted simulated user', () => {
  const scenario =
    'You are Bob Stone (zip code 94110). You want to cancel your pending order of two chairs.\n' +
    'Do not give your order id; give your name and zip code when asked.'
  const h = (n: number): DialogueMessage[] =>
    Array.from(
      { length: n },
      (_, i) => ({ role: i % 2 === 0 ? 'user' : 'agent', text: `m${i}` }) as DialogueMessage,
    )

  it('discloses one first-person fact per reply, then stops; simulator instructions are never said', () => {
    expect(scenarioFacts(scenario)).toEqual([
      'I am Bob Stone (zip code 94110).',
      'I want to cancel my pending order of two chairs.',
    ])
    expect(scriptedUserReply(scenario, h(2))).toBe('I am Bob Stone (zip code 94110).')
    expect(scriptedUserReply(scenario, h(4))).toBe('I want to cancel my pending order of two chairs.')
    expect(scriptedUserReply(scenario, h(6))).toContain(STOP_TOKEN)
    for (let n = 2; n <= 8; n += 2) expect(scriptedUserReply(scenario, h(n))).not.toMatch(/order id/)
  })

  it('an empty scenario stops at once; the loop then ends after one turn', async () => {
    const r = await runDialogue(
      'Hi',
      {
        turn: async () => ({ answer: 'Hello', ok: true }),
        reply: async (hist) => scriptedUserReply('', hist),
      },
      { maxTurns: 4 },
    )
    expect(r).toMatchObject({ turns: 1, ended: 'stop' })
  })
})
