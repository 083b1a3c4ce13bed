import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  claudeBinary,
  claudeCodeAdapter,
  parseClaudeOutput,
  runningAsRoot,
} from '../../src/harnesses/claude-code.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('claude-code adapter', () => {
  const dirs = useAttemptDirs()

  it('points the Anthropic SDK at the bare origin, names the model for every alias, quiets traffic', async () => {
    const ctx = makeCtx(dirs, {
      model: 'claude-sonnet-4-5',
      api: 'anthropic',
      endpoint: { origin: 'http://127.0.0.1:4555/', apiKey: 'k1' },
    })
    const inv = await claudeCodeAdapter.prepare(fakeInstalled('claude-code', '/cache/cc/claude'), ctx)
    expect(JSON.parse(await readFile(path.join(dirs.home, '.claude', 'settings.json'), 'utf8'))).toEqual({
      permissions: { defaultMode: 'bypassPermissions' },
      includeCoAuthoredBy: false,
    })
    expect(inv.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
      '--model',
      'claude-sonnet-4-5',
      ctx.prompt,
    ])
    expect(inv.env).toMatchObject({
      CLAUDE_CONFIG_DIR: path.join(dirs.home, '.claude'),
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:4555',
      ANTHROPIC_API_KEY: 'k1',
      ANTHROPIC_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_SMALL_FAST_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_DEFAULT_SONNET_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_DEFAULT_OPUS_MODEL: 'claude-sonnet-4-5',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
    })
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'CLAUDE_CONFIG_DIR',
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_MODEL',
        'ANTHROPIC_SMALL_FAST_MODEL',
        'ANTHROPIC_DEFAULT_HAIKU_MODEL',
        'ANTHROPIC_DEFAULT_SONNET_MODEL',
        'ANTHROPIC_DEFAULT_OPUS_MODEL',
        'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
        'DISABLE_AUTOUPDATER',
        'DISABLE_TELEMETRY',
        'DISABLE_ERROR_REPORTING',
        'DISABLE_BUG_COMMAND',
        'CLAUDE_CODE_DISABLE_TERMINAL_TITLE',
        ...(runningAsRoot() ? ['IS_SANDBOX'] : []),
      ),
    )
    // As root, --dangerously-skip-permissions refuses to start without IS_SANDBOX=1.
    if (runningAsRoot()) expect(inv.env.IS_SANDBOX).toBe('1')
    expect(leaks(inv.env)).toEqual([])
  })

  it('runs the native binary from the platform package', () => {
    expect(claudeBinary('/r', { platform: 'linux', arch: 'x64', musl: false, avx2: true })).toBe(
      '/r/node_modules/@anthropic-ai/claude-code-linux-x64/claude',
    )
  })

  it('parses result.usage (fresh + cache = input), the answer, and leaves an unknown-basis cost out', async () => {
    const parsed = parseClaudeOutput(rawRun(await fixture('claude-code', 'success.jsonl')))
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 24525,
      output_tokens: 21,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: 2,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('keeps a listed-price cost and counts cache tokens into the input', () => {
    const result = {
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'ok',
      num_turns: 3,
      total_cost_usd: 0.1319,
      usage: {
        input_tokens: 100,
        cache_read_input_tokens: 900,
        cache_creation_input_tokens: 50,
        output_tokens: 7,
      },
      modelUsage: { 'claude-sonnet-4-5': { costBasis: 'list' } },
    }
    const parsed = parseClaudeOutput(rawRun(`${JSON.stringify(result)}\n`))
    expect(parsed.selfReport).toMatchObject({
      input_tokens: 1050,
      cache_read_tokens: 900,
      cache_write_tokens: 50,
      cost_usd: 0.1319,
    })
  })

  it('as root without IS_SANDBOX it refuses to start: a startup error with its message', async () => {
    const stderr = await fixture('claude-code', 'root-refused.stderr.txt')
    const parsed = parseClaudeOutput(rawRun('', { stderr, exitCode: 1 }))
    expect(parsed.startupError).toBe(
      'exit 1: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons',
    )
  })
})
