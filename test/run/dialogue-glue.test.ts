import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Invocation } from '../../src/harnesses/contract.js'
import { RESUME_RECIPES } from '../../src/harnesses/resume.js'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import type { HarnessRunResult } from '../../src/process/exec.js'
import { type HarnessOnce, runDialogueAttempt } from '../../src/run/dialogue.js'

const SCENARIO = 'You are Ada. You want order W1001 moved.\nSay STOP when done.'
const INV: Invocation = { command: 'pi', args: ['-p', 'PROMPT'], cwd: '/', env: {} }

/** A stand-in harness process: records the argv each turn would run, prints a session line and an answer. */
function standIn(opts: { session?: string | null; failAt?: number } = {}) {
  const argv: string[][] = []
  const once: HarnessOnce = async (turn) => {
    const inv = turn.adjust({ ...INV, args: [...INV.args.slice(0, -1), turn.prompt] })
    argv.push(inv.args)
    const i = argv.length
    const lines = [
      opts.session === null ? null : JSON.stringify({ type: 'session', id: opts.session ?? 'sess-1' }),
      JSON.stringify({ type: 'answer', text: `answer ${i}` }),
    ].filter((l): l is string => l !== null)
    writeFileSync(turn.stdoutFile, `${lines.join('\n')}\n`)
    writeFileSync(turn.stderrFile, '')
    const ok = i !== opts.failAt
    return {
      exitCode: ok ? 0 : 1,
      signal: null,
      timedOut: false,
      aborted: false,
      durationMs: 10,
      spawnError: null,
      strays: 0,
    } satisfies HarnessRunResult
  }
  const parse = async (stdout: string) => {
    const events = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; text?: string })
    return {
      finalMessage: events.find((e) => e.type === 'answer')?.text ?? null,
      trajectory: events,
      selfReport: null,
      startupError: null,
    }
  }
  return { argv, once, parse }
}

describe('the run stage’s dialogue glue', () => {
  let model: ScriptedModel
  let logs: string
  beforeAll(async () => {
    model = await startScriptedModel({})
    logs = mkdtempSync(path.join(os.tmpdir(), 'hw-dialogue-glue-'))
  })
  afterAll(async () => {
    await model.close()
    rmSync(logs, { recursive: true, force: true })
  })

  const spec = (s: ReturnType<typeof standIn>, harness: 'pi' | 'claude-code', origin = model.origin) => {
    const recipe = RESUME_RECIPES[harness]
    if (!recipe) throw new Error('recipe')
    return {
      opening: 'Hello!',
      scenario: SCENARIO,
      maxTurns: 5,
      recipe,
      user: { model: 'user-sim', endpoint: { origin, apiKey: 'sk-user' } },
      timeoutMs: 60_000,
      logsDir: logs,
      stdoutFile: path.join(logs, 'stdout.txt'),
      stderrFile: path.join(logs, 'stderr.txt'),
      once: s.once,
      parse: (stdout: string) => s.parse(stdout),
    }
  }

  it('resumes the session the harness printed (Pi), keeps every turn’s output, and ends on STOP', async () => {
    const s = standIn({ session: 'sess-42' })
    const { run, summary } = await runDialogueAttempt(spec(s, 'pi'))
    // instruction, two scenario sentences, then the user's STOP
    expect(summary).toEqual({ turns: 3, ended: 'stop', session: 'sess-42', error: null })
    expect(s.argv).toEqual([
      ['-p', 'Hello!'],
      ['--session', 'sess-42', '-p', 'I am Ada.'],
      ['--session', 'sess-42', '-p', 'I want order W1001 moved.'],
    ])
    expect(run?.durationMs).toBe(30)
    expect(readFileSync(path.join(logs, 'stdout.txt'), 'utf8').match(/"answer"/g)).toHaveLength(3)
    expect(readFileSync(path.join(logs, 'turn-2.stdout.txt'), 'utf8')).toContain('answer 2')
    const transcript = JSON.parse(readFileSync(path.join(logs, 'dialogue.json'), 'utf8'))
    expect(transcript.history.at(-1)).toEqual({ role: 'user', text: 'Thank you, that is all.' })
  })

  it('a harness that takes our id gets it on turn 1 and resumes it after (Claude Code)', async () => {
    const s = standIn({ session: null })
    const { summary } = await runDialogueAttempt({ ...spec(s, 'claude-code'), maxTurns: 2 })
    expect(summary.ended).toBe('max_turns')
    const id = summary.session
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(s.argv[0]?.slice(0, 2)).toEqual(['--session-id', id])
    expect(s.argv[1]?.slice(0, 2)).toEqual(['--resume', id])
  })

  it('a session id never printed fails the turn instead of starting a fresh conversation', async () => {
    const s = standIn({ session: null })
    const { summary } = await runDialogueAttempt(spec(s, 'pi'))
    expect(summary).toMatchObject({ turns: 1, ended: 'turn_failed', session: null })
    expect(s.argv).toHaveLength(1)
  })

  it('a user model that cannot be reached ends the dialogue with its reason, after the turns already run', async () => {
    const s = standIn()
    const { summary } = await runDialogueAttempt(spec(s, 'pi', 'http://127.0.0.1:9'))
    expect(summary.ended).toBe('user_failed')
    expect(summary.turns).toBe(1)
    expect(summary.error).toMatch(/fetch failed|ECONNREFUSED/)
  })

  it('a failed turn ends it; a cancel before the next turn stops it', async () => {
    const failing = standIn({ failAt: 2 })
    expect((await runDialogueAttempt(spec(failing, 'pi'))).summary).toMatchObject({
      turns: 2,
      ended: 'turn_failed',
    })
    const ac = new AbortController()
    const s = standIn()
    const once: HarnessOnce = async (t) => {
      const r = await s.once(t)
      ac.abort()
      return r
    }
    const { summary } = await runDialogueAttempt({ ...spec(s, 'pi'), once, signal: ac.signal })
    expect(summary).toMatchObject({ turns: 1, ended: 'cancelled' })
  })
})
