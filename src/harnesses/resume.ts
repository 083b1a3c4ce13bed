import type { HarnessName } from '../manifest/harness-names.js'
import type { Invocation } from './contract.js'
import { dig, str } from './jsonl.js'
import { withLeadingFlags } from './mcp.js'

/**
 * How a harness continues its session headless for the next turn of a dialogue (rig.md §0, VERIFIED
 * per harness). `start` gives the first turn's flags when the harness accepts a session id of ours
 * (null when it makes its own); `sessionOf` reads the id from the turn's parsed events; `resume`
 * turns the next turn's invocation (prepared as usual with the new message as prompt) into a resumption.
 */
export interface ResumeRecipe {
  start(sessionId: string): string[] | null
  sessionOf(trajectory: readonly unknown[]): string | null
  resume(inv: Invocation, sessionId: string): Invocation
}

/** The first event value at `key` (a session id the harness printed), or null. */
function firstField(trajectory: readonly unknown[], type: string | null, ...key: string[]): string | null {
  for (const e of trajectory) {
    if (type !== null && dig(e, 'type') !== type) continue
    const v = str(dig(e, ...key))
    if (v) return v
  }
  return null
}

/** `--session-id U` on the first turn, `--resume U` on the next (Claude Code, Gemini CLI, Qwen Code, Copilot). */
const sessionIdFlags: ResumeRecipe = {
  start: (id) => ['--session-id', id],
  sessionOf: () => null,
  resume: (inv, id) => withLeadingFlags(inv, ['--resume', id]),
}

/** Codex: `codex exec … resume <thread_id> "<prompt>"`, the id from the first event `thread.started`. */
const codexResume: ResumeRecipe = {
  start: () => null,
  sessionOf: (t) => firstField(t, 'thread.started', 'thread_id'),
  resume: (inv, id) => ({ ...inv, args: [...inv.args.slice(0, -1), 'resume', id, ...inv.args.slice(-1)] }),
}

/** OpenCode: `opencode run --session <sessionID>` (every JSON event carries `sessionID`). */
const opencodeResume: ResumeRecipe = {
  start: () => null,
  sessionOf: (t) => firstField(t, null, 'sessionID'),
  resume: (inv, id) => {
    const at = inv.args.indexOf('run') + 1
    return { ...inv, args: [...inv.args.slice(0, at), '--session', id, ...inv.args.slice(at)] }
  },
}

/** Pi: `pi -p --mode json … --session <id>`, the id from the first JSON line `{"type":"session","id"}`. */
const piResume: ResumeRecipe = {
  start: () => null,
  sessionOf: (t) => firstField(t, 'session', 'id'),
  resume: (inv, id) => withLeadingFlags(inv, ['--session', id]),
}

/** The resume recipe of every harness; null where no headless resumption is known (one-turn tasks only). */
export const RESUME_RECIPES: Record<HarnessName, ResumeRecipe | null> = {
  pi: piResume,
  opencode: opencodeResume,
  codex: codexResume,
  'claude-code': sessionIdFlags,
  'gemini-cli': sessionIdFlags,
  copilot: sessionIdFlags,
  'qwen-code': sessionIdFlags,
  openhands: null,
  hermes: null,
  'mini-swe-agent': null,
  agentd: null,
  command: null,
}
