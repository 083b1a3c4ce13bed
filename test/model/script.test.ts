import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseRequest } from '../../src/model/parse.js'
import { decide, planFor, solveCommand, titleFor } from '../../src/model/script.js'
import { pickInspectFile } from '../../src/model/tasks.js'
import { findReadTool, findShellTool, readArgs, shellArgs, valueFromSchema } from '../../src/model/tools.js'
import type { OfferedTool, TaskScript } from '../../src/model/types.js'

const task: TaskScript = {
  id: 't1',
  instruction: '# Fix parse\nFix `src/parse.js`.',
  solve: 'echo fixed > out.txt\n',
  testCommand: 'node --test',
  inspectFile: 'src/parse.js',
}

function tool(
  name: string,
  schema: Record<string, unknown> | null,
  kind = 'function',
  description = '',
): OfferedTool {
  return { name, description, schema, kind }
}
const str = { type: 'string' }

describe('finding tools and filling their arguments', () => {
  it('prefers known shell names, then name patterns, then descriptions; skips grammar tools', () => {
    expect(findShellTool([tool('read', {}), tool('Bash', { properties: {} })])?.name).toBe('Bash')
    expect(findShellTool([tool('my_terminal_tool', {})])?.name).toBe('my_terminal_tool')
    expect(findShellTool([tool('doit', {}, 'function', 'Runs a bash command')])?.name).toBe('doit')
    expect(findShellTool([tool('shell', null, 'custom')])).toBeNull()
    expect(findShellTool([tool('local_shell', null, 'local_shell')])?.kind).toBe('local_shell')
  })

  it('OpenCode bash: required description filled', () => {
    const t = tool('bash', {
      type: 'object',
      properties: { command: str, description: str, timeout: { type: 'number' } },
      required: ['command', 'description'],
    })
    expect(shellArgs(t, 'ls', 'List files')).toEqual({ command: 'ls', description: 'List files' })
  })

  it('Codex exec_command takes {cmd}; array-typed commands become ["bash","-lc",cmd]', () => {
    const codex = tool('exec_command', {
      type: 'object',
      properties: { cmd: str, workdir: str },
      required: ['cmd'],
    })
    expect(shellArgs(codex, 'ls', 'x')).toEqual({ cmd: 'ls' })
    const arr = tool('shell', { type: 'object', properties: { command: { type: 'array', items: str } } })
    expect(shellArgs(arr, 'ls', 'x')).toEqual({ command: ['bash', '-lc', 'ls'] })
    expect(shellArgs(tool('local_shell', null, 'local_shell'), 'ls', 'x')).toEqual({
      command: ['bash', '-lc', 'ls'],
    })
    // Gemini-style upper-case types, enum and numeric required fields
    const g = tool('run_shell_command', {
      type: 'OBJECT',
      properties: {
        command: { type: 'STRING' },
        mode: { type: 'STRING', enum: ['sync', 'async'] },
        timeout: { type: 'INTEGER' },
      },
      required: ['command', 'mode', 'timeout'],
    })
    expect(shellArgs(g, 'ls', 'x')).toEqual({ command: 'ls', mode: 'sync', timeout: 120000 })
  })

  it('read tools: Pi path, OpenCode filePath, Claude file_path, Gemini absolute_path', () => {
    for (const prop of ['path', 'filePath', 'file_path', 'absolute_path']) {
      const t = tool('read', { type: 'object', properties: { [prop]: str }, required: [prop] })
      expect(findReadTool([tool('write', { properties: { path: str } }), t])?.name).toBe('read')
      expect(readArgs(t, '/w/a.js', 'x')).toEqual({ [prop]: '/w/a.js' })
    }
    expect(findReadTool([tool('view', { properties: { path: str } })])?.name).toBe('view')
    expect(findReadTool([tool('read_many', { properties: {} })])).toBeNull()
    // Codex's image viewer takes a path but is no file reader
    expect(findReadTool([tool('view_image', { properties: { path: str } })])).toBeNull()
  })

  it('valueFromSchema builds an object for structured output', () => {
    const s = {
      type: 'object',
      properties: {
        title: str,
        kind: { type: 'string', enum: ['a', 'b'] },
        n: { type: 'integer' },
        ok: { type: 'boolean' },
        tags: { type: 'array' },
        nested: { type: 'object', properties: { x: { type: ['string', 'null'] } } },
      },
    }
    expect(valueFromSchema(s, 'My title')).toEqual({
      title: 'My title',
      kind: 'a',
      n: 0,
      ok: false,
      tags: [],
      nested: { x: 'text' },
    })
  })
})

