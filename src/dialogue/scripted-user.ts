import { type DialogueMessage, STOP_TOKEN } from './loop.js'

/**
 * The offline simulated user (the manifest's scripted `user_model`): deterministic, from the task's
 * hidden scenario (user/scenario.md). It discloses the scenario's first paragraph one sentence per
 * reply, in the first person ("You are Bob" → "I am Bob"), then ends with `###STOP###`. Lines after the
 * first paragraph are instructions to the simulator and are never said. Pure.
 */
export function scriptedUserReply(scenario: string, history: readonly DialogueMessage[]): string {
  const facts = scenarioFacts(scenario)
  const said = history.filter((m) => m.role === 'user').length - 1 // the opening is the task's own
  const next = facts[said]
  return next === undefined ? `Thank you, that is all. ${STOP_TOKEN}` : next
}

/** The sentences of the scenario's first paragraph, turned into the first person. */
export function scenarioFacts(scenario: string): string[] {
  const first = scenario.trim().split(/\r?\n/)[0] ?? ''
  return (first.match(/[^.!?]+[.!?]*/g) ?? []).map((s) => firstPerson(s.trim())).filter((s) => s !== '')
}

function firstPerson(s: string): string {
  return s
    .replace(/\bYou are\b/g, 'I am')
    .replace(/\byou are\b/g, 'I am')
    .replace(/\bYou\b/g, 'I')
    .replace(/\byou\b/g, 'I')
    .replace(/\bYour\b/g, 'My')
    .replace(/\byour\b/g, 'my')
}
