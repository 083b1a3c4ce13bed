/** The token a simulated user ends the conversation with (τ²-bench's user simulator convention). */
export const STOP_TOKEN = '###STOP###'

/** One message of a dialogue. `agent` is the harness's final answer of a turn (null: it gave none). */
export interface DialogueMessage {
  role: 'user' | 'agent'
  text: string | null
}

/** What one harness turn gave: its final answer, and whether the turn ended cleanly. */
export interface TurnResult {
  answer: string | null
  ok: boolean
}

/**
 * The two ports of a dialogue. `turn` runs the harness on one user message (the first starts its
 * session, later ones resume it: the world lives in the bridge's state folder, so it persists);
 * `reply` asks the simulated user for its next message given the whole conversation so far.
 */
export interface DialoguePorts {
  turn(message: string, index: number): Promise<TurnResult>
  reply(history: readonly DialogueMessage[]): Promise<string>
}

/** Why a dialogue ended: the user said STOP, the turn limit, a harness turn that failed, or a cancel. */
export type DialogueEnd = 'stop' | 'max_turns' | 'turn_failed' | 'cancelled'

export interface DialogueResult {
  history: DialogueMessage[]
  /** Harness turns run. */
  turns: number
  ended: DialogueEnd
}

/**
 * Drive a multi-turn conversation (pure logic over the two ports; no processes of its own): the
 * opening message goes to the harness; after each answer the simulated user replies; a reply holding
 * `###STOP###` ends it (the text before the token, if any, is kept as the user's last message, never
 * sent to the harness); so do `maxTurns` harness turns, a failed turn, or `signal`. Grading happens
 * after, on the world as the last turn left it. Throws only what a port throws; `maxTurns` < 1 is a
 * RangeError.
 */
export async function runDialogue(
  opening: string,
  ports: DialoguePorts,
  opts: { maxTurns: number; signal?: AbortSignal },
): Promise<DialogueResult> {
  if (!Number.isInteger(opts.maxTurns) || opts.maxTurns < 1) {
    throw new RangeError(`max_turns must be a whole number ≥ 1, got ${opts.maxTurns}`)
  }
  const history: DialogueMessage[] = []
  let message = opening
  let turns = 0
  for (;;) {
    if (opts.signal?.aborted) return { history, turns, ended: 'cancelled' }
    history.push({ role: 'user', text: message })
    const r = await ports.turn(message, turns)
    turns += 1
    history.push({ role: 'agent', text: r.answer })
    if (!r.ok) return { history, turns, ended: 'turn_failed' }
    if (turns >= opts.maxTurns) return { history, turns, ended: 'max_turns' }
    if (opts.signal?.aborted) return { history, turns, ended: 'cancelled' }
    const reply = await ports.reply(history)
    const at = reply.indexOf(STOP_TOKEN)
    if (at >= 0) {
      const last = reply.slice(0, at).trim()
      if (last !== '') history.push({ role: 'user', text: last })
      return { history, turns, ended: 'stop' }
    }
    message = reply
  }
}