describe('the task script', () => {
  const bashTool = {
    type: 'function',
    function: {
      name: 'bash',
      parameters: { type: 'object', properties: { command: str }, required: ['command'] },
    },
  }
  const readTool = {
    type: 'function',
    function: { name: 'read', parameters: { type: 'object', properties: { path: str }, required: ['path'] } },
  }
  const chat = (toolResults: number, withRead = true, sys = 'Current working directory: /w/t1') => {
    const messages: unknown[] = [
      { role: 'system', content: sys },
      { role: 'user', content: task.instruction },
    ]
    for (let i = 0; i < toolResults; i++) {
      messages.push({
        role: 'assistant',
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash' } }],
      })
      messages.push({ role: 'tool', tool_call_id: `c${i}`, content: i === 0 ? 'error: boom' : 'ok' })
    }
    return parseRequest('chat', { messages, tools: withRead ? [readTool, bashTool] : [bashTool] })
  }

  it('success: read (absolute path) → solve heredoc → tests → final; errors do not stop it', () => {
    const ctx = { task, success: true, workdir: '/w/t1' }
    const steps = [0, 1, 2, 3, 4].map((n) => decide(chat(n), ctx))
    expect(steps.map((a) => a.step)).toEqual(['inspect', 'solve', 'test', 'final', 'final'])
    expect(steps[0]).toMatchObject({
      kind: 'tool',
      tool: { name: 'read' },
      args: { path: '/w/t1/src/parse.js' },
    })
    expect(steps[1]).toMatchObject({
      kind: 'tool',
      args: { command: "bash <<'HW_SOLVE'\necho fixed > out.txt\nHW_SOLVE" },
    })
    expect(steps[2]).toMatchObject({ kind: 'tool', args: { command: 'node --test' } })
    expect(steps[3]).toMatchObject({ kind: 'text', text: 'Done: I applied the fix and ran `node --test`.' })
  })

  it('failure: inspect → tests → final, never the solution', () => {
    const ctx = { task, success: false, workdir: null }
    const steps = [0, 1, 2].map((n) => decide(chat(n, false), ctx))
    expect(steps.map((a) => a.step)).toEqual(['inspect', 'test', 'final'])
    expect(steps[0]).toMatchObject({
      tool: { name: 'bash' },
      args: { command: "ls -la && cat -- 'src/parse.js'" },
    })
    expect(JSON.stringify(steps)).not.toContain('HW_SOLVE')
  })

  it('unknown workdir: inspects through the shell rather than guessing a path for the read tool', () => {
    const a = decide(chat(0, true, 'no cwd here'), { task, success: true, workdir: null })
    expect(a).toMatchObject({ tool: { name: 'bash' } })
  })

  it('unknown task: one ls, then a reply; no tools: a title; JSON asked: an object', () => {
    const none = { task: null, success: true, workdir: null }
    expect(decide(chat(0), none)).toMatchObject({ step: 'explore', args: { command: 'ls' } })
    expect(decide(chat(1), none)).toMatchObject({ step: 'reply', text: 'Done.' })
    const title = parseRequest('chat', { messages: [{ role: 'user', content: 'Generate a title' }] })
    expect(decide(title, { ...none, task })).toEqual({ kind: 'text', step: 'title', text: 'Fix parse' })
    const json = parseRequest('chat', {
      messages: [{ role: 'user', content: 'x' }],
      response_format: {
        type: 'json_schema',
        json_schema: { schema: { type: 'object', properties: { title: str } } },
      },
    })
    expect(decide(json, none)).toEqual({ kind: 'text', step: 'json', text: '{"title":"Scripted session"}' })
  })

  it('plans only what the tools and the task allow', () => {
    expect(planFor(task, true, true, true)).toEqual(['inspect', 'solve', 'test'])
    expect(planFor({ ...task, testCommand: null }, true, true, false)).toEqual(['inspect', 'solve'])
    expect(planFor({ ...task, solve: null }, true, true, false)).toEqual(['inspect', 'test'])
    expect(planFor(task, true, false, true)).toEqual(['inspect'])
    expect(planFor({ ...task, inspectFile: null }, true, false, true)).toEqual([])
  })

  it('titles come from the first instruction line, at most 60 characters', () => {
    expect(titleFor({ ...task, instruction: `\n## ${'x'.repeat(80)}\nmore` })).toBe(`${'x'.repeat(57)}...`)
  })
})

describe('solveCommand: the solution runs verbatim', () => {
  it('changes the delimiter when the script holds it, and bash runs the text unexpanded', () => {
    const solve =
      "#!/bin/bash\nprintf '%s\\n' \"$HOME\" '`x`' > a.txt\ncat >> a.txt <<'HW_SOLVE'\nliteral $PATH\nHW_SOLVE"
    const cmd = solveCommand(solve)
    expect(cmd.startsWith("bash <<'HW_SOLVE_1'\n")).toBe(true)
    expect(cmd.endsWith('\nHW_SOLVE_1')).toBe(true)
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hw-solve-'))
    execFileSync('bash', ['-lc', cmd], { cwd: dir, env: { ...process.env, HOME: '/home/someone' } })
    expect(readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('/home/someone\n`x`\nliteral $PATH\n')
  })
})

describe('pickInspectFile', () => {
  it('the file the instruction names first, else a README, else the first file', () => {
    expect(pickInspectFile(['check.sh', 'greet.sh'], 'greet.sh is wrong; run check.sh')).toBe('greet.sh')
    expect(pickInspectFile(['a.js', 'lib/util.js'], 'Fix lib/util.js')).toBe('lib/util.js')
    expect(pickInspectFile(['a.js', 'README.md'], 'Fix the bug')).toBe('README.md')
    expect(pickInspectFile(['b.js', 'a.js'].sort(), 'Fix the bug')).toBe('a.js')
    expect(pickInspectFile([], 'x')).toBeNull()
  })
})
