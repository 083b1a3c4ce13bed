import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDialogue } from '../../src/dialogue/loop.js'
import { scriptedUserReply } from '../../src/dialogue/scripted-user.js'
import type { AttemptContext, InstalledHarness } from '../../src/harnesses/contract.js'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { wireBridge } from '../../src/harnesses/mcp.js'
import { piAdapter } from '../../src/harnesses/pi.js'
import { RESUME_RECIPES } from '../../src/harnesses/resume.js'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { bridgeStdioEndpoint } from '../../src/run/bridge.js'
import { ORDER_ENV, ORDER_INSTRUCTION, ORDER_MARKER, ORDER_TASK } from '../support/bridge-run.js'

/**
 * A two-turn dialogue on the real Pi CLI: the loop drives turns, the scripted user replies from a
 * hidden scenario, turn 2 resumes Pi's session with its own flag, and every turn's bridge (a new
 * process each time) works on the same world.
 */
describe('a simulated-user dialogue on Pi with the tool-bridge', () => {
  let installed: InstalledHarness | null = null
  let skip = ''
  let model: ScriptedModel
  let base: string
  beforeAll(async () => {
    try {
      installed = await piAdapter.install('0.73.1', { cacheDir: defaultCacheDir(), log: () => {} })
    } catch (e) {
      skip = `Pi 0.73.1 cannot be installed here: ${(e as Error).message.split('\n')[0]}`
    }
    model = await startScriptedModel({ tasks: [ORDER_TASK], config: { success_rate: 1 } })
    base = await mkdtemp(path.join(os.tmpdir(), 'hw-dialogue-'))
  }, 600_000)
  afterAll(async () => {
    await model?.close()
    await rm(base, { recursive: true, force: true })
  })

  it('resumes the session each turn, keeps the world, and ends on the user’s STOP', async (t) => {
    if (!installed) {
      t.skip(skip)
      return
    }
    const pi = installed
    const dirs = {
      workspace: path.join(base, 'work'),
      home: path.join(base, 'home'),
      tmp: path.join(base, 'tmp'),
    }
    for (const d of Object.values(dirs)) await mkdir(d, { recursive: true })
    const envFile = path.join(base, 'bridge.json')
    const stateDir = path.join(base, 'state')
    await writeFile(envFile, JSON.stringify(ORDER_ENV))
    const recipe = RESUME_RECIPES.pi
    if (!recipe) throw new Error('Pi has a resume recipe')
    let session: string | null = null
    const sent: string[][] = []
    const r = await runDialogue(
      ORDER_INSTRUCTION,
      {
        async turn(message, index) {
          const ctx: AttemptContext = {
            ...dirs,
            prompt: message,
            model: 'gpt-5-mini',
            api: 'chat',
            endpoint: { origin: model.origin, apiKey: 'sk-hw-dialogue' },
            config: { args: [], env: {}, pass_env: [], files: {} },
            timeoutS: 120,
          }
          let inv = await piAdapter.prepare(pi, ctx)
          inv = (await wireBridge('pi', inv, ctx, bridgeStdioEndpoint({ envFile, stateDir }, dirs.workspace)))
            .invocation
          if (index > 0 && session) inv = recipe.resume(inv, session)
          sent.push(inv.args)
          const run = await execa(inv.command, inv.args, {
            cwd: inv.cwd,
            env: inv.env,
            extendEnv: false,
            stdin: 'ignore',
            reject: false,
            timeout: 120_000,
          })
          const parsed = await piAdapter.parse(
            {
              stdout: String(run.stdout),
              stderr: String(run.stderr),
              exitCode: run.exitCode ?? null,
              signal: null,
              home: dirs.home,
            },
            ctx,
          )
          if (index === 0) session = recipe.sessionOf(parsed.trajectory)
          return { answer: parsed.finalMessage, ok: run.exitCode === 0 }
        },
        reply: async (history) =>
          scriptedUserReply('You want to know the status of order W1234567.', history),
      },
      { maxTurns: 4 },
    )
    expect(session).toMatch(/\S/)
    expect(r.ended).toBe('stop')
    expect(r.turns).toBe(2)
    expect(sent[1]).toEqual(expect.arrayContaining(['--session', session]))
    // turn 2 carried turn 1's conversation: the model saw both tool results already
    const steps = model.records().map((x) => x.step)
    expect(steps).toEqual([0, 1, 2, 2])
    expect(r.history[1]?.text).toContain(ORDER_MARKER)
    // the world persisted across the two bridge processes: one note, written once
    const world = JSON.parse(await readFile(path.join(stateDir, 'world.json'), 'utf8'))
    expect(world.orders.W1234567.notes).toEqual([{ text: 'leave at the door' }])
    const calls = (await readFile(path.join(stateDir, 'calls.jsonl'), 'utf8')).trim().split('\n')
    expect(calls.map((l) => JSON.parse(l).tool)).toEqual(['add_note', 'get_order'])
  }, 240_000)
})
