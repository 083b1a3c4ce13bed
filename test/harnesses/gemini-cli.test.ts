import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { GEMINI_SETTINGS, geminiCliAdapter, parseGeminiOutput } from '../../src/harnesses/gemini-cli.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('gemini-cli adapter', () => {
  const dirs = useAttemptDirs()

  it('selects the API-key auth type, disables folder trust and telemetry, and trusts the workspace', async () => {
    const ctx = makeCtx(dirs, { model: 'gemini-2.5-pro', api: 'gemini' })
    const inv = await geminiCliAdapter.prepare(fakeInstalled('gemini-cli', '/cache/g/bundle/gemini.js'), ctx)
    const settings = JSON.parse(await readFile(path.join(dirs.home, '.gemini', 'settings.json'), 'utf8'))
    expect(settings).toEqual(GEMINI_SETTINGS)
    expect(settings.security.auth.selectedType).toBe('gemini-api-key')
    expect(settings.privacy.usageStatisticsEnabled).toBe(false)
    expect(inv.command).toBe(process.execPath)
    expect(inv.args).toEqual([
      '/cache/g/bundle/gemini.js',
      '--output-format',
      'stream-json',
      '--yolo',
      '-m',
      'gemini-2.5-pro',
      '-p',
      ctx.prompt,
    ])
    expect(inv.env).toMatchObject({
      GEMINI_CLI_HOME: dirs.home,
      GEMINI_API_KEY: 'sk-hw-attempt-1',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:4555',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_CLI_NO_RELAUNCH: 'true',
    })
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'GEMINI_CLI_HOME',
        'GEMINI_API_KEY',
        'GOOGLE_GEMINI_BASE_URL',
        'GEMINI_CLI_TRUST_WORKSPACE',
        'GEMINI_CLI_NO_RELAUNCH',
        'GEMINI_CLI_SYSTEM_SETTINGS_PATH',
        'GEMINI_CLI_SYSTEM_DEFAULTS_PATH',
      ),
    )
    expect(inv.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH?.startsWith(dirs.home)).toBe(true)
    expect(leaks(inv.env)).toEqual([])
  })

  it('parses result.stats and the assistant text after the tool call', async () => {
    const parsed = parseGeminiOutput(rawRun(await fixture('gemini-cli', 'success.jsonl')))
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 25294,
      output_tokens: 25,
      cache_read_tokens: 0,
      cache_write_tokens: null,
      cost_usd: null,
      requests: null,
      turns: null,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('exit 41 "Invalid auth method selected" is a startup error', async () => {
    const stderr = await fixture('gemini-cli', 'no-auth.stderr.txt')
    const parsed = parseGeminiOutput(rawRun('', { stderr, exitCode: 41 }))
    expect(parsed.startupError).toBe('exit 41: Invalid auth method selected.')
    expect(parsed.selfReport).toBeNull()
  })

  it('a documented exit code without a message still says what it means', () => {
    expect(parseGeminiOutput(rawRun('', { exitCode: 42 })).startupError).toBe(
      'exit 42: input error (invalid prompt or arguments)',
    )
  })
})
