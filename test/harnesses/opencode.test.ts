import { existsSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hostTarget } from '../../src/harnesses/native.js'
import {
  OPENCODE_STUB,
  opencodeAdapter,
  opencodeBinary,
  opencodeSdk,
  parseOpencodeOutput,
} from '../../src/harnesses/opencode.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('opencode adapter', () => {
  const dirs = useAttemptDirs()

  it('renders opencode.json, the config-dir stub, and a run command without --title', async () => {
    const ctx = makeCtx(dirs, { model: 'claude-sonnet-4-5', api: 'anthropic' })
    const inv = await opencodeAdapter.prepare(fakeInstalled('opencode', '/cache/oc/bin/opencode'), ctx)
    const configDir = path.join(dirs.home, '.config', 'opencode')
    const config = JSON.parse(await readFile(path.join(configDir, 'opencode.json'), 'utf8'))
    expect(config).toMatchObject({
      autoupdate: false,
      share: 'disabled',
      model: 'hw/claude-sonnet-4-5',
      small_model: 'hw/claude-sonnet-4-5',
      enabled_providers: ['hw'],
      permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
    })
    expect(config.provider.hw.npm).toBe('@ai-sdk/anthropic')
    expect(config.provider.hw.options).toEqual({
      baseURL: 'http://127.0.0.1:4555/v1',
      apiKey: '{env:HW_API_KEY}',
    })
    expect(Object.keys(config.provider.hw.models)).toEqual(['claude-sonnet-4-5'])
    // The key is not written to disk: it is passed through the environment.
    expect(await readFile(path.join(configDir, 'opencode.json'), 'utf8')).not.toContain('sk-hw-attempt-1')
    expect(await readFile(path.join(configDir, 'package.json'), 'utf8')).toBe(OPENCODE_STUB['package.json'])
    expect(
      JSON.parse(await readFile(path.join(configDir, 'package-lock.json'), 'utf8')).packages[''].dependencies,
    ).toEqual({
      '@opencode-ai/plugin': '*',
    })
    expect((await stat(path.join(configDir, 'node_modules'))).isDirectory()).toBe(true)

    expect(inv.command).toBe('/cache/oc/bin/opencode')
    expect(inv.args).toEqual([
      'run',
      '--format',
      'json',
      '--auto',
      '--pure',
      '-m',
      'hw/claude-sonnet-4-5',
      '--dir',
      dirs.workspace,
    ])
    // the prompt travels unchanged on stdin (as an argument OpenCode would quote and escape it)
    expect(inv.stdin).toBe(ctx.prompt)
    expect(inv.args).not.toContain('--title')
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'OPENCODE_CONFIG',
        'HW_API_KEY',
        'OPENCODE_DISABLE_AUTOUPDATE',
        'OPENCODE_DISABLE_MODELS_FETCH',
        'OPENCODE_DISABLE_LSP_DOWNLOAD',
        'OPENCODE_DISABLE_DEFAULT_PLUGINS',
        'OPENCODE_DISABLE_SHARE',
      ),
    )
    expect(inv.env.OPENCODE_CONFIG).toBe(path.join(configDir, 'opencode.json'))
    expect(inv.env.HW_API_KEY).toBe('sk-hw-attempt-1')
    // Deliberately not set: they stop OpenCode reading the task repo's AGENTS.md / CLAUDE.md.
    expect(inv.env.OPENCODE_DISABLE_PROJECT_CONFIG).toBeUndefined()
    expect(inv.env.OPENCODE_DISABLE_CLAUDE_CODE).toBeUndefined()
    expect(leaks(inv.env)).toEqual([])
  })

  it('field case F14: config and data live in the fresh home, never the runner HOME', async () => {
    const ctx = makeCtx(dirs)
    const inv = await opencodeAdapter.prepare(fakeInstalled('opencode', '/cache/oc/bin/opencode'), ctx)
    for (const k of ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME']) {
      expect(inv.env[k]?.startsWith(dirs.home)).toBe(true)
    }
    // Only the route's provider is enabled, so a stored vendor login cannot take the requests.
    const config = JSON.parse(await readFile(inv.env.OPENCODE_CONFIG!, 'utf8'))
    expect(config.enabled_providers).toEqual(['hw'])
  })

  it('lets the cell add --title and replace files on purpose', async () => {
    const ctx = makeCtx(dirs, {
      config: {
        args: ['--title', 'fixed'],
        env: { OPENCODE_EXPERIMENTAL: '1' },
        pass_env: [],
        files: { '.config/opencode/AGENTS.md': 'x' },
      },
    })
    const inv = await opencodeAdapter.prepare(fakeInstalled('opencode', '/cache/oc/bin/opencode'), ctx)
    expect(inv.args.slice(-2)).toEqual(['--title', 'fixed'])
    expect(inv.env.OPENCODE_EXPERIMENTAL).toBe('1')
    expect(existsSync(path.join(dirs.home, '.config/opencode/AGENTS.md'))).toBe(true)
  })

  it('picks the SDK package per wire API and the native binary its postinstall would pick', () => {
    expect(opencodeSdk('chat')).toBe('@ai-sdk/openai-compatible')
    expect(opencodeSdk('responses')).toBe('@ai-sdk/openai')
    expect(opencodeSdk('anthropic')).toBe('@ai-sdk/anthropic')
    const root = '/nowhere'
    const t = { ...hostTarget(), platform: 'linux', arch: 'x64', musl: false }
    expect(opencodeBinary(root, { ...t, avx2: true })).toBe(
      '/nowhere/node_modules/opencode-linux-x64/bin/opencode',
    )
    expect(opencodeBinary(root, { ...t, avx2: false })).toBe(
      '/nowhere/node_modules/opencode-linux-x64-baseline/bin/opencode',
    )
    expect(opencodeBinary(root, { ...t, musl: true, avx2: true })).toBe(
      '/nowhere/node_modules/opencode-linux-x64-musl/bin/opencode',
    )
  })

  it('parses step_finish tokens (the title call is not among them) and the text answer', async () => {
    const parsed = parseOpencodeOutput(rawRun(await fixture('opencode', 'success.jsonl')), false)
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 15469,
      output_tokens: 21,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: 2,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('turns an unreachable endpoint into a startup error with the API message', async () => {
    const parsed = parseOpencodeOutput(
      rawRun(await fixture('opencode', 'no-server.jsonl'), { exitCode: 1 }),
      false,
    )
    expect(parsed.selfReport).toBeNull()
    expect(parsed.startupError).toBe(
      'exit 1: Cannot connect to API: Unable to connect. Is the computer able to access the url?',
    )
  })
})
