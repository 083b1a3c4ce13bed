import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseAgentdRun } from '../../src/harnesses/agentd.js'
import { parseHermesRun } from '../../src/harnesses/hermes.js'
import { parseJsonLines } from '../../src/harnesses/jsonl.js'
import { parseMiniTrajectory } from '../../src/harnesses/mini-swe-agent.js'
import { parseOpenhandsCli, parseOpenhandsLegacy } from '../../src/harnesses/openhands.js'
import type { HarnessName } from '../../src/manifest/harness-names.js'
import { normalizeTrajectory } from '../../src/trajectory/read.js'
import { type AttemptRef, TrajectoryEventSchema } from '../../src/trajectory/schema.js'

// Each harness's trajectory as the run stage keeps it (trajectory.jsonl = the adapter's parsed events),
// from the recorded runs in test/harnesses/fixtures (a real run of each CLI against the fake model:
// one shell call `echo hello > hello.txt`, then the answer "done").
const FIX = path.join(import.meta.dirname, '..', 'harnesses', 'fixtures')
const fx = (h: string, f: string) => readFile(path.join(FIX, h, f), 'utf8')
const run = (stdout: string) => ({ stdout, stderr: '', exitCode: 0, signal: null, home: '/nonexistent' })

async function kept(h: string): Promise<unknown[]> {
  switch (h) {
    case 'mini-swe-agent':
      return parseMiniTrajectory(run(''), JSON.parse(await fx(h, 'last_mini_run.traj.json'))).trajectory
    case 'openhands':
      return parseOpenhandsCli(run(await fx(h, 'headless-json.txt')), []).trajectory
    case 'openhands-legacy':
      return parseOpenhandsLegacy(run(''), JSON.parse(await fx('openhands', 'legacy-trajectory.json')))
        .trajectory
    case 'hermes':
      return parseHermesRun(run('Created hello.txt.\n'), JSON.parse(await fx(h, 'usage.json'))).trajectory
    default:
      return parseJsonLines(await fx(h, 'success.jsonl')).events
  }
}

function jsonl(events: unknown[]): Uint8Array {
  return Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''))
}

const ref = (startedAtMs: number | null): AttemptRef => ({
  cell: 'c',
  instance: 'i',
  trial: 0,
  attempt: 1,
  startedAtMs,
})

// harness → [fixture key, attempt start (ms) or null, the tool name as the harness named it, t_ms of the call]
const CASES: [HarnessName, string, number | null, string, number | null][] = [
  ['pi', 'pi', Date.parse('2026-11-29T19:25:30.186Z'), 'bash', 127],
  ['opencode', 'opencode', 1795980409000, 'bash', 423],
  ['codex', 'codex', null, 'command_execution', null],
  ['claude-code', 'claude-code', Date.parse('2026-11-29T19:29:09.000Z'), 'Bash', 891],
  ['gemini-cli', 'gemini-cli', Date.parse('2026-11-29T19:30:02.205Z'), 'run_shell_command', 121],
  ['copilot', 'copilot', Date.parse('2026-11-29T19:32:15.000Z'), 'bash', 748],
  ['qwen-code', 'qwen-code', null, 'run_shell_command', null],
  ['openhands', 'openhands', Date.parse('2026-11-29T19:50:01.000Z'), 'terminal', 1410],
  ['openhands', 'openhands-legacy', Date.parse('2026-11-29T19:50:01.000Z'), 'execute_bash', 1400],
  ['mini-swe-agent', 'mini-swe-agent', 1795981800000, 'bash', 1200],
]

