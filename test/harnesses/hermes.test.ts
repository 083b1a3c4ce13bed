import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { hermesAdapter, hermesUsagePath, parseHermesRun } from '../../src/harnesses/hermes.js'
import { fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

const installed = {
  harness: 'hermes' as const,
  version: '0.14.0',
  bin: '/cache/pypi__hermes-agent@0.14.0/venv/bin/hermes',
  root: '/cache/pypi__hermes-agent@0.14.0',
}

describe('hermes adapter', () => {
  const dirs = useAttemptDirs()

  it('writes config.yaml with the custom provider and runs one-shot with a usage report', async () => {
    const ctx = makeCtx(dirs, { model: 'gpt-5' })
    const inv = await hermesAdapter.prepare(installed, ctx)
    const config = parseYaml(await readFile(path.join(dirs.home, '.hermes', 'config.yaml'), 'utf8'))
    expect(config).toEqual({
      model: { provider: 'custom', base_url: 'http://127.0.0.1:4555/v1', default: 'gpt-5' },
    })
    expect(inv.args).toEqual([
      '--model',
      'gpt-5',
      '--provider',
      'custom',
      '--yolo',
      '--usage-file',
      hermesUsagePath(ctx),
      '-z',
      ctx.prompt,
    ])
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'HERMES_HOME',
        'OPENAI_BASE_URL',
        'OPENAI_API_KEY',
        'HERMES_YOLO_MODE',
        'HERMES_ACCEPT_HOOKS',
      ),
    )
    expect(inv.env).toMatchObject({
      HERMES_HOME: path.join(dirs.home, '.hermes'),
      OPENAI_BASE_URL: 'http://127.0.0.1:4555/v1',
      OPENAI_API_KEY: 'sk-hw-attempt-1',
    })
    expect(leaks(inv.env)).toEqual([])
  })

  it('parses the usage report: main loop plus auxiliary calls, unknown cost left out', async () => {
    const report = JSON.parse(await fixture('hermes', 'usage.json'))
    const parsed = parseHermesRun(rawRun('Created hello.txt.\n'), report)
    expect(parsed.finalMessage).toBe('Created hello.txt.')
    expect(parsed.selfReport).toEqual({
      input_tokens: 9430,
      output_tokens: 46,
      cache_read_tokens: 4100,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 3,
      turns: null,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('a failed run with no API call is a startup error carrying the reported failure', async () => {
    const report = JSON.parse(await fixture('hermes', 'usage-failed.json'))
    const parsed = parseHermesRun(rawRun('', { exitCode: 2 }), report)
    expect(parsed.finalMessage).toBeNull()
    expect(parsed.startupError).toBe(
      'exit 2: APIConnectionError: Connection error.; turn failed or stopped partway',
    )
  })
})
