import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  parseQwenOutput,
  qwenCodeAdapter,
  qwenEndpointEnv,
  qwenRipgrep,
} from '../../src/harnesses/qwen-code.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('qwen-code adapter', () => {
  const dirs = useAttemptDirs()

  it('renders settings.json for the OpenAI auth type and the endpoint variables', async () => {
    const ctx = makeCtx(dirs, { model: 'qwen3-coder-plus' })
    const inv = await qwenCodeAdapter.prepare(fakeInstalled('qwen-code', '/cache/q/cli-entry.js'), ctx)
    const settings = JSON.parse(await readFile(path.join(dirs.home, '.qwen', 'settings.json'), 'utf8'))
    expect(settings).toEqual({
      general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
      model: { name: 'qwen3-coder-plus' },
    })
    expect(inv.args).toEqual([
      '/cache/q/cli-entry.js',
      '--output-format',
      'stream-json',
      '--yolo',
      '-m',
      'qwen3-coder-plus',
      '-p',
      ctx.prompt,
    ])
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'QWEN_HOME',
        'OPENAI_BASE_URL',
        'OPENAI_API_KEY',
        'OPENAI_MODEL',
        'QWEN_CODE_NO_RELAUNCH',
      ),
    )
    expect(inv.env).toMatchObject({
      QWEN_HOME: path.join(dirs.home, '.qwen'),
      OPENAI_BASE_URL: 'http://127.0.0.1:4555/v1',
      OPENAI_API_KEY: 'sk-hw-attempt-1',
      OPENAI_MODEL: 'qwen3-coder-plus',
    })
    // The runner's own OPENAI_API_KEY (a planted canary) is replaced by the attempt key.
    expect(leaks(inv.env)).toEqual([])
  })

  it('switches auth type and variables for the anthropic and responses wire APIs', async () => {
    const ctx = makeCtx(dirs, { api: 'anthropic' })
    await qwenCodeAdapter.prepare(fakeInstalled('qwen-code', '/cache/q/cli-entry.js'), ctx)
    const settings = JSON.parse(await readFile(path.join(dirs.home, '.qwen', 'settings.json'), 'utf8'))
    expect(settings.security.auth.selectedType).toBe('anthropic')
    expect(qwenEndpointEnv(ctx)).toEqual({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:4555',
      ANTHROPIC_API_KEY: 'sk-hw-attempt-1',
      ANTHROPIC_MODEL: 'claude-sonnet-4-5',
    })
    const r = makeCtx(dirs, { api: 'responses' })
    await qwenCodeAdapter.prepare(fakeInstalled('qwen-code', '/cache/q/cli-entry.js'), r)
    const s2 = JSON.parse(await readFile(path.join(dirs.home, '.qwen', 'settings.json'), 'utf8'))
    expect(s2.security.auth.selectedType).toBe('openai-responses')
    expect(qwenRipgrep('/r', { platform: 'linux', arch: 'x64', musl: false, avx2: true })).toBe(
      '/r/node_modules/@qwen-code/qwen-code/vendor/ripgrep/x64-linux/rg',
    )
  })

  it('parses result.usage and the answer', async () => {
    const parsed = parseQwenOutput(rawRun(await fixture('qwen-code', 'success.jsonl')))
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 39399,
      output_tokens: 25,
      cache_read_tokens: 0,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 2,
      turns: 2,
    })
  })

  it('an API error before any token is a startup error, not an answer', async () => {
    const parsed = parseQwenOutput(rawRun(await fixture('qwen-code', 'no-server.jsonl'), { exitCode: 1 }))
    expect(parsed.finalMessage).toBeNull()
    expect(parsed.startupError).toMatch(/^exit 1: \[API Error: Connection error\./)
  })
})
