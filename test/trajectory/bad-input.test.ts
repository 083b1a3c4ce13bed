import { describe, expect, it } from 'vitest'
import type { HarnessName } from '../../src/manifest/harness-names.js'
import { kindOfCommand, pathsOfCommand } from '../../src/trajectory/classify.js'
import { normalizeTrajectory } from '../../src/trajectory/read.js'

const ref = { cell: 'c', instance: 'i', trial: 0, attempt: 1, startedAtMs: 1000 }
const line = (o: unknown) => `${JSON.stringify(o)}\n`
const toolEnd = {
  type: 'message_end',
  message: {
    role: 'assistant',
    timestamp: 1500,
    content: [{ type: 'toolCall', id: 'a', name: 'read', arguments: { path: 'src/x.js' } }],
  },
}

describe('bad trajectories keep their readable events and say why', () => {
  it('a missing file is named', () => {
    const t = normalizeTrajectory(null, 'pi', ref)
    expect(t.events).toEqual([])
    expect(t.issues.map((i) => i.code)).toEqual(['missing'])
  })

  it('a truncated last line is kept as other and flagged with its line', () => {
    const text = line(toolEnd) + '{"type":"tool_execution_end","toolCa'
    const t = normalizeTrajectory(Buffer.from(text), 'pi', ref)
    expect(t.issues).toEqual([{ code: 'truncated', detail: expect.any(String), line: 2 }])
    expect(t.events.map((e) => [e.kind, e.tool, e.t_ms])).toEqual([
      ['read', 'read', 500],
      ['other', 'hw_unreadable_line', null],
    ])
    expect(t.events[0]!.paths).toEqual(['src/x.js'])
  })

  it('a bad line in the middle is flagged bad_line and the events after it are mapped', () => {
    const text = line({ type: 'agent_start' }) + 'garbage\n' + line(toolEnd)
    const t = normalizeTrajectory(Buffer.from(text), 'pi', ref)
    expect(t.issues.map((i) => [i.code, i.line])).toEqual([['bad_line', 2]])
    expect(t.events.map((e) => e.kind)).toEqual(['other', 'read'])
    expect(t.events[1]!.raw_index).toBe(2)
  })

  it('bytes that are not UTF-8 are decoded with replacement and flagged', () => {
    const bytes = Buffer.concat([
      Buffer.from(line(toolEnd).replace('src/x.js', 'src/x\u00e9.js')),
      Buffer.from([0xff, 0xfe, 0x0a]),
    ])
    const t = normalizeTrajectory(bytes, 'pi', ref)
    expect(t.issues.map((i) => i.code)).toEqual(['not_utf8', 'bad_line'])
    expect(t.events[0]!.paths).toEqual(['src/xé.js'])
  })

  it('an unknown Pi session version is flagged and still mapped', () => {
    const text = line({ type: 'session', version: 9 }) + line(toolEnd)
    const t = normalizeTrajectory(Buffer.from(text), 'pi', ref)
    expect(t.issues).toEqual([
      { code: 'unknown_version', detail: expect.stringContaining('version 9'), line: 1 },
    ])
    expect(t.events.map((e) => e.kind)).toEqual(['read'])
  })

  it('a harness without a mapper is read generically and flagged', () => {
    const t = normalizeTrajectory(
      Buffer.from(line({ tool: 'bash', args: { command: 'pytest -q' } })),
      'some-future-harness' as HarnessName,
      ref,
    )
    expect(t.issues.map((i) => i.code)).toEqual(['unknown_version'])
    expect(t.events[0]).toMatchObject({ kind: 'test', command: 'pytest -q', confidence: 'medium' })
  })

  it('a JSON line that is not an object (null, a number) is other, never a crash', () => {
    const t = normalizeTrajectory(Buffer.from('null\n42\n[1]\n'), 'claude-code', ref)
    expect(t.events.map((e) => [e.kind, e.tool])).toEqual([
      ['other', 'object'],
      ['other', 'number'],
      ['other', 'array'],
    ])
  })
})

describe('commands are classified by what they run', () => {
  it.each([
    ["bash -lc 'cd /w && npm test'", 'test'],
    ['python -m pytest tests/test_x.py -q', 'test'],
    ['node --test test/', 'test'],
    ['cat src/a.js', 'read'],
    ['sed -n 1,40p src/a.js', 'read'],
    ['grep -rn foo src', 'search'],
    ['ls -la', 'search'],
    ["sed -i 's/a/b/' src/a.js", 'edit'],
    ['npm install', 'run'],
    ['echo hi', 'run'],
  ])('%s → %s', (cmd, kind) => {
    expect(kindOfCommand(cmd)).toBe(kind)
  })

  it('paths of read commands skip options and line ranges', () => {
    expect(pathsOfCommand('sed -n 1,40p src/a.js')).toEqual(['src/a.js'])
    expect(pathsOfCommand('cat -n a.py b.py | head')).toEqual(['a.py', 'b.py'])
  })
})
