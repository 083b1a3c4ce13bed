import { writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execa, type ResultPromise } from 'execa'
import { describe, expect, it } from 'vitest'
import { packageRoot } from '../../src/util/paths.js'
import { GREETING_INSTRUCTION, writePanel } from './fixtures.js'

/** `harness-watch model serve …` as a real child process (the CLI from source through tsx). */
function serve(args: string[]): ResultPromise<{ reject: false; all: false }> {
  return execa(process.execPath, ['--import', 'tsx', 'src/cli/entry.ts', 'model', 'serve', ...args], {
    cwd: packageRoot(),
    reject: false,
    stdin: 'ignore',
  }) as ResultPromise<{ reject: false; all: false }>
}

/** Resolve with the first stdout line. */
function firstLine(child: ResultPromise<{ reject: false; all: false }>): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = ''
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString()
      const nl = buf.indexOf('\n')
      if (nl >= 0) resolve(buf.slice(0, nl))
    })
    child.once('exit', () => reject(new Error(`exited before listening; stdout: ${buf}`)))
  })
}

describe('harness-watch model serve', () => {
  it('prints exactly "listening on <origin>", logs one line per request, stops cleanly on SIGTERM', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-model-cli-'))
    const cfg = path.join(dir, 'scripted.yml')
    writeFileSync(cfg, 'seed: 4\nsuccess_rate: 1\ncaching: false\n')
    const child = serve(['--port', '0', '--panel', writePanel(), '--config', cfg])
    const line = await firstLine(child)
    expect(line).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/)
    const origin = line.slice('listening on '.length)
    const res = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        model: 'gpt-5-mini',
        stream: true,
        messages: [{ role: 'user', content: GREETING_INSTRUCTION }],
        tools: [
          { type: 'function', function: { name: 'bash', parameters: { properties: { command: {} } } } },
        ],
      }),
    })
    expect(await res.text()).toContain('data: [DONE]')
    child.kill('SIGTERM')
    const done = await child
    expect(done.exitCode).toBe(0)
    expect(done.stdout).toBe(line)
    expect(done.stderr).toMatch(
      /^#1 chat stream task=fix-greeting cell=tools:\w+ trial=0 step=0 → bash inspect in=\d+ read=0 write=0 out=\d+$/m,
    )
  }, 60_000)

  it('takes settings and the task panel from a manifest; SIGINT also stops it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-model-cli-'))
    const panel = writePanel()
    const manifest = path.join(dir, 'm.yml')
    writeFileSync(
      manifest,
      [
        'schema_version: 1',
        'experiment: { id: model-cli }',
        'model: { id: gpt-5-mini, provider: scripted, api: chat, scripted: { seed: 2, success_rate: 0 } }',
        'benchmark: { family: builtin, revision: t }',
        `panel: { source: tasks, path: ${JSON.stringify(panel)} }`,
        'cells: [{ id: a, harness: pi, version: 0.73.1 }, { id: b, harness: opencode, version: 1.18.33 }]',
        'baseline: a',
      ].join('\n'),
    )
    const child = serve(['--port', '0', '--manifest', manifest])
    const origin = (await firstLine(child)).slice('listening on '.length)
    const body = (step: number) => ({
      model: 'gpt-5-mini',
      messages: [
        { role: 'user', content: GREETING_INSTRUCTION },
        ...Array.from({ length: step }, (_, i) => [
          {
            role: 'assistant',
            tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: `c${i}`, content: 'ok' },
        ]).flat(),
      ],
      tools: [{ type: 'function', function: { name: 'bash', parameters: { properties: { command: {} } } } }],
    })
    const r = await fetch(`${origin}/chat/completions`, { method: 'POST', body: JSON.stringify(body(1)) })
    const call = (
      (await r.json()) as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] }
    ).choices[0]!.message.tool_calls[0]!
    // success_rate 0 from the manifest: the second step runs the tests instead of the solution
    expect(JSON.parse(call.function.arguments)).toEqual({ command: 'sh check.sh' })
    child.kill('SIGINT')
    expect((await child).exitCode).toBe(0)
  }, 60_000)

  it('a bad config file is a user error (exit 2, no stack trace)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-model-cli-'))
    const cfg = path.join(dir, 'bad.json')
    writeFileSync(cfg, JSON.stringify({ success_rate: 3, bogus: 1 }))
    const r = await serve(['--port', '0', '--config', cfg])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(`error: ${cfg} invalid scripted model settings`)
    expect(r.stderr).toContain('success_rate')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  }, 60_000)
})
