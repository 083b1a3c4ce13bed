import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { codexAdapter, codexBinary, parseCodexOutput } from '../../src/harnesses/codex.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('codex adapter', () => {
  const dirs = useAttemptDirs()

  it('renders config.toml with the Responses provider and every quieting switch; stdin stays closed', async () => {
    const ctx = makeCtx(dirs, { model: 'gpt-5-codex', api: 'responses' })
    const inv = await codexAdapter.prepare(fakeInstalled('codex', '/cache/codex/bin/codex'), ctx)
    const toml = parseToml(await readFile(path.join(dirs.home, '.codex', 'config.toml'), 'utf8'))
    expect(toml).toEqual({
      model: 'gpt-5-codex',
      model_provider: 'hw',
      approval_policy: 'never',
      sandbox_mode: 'danger-full-access',
      check_for_update_on_startup: false,
      model_providers: {
        hw: {
          name: 'Harness Watch route',
          base_url: 'http://127.0.0.1:4555/v1',
          env_key: 'HW_API_KEY',
          wire_api: 'responses',
          request_max_retries: 0,
          stream_max_retries: 0,
        },
      },
      analytics: { enabled: false },
      feedback: { enabled: false },
      features: { plugins: false, remote_plugin: false, apps: false },
    })
    expect(inv.args).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '-C',
      dirs.workspace,
      ctx.prompt,
    ])
    // undefined stdin = /dev/null: an open stdin would be appended to the prompt.
    expect(inv.stdin).toBeUndefined()
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys('CODEX_HOME', 'HW_API_KEY', 'CODEX_MANAGED_BY_NPM', 'CODEX_MANAGED_PACKAGE_ROOT'),
    )
    expect(inv.env.CODEX_HOME).toBe(path.join(dirs.home, '.codex'))
    expect(inv.env.HW_API_KEY).toBe('sk-hw-attempt-1')
    expect(leaks(inv.env)).toEqual([])
  })

  it('finds the native binary in the npm-alias optional dependency', () => {
    expect(codexBinary('/r', { platform: 'linux', arch: 'x64', musl: false, avx2: true })).toBe(
      '/r/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
    )
    expect(codexBinary('/r', { platform: 'darwin', arch: 'arm64', musl: false, avx2: false })).toBe(
      '/r/node_modules/@openai/codex-darwin-arm64/vendor/aarch64-apple-darwin/bin/codex',
    )
  })

  it('parses turn.completed usage and ignores the unknown-model warning item', async () => {
    const parsed = parseCodexOutput(rawRun(await fixture('codex', 'success.jsonl')))
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 20431,
      output_tokens: 22,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: null,
      turns: 1,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('a run that never reached the model reports the reconnect errors, not usage', async () => {
    const parsed = parseCodexOutput(rawRun(await fixture('codex', 'no-server.jsonl'), { exitCode: 1 }))
    expect(parsed.selfReport).toBeNull()
    expect(parsed.startupError).toMatch(/^exit 1: Reconnecting\.\.\. waiting for network/)
  })
})