describe('trajectory mappers on recorded runs', () => {
  for (const [harness, key, start, tool, tMs] of CASES) {
    it(`${key}: the shell call is one edit of hello.txt with its result, then the finish`, async () => {
      const raw = await kept(key)
      const t = normalizeTrajectory(jsonl(raw), harness, ref(start))
      expect(t.issues).toEqual([])
      for (const e of t.events) TrajectoryEventSchema.parse(e)
      const calls = t.events.filter((e) => e.command !== null)
      expect(calls).toHaveLength(1)
      const call = calls[0]!
      expect(call.tool).toBe(tool)
      expect(call.kind).toBe('edit')
      expect(call.paths).toEqual(['hello.txt'])
      expect(call.command).toMatch(/echo hello > hello\.txt/)
      expect(call.ok).toBe(true)
      expect(call.event_id).toBe(`c/i/0-1#${call.index}`)
      if (tMs === null) expect(call.t_ms).toBeNull()
      else expect(call.t_ms).toBe(tMs)
      const finish = t.events.filter((e) => e.kind === 'finish')
      expect(finish).toHaveLength(1)
      expect(finish[0]!.index).toBeGreaterThan(call.index)
      // ids are dense and unique; raw indexes point into the kept file
      expect(t.events.map((e) => e.index)).toEqual(t.events.map((_, i) => i))
      for (const e of t.events) expect(e.raw_index).toBeLessThan(raw.length)
    })
  }

  it('copilot: the call time is the tool request time and the exit code is the shell execution one', async () => {
    const t = normalizeTrajectory(
      jsonl(await kept('copilot')),
      'copilot',
      ref(Date.parse('2026-11-29T19:32:15.000Z')),
    )
    const call = t.events.find((e) => e.command !== null)!
    expect(call.exit_code).toBe(0)
    expect(call.output_bytes).toBe(Buffer.byteLength('\n<shellId: 0 completed with exit code 0>'))
  })

  it('hermes keeps its usage report as other and the final answer as the finish', async () => {
    const t = normalizeTrajectory(jsonl(await kept('hermes')), 'hermes', ref(null))
    expect(t.events.map((e) => [e.kind, e.tool])).toEqual([
      ['other', 'usage'],
      ['finish', null],
    ])
    expect(t.events[1]!.text).toBe('Created hello.txt.')
  })

  it('gemini: assistant deltas are one message; output size and hash of the tool result are kept', async () => {
    const t = normalizeTrajectory(jsonl(await kept('gemini-cli')), 'gemini-cli', ref(null))
    const call = t.events.find((e) => e.command !== null)!
    expect(call.output_bytes).toBe(0)
    expect(call.output_sha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(t.events.filter((e) => e.kind === 'message' || e.kind === 'finish').map((e) => e.text)).toEqual([
      'create hello.txt containing hello',
      'done',
    ])
  })

  it('codex keeps its warning item as other with its native type', async () => {
    const t = normalizeTrajectory(jsonl(await kept('codex')), 'codex', ref(null))
    expect(t.events[0]).toMatchObject({ kind: 'other', tool: 'item:error', confidence: 'low' })
  })
})

describe('agentd: the telemetry its adapter keeps from stderr', () => {
  it('a tool event is a call with its command, loop.final the finish, other events kept by name', () => {
    const stderr = [
      'agentd starting',
      JSON.stringify({ event: 'loop.start', ts: '2026-11-29T20:00:00.000Z' }),
      JSON.stringify({
        event: 'tool.call',
        ts: '2026-11-29T20:00:01.250Z',
        tool: 'bash',
        args: { command: 'echo hello > hello.txt' },
      }),
      JSON.stringify({
        event: 'loop.final',
        ts: '2026-11-29T20:00:02.000Z',
        answer: 'done',
        usage: { input_tokens: 120, output_tokens: 8, requests: 2 },
      }),
    ].join('\n')
    const parsed = parseAgentdRun({ stdout: '', stderr, exitCode: 0, signal: null, home: '/nonexistent' })
    const t = normalizeTrajectory(
      jsonl(parsed.trajectory),
      'agentd',
      ref(Date.parse('2026-11-29T20:00:00.000Z')),
    )
    expect(t.events.map((e) => [e.kind, e.tool, e.t_ms])).toEqual([
      ['other', 'loop.start', 0],
      ['edit', 'bash', 1250],
      ['finish', null, 2000],
    ])
    expect(t.events[1]!.command).toBe('echo hello > hello.txt')
    expect(t.events[2]!.text).toBe('done')
  })
})

describe('an event no mapper knows is kept as other, never dropped', () => {
  const unknown: [HarnessName, unknown][] = [
    ['pi', { type: 'compaction_start', reason: 'x' }],
    ['opencode', { type: 'permission_asked', timestamp: 1 }],
    ['codex', { type: 'turn.diff', diff: '' }],
    ['claude-code', { type: 'tool_progress' }],
    ['qwen-code', { type: 'goal_state_changed' }],
    ['gemini-cli', { type: 'thought', timestamp: '2026-11-29T19:30:02.300Z' }],
    ['copilot', { type: 'tool.user_requested', timestamp: '2026-11-29T19:32:15.500Z' }],
    ['openhands', { kind: 'CondensationEvent', timestamp: '2026-11-29T19:50:02.000000' }],
    ['mini-swe-agent', { role: 'exit', content: 'x' }],
    ['hermes', { type: 'tool_trace' }],
    ['agentd', { type: 'budget.warning' }],
    ['command', { type: 'progress', pct: 50 }],
  ]
  for (const [harness, event] of unknown) {
    it(`${harness}: appended to its recorded run, the new event is the last, kind other, named natively`, async () => {
      const key = harness === 'command' || harness === 'agentd' ? 'pi' : harness
      const raw = [...(await kept(key)), event]
      const t = normalizeTrajectory(jsonl(raw), harness, ref(null))
      const last = t.events.at(-1)!
      const name =
        (event as { type?: string; kind?: string; role?: string }).type ??
        (event as { kind?: string }).kind ??
        (event as { role?: string }).role
      expect(last).toMatchObject({ kind: 'other', tool: name, raw_index: raw.length - 1, confidence: 'low' })
    })
  }

  it('a huge message is clipped to 500 characters; a tool call without arguments is kept', () => {
    const raw = [
      {
        type: 'message_end',
        message: {
          role: 'assistant',
          content: [{ type: 'toolCall', id: 'x', name: 'read', arguments: null }],
        },
      },
      {
        type: 'message_end',
        message: { role: 'assistant', content: [{ type: 'text', text: 'a'.repeat(1_000_000) }] },
      },
    ]
    const t = normalizeTrajectory(jsonl(raw), 'pi', ref(null))
    expect(t.events[0]).toMatchObject({ kind: 'read', paths: [], command: null })
    expect(t.events[1]!.text).toHaveLength(500)
    expect(t.events[1]!.kind).toBe('finish')
  })
})
